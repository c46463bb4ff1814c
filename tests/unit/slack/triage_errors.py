"""`/triage` words the grammar refuses, with what its answer must say: read by the grammar's unit test and by the
end-to-end test that sends them to the running bot."""

LIVE_ERRORS = [
    ("Checkout_Svc shop", "not a valid Kubernetes name"),
    ("checkout Shop", "namespace 'Shop' is not a valid name"),
    ("checkout shop 9w", "duration '9w' is not understood"),
    ("checkout shop 30d", "out of range"),
    ("deploy/ok shop 1h extra", "expected a target"),
    ("checkout --bogus", "unknown option"),
    ("checkout shop -n ml", "the namespace is given twice"),
    ("checkout -n", "`-n` needs a value"),
]
