"""Secrets never leave the process, and redaction keeps line numbers."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.redact import MASK, redact_json, redact_text


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
        ('curl -H "Authorization: Basic dXNlcjpwYXNz" http://x', "dXNlcjpwYXNz"),
        ("DB_PASSWORD=hunter2hunter2", "hunter2hunter2"),
        ("      AWS_SECRET_ACCESS_KEY:  wJalrXUtnFEMI/K7MDENG", "wJalrXUtnFEMI/K7MDENG"),
        ('{"name": "SLACK_BOT_TOKEN", "value": "xoxb-1111-2222-abcdefgh"}', "xoxb-1111-2222-abcdefgh"),
        ("postgresql://bot:s3cr3tpw@db.internal:5432/triage", "s3cr3tpw"),
        ("token xoxb-123456789012-abcdefghijkl in a log", "xoxb-123456789012-abcdefghijkl"),
        ("key AKIAIOSFODNN7EXAMPLE used", "AKIAIOSFODNN7EXAMPLE"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36P ok",
         "SflKxwRJSMeKKF2QT4fwpMeJf36P"),
        ("api_key: 'abc123def456'", "abc123def456"),
    ],
)
def test_secret_is_masked(line: str, secret: str) -> None:
    out = redact_text(line)
    assert secret not in out
    assert MASK in out


def test_env_value_on_the_next_line_of_pretty_json_and_yaml() -> None:
    text = '          {\n            "name": "DB_PASSWORD",\n            "value": "hunter2"\n          },\n' \
           '          {\n            "name": "RANK",\n            "value": "0"\n          }'
    out = redact_text(text)
    assert "hunter2" not in out and '"value": "0"' in out
    yaml_text = "    env:\n    - name: API_TOKEN\n      value: abc.def.ghi\n    - name: WORLD_SIZE\n      value: \"4\""
    out = redact_text(yaml_text)
    assert "abc.def.ghi" not in out and 'value: "4"' in out


def test_private_key_block_keeps_line_count() -> None:
    text = "before\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA\n-----END RSA PRIVATE KEY-----\nafter"
    out = redact_text(text)
    assert out.split("\n") == ["before", "-----BEGIN RSA PRIVATE KEY-----", MASK, MASK,
                               "-----END RSA PRIVATE KEY-----", "after"]


@pytest.mark.parametrize(
    "line",
    [
        "NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        "Reason:       OOMKilled",
        "trainer-0:52:52 [0] NCCL INFO NET/Socket : Using [0]eth0:10.244.1.5<0>",
        "0/10 nodes are available: 10 Insufficient nvidia.com/gpu.",
        "max_over_time(container_memory_working_set_bytes{namespace=\"ml\"}[1h])",
    ],
)
def test_evidence_is_untouched(line: str) -> None:
    assert redact_text(line) == line


@given(st.text(max_size=300))
def test_line_count_is_preserved(text: str) -> None:
    assert redact_text(text).count("\n") == text.count("\n")


def test_a_tree_that_repeats_a_string_has_every_copy_masked() -> None:
    # redact_json redacts each distinct short string once per tree (collectors/redact.py, _redact_string).
    line = "Authorization: Bearer abcdefghijklmnop1234"
    long_line = "x" * 300 + " " + line
    out = redact_json({"a": [line, line, "plain"], "b": {"c": line, line: "k"}, "d": [long_line, long_line]})
    masked = redact_text(line)
    assert "abcdefghijklmnop1234" not in masked
    assert out["a"] == [masked, masked, "plain"]
    assert out["b"] == {"c": masked, masked: "k"}
    assert out["d"] == [redact_text(long_line)] * 2 and "abcdefghijklmnop1234" not in out["d"][0]
