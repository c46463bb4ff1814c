"""Round 13 (issue #24, class a): the Grafana stack's write path (Cortex, Mimir, Loki, Tempo and promtail) read
from real pastes (first_sight_pastes.yaml, each with its thread). The catalog's templates are rendered in
test_k8s_wordings.py; here: what each real paste gives, and what a generic error near it does not."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, joined_facts


@pytest.mark.parametrize(("paste", "kinds", "statuses"), [
    ("helm-charts-610-promtail-429-ingestion-rate-limit-no-tenant", ["overflow"], None),
    ("loki-4204-promtail-429-stream-rate-limit", ["overflow"], None),
    ("loki-1199-promtail-final-error-429", ["overflow"], None),
    ("k8s-cookbook-461-prometheus-remote-write-mimir-429", ["overflow"], None),
    ("tempo-4102-pusher-instances-count-zero", ["no-upstream"], None),
    ("tempo-995-pusher-live-traces-and-canceled", ["overflow"], None),
])
def test_a_refused_write_is_a_failed_request_and_says_how(paste: str, kinds: list[str],
                                                          statuses: list[int] | None) -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES[paste])
    assert facts.get("http.failure_kinds") == kinds
    assert facts.get("http.error_statuses") == statuses
    assert "error-rate" in facts.get("evidence.symptoms", [])  # type: ignore[operator]


@pytest.mark.parametrize("line", [
    # A canceled push, a promtail batch the server could not be reached for (status=-1), a 4xx the client caused,
    # and a middleware line for a request that succeeded: none is a failing server by itself.
    'level=error caller=rate_limited_logger.go:27 msg="pusher failed to consume trace data" err="context canceled"',
    'level=warn caller=client.go:349 component=client host=loki:3100 msg="error sending batch, will retry" '
    'status=-1 error="Post \\"http://loki:3100/loki/api/v1/push\\": dial tcp: lookup loki: no such host"',
    'level=error caller=client.go:430 msg="final error sending batch" status=400 error="server returned HTTP status '
    '400 Bad Request (400): entry out of order"',
    'level=debug msg="POST /api/v1/push (200) 1.2ms"',
    'rpc error: code = DeadlineExceeded desc = context deadline exceeded',
])
def test_a_generic_or_client_error_near_the_write_path_is_not_a_failing_server(line: str) -> None:
    facts = joined_facts(line)
    assert "http.failure_kinds" not in facts
    assert "http.error_statuses" not in facts
    assert "error-rate" not in (facts.get("evidence.symptoms") or [])  # type: ignore[operator]
