"""The error-rate playbook: what changed, what fails behind the service, and where the errors sit."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import check_case, fires, judge, rendered_cleanly

PLAYBOOK = "error-rate"
TOP_LEVEL = ["bad-rollout", "failing-dependency", "restarts-behind-errors", "overload", "gpu-node-fault",
             "dropped-connections"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("canary-fails-alone",
     {"http.error_ratio": 0.011, "http.failing_version": "v2", "rollout.recent": True, "container.restart_count": 0,
      "traffic.increase_ratio": 1.0, "hpa.at_max": False},
     {"bad-rollout": "confirmed", "restarts-behind-errors": "ruled-out", "overload": "ruled-out"}, "bad-rollout"),
    ("rollout-without-version-split-is-likely",
     {"http.error_ratio": 0.05, "rollout.recent": True}, {"bad-rollout": "likely"}, "bad-rollout"),
    ("redis-refuses",
     {"http.error_ratio": 0.2, "app.errors": ["connection-refused"], "rollout.recent": False,
      "container.restart_count": 0},
     {"failing-dependency": "confirmed", "bad-rollout": "ruled-out", "restarts-behind-errors": "ruled-out"},
     "failing-dependency"),
    ("oom-kills-behind-errors",
     {"http.error_ratio": 0.04, "container.last_terminated.reason": "OOMKilled", "container.restart_count": 4},
     {"restarts-behind-errors": "confirmed"}, "restarts-behind-errors"),
    ("traffic-4x-hpa-at-max",
     {"http.error_ratio": 0.03, "traffic.increase_ratio": 4.0, "hpa.at_max": True},
     {"overload": "confirmed"}, "overload"),
    ("ecc-on-one-node",
     {"http.error_ratio": 0.15, "gpu.ecc_dbe": 2, "xid.primary_codes": [48]},
     {"gpu-node-fault": "confirmed"}, "gpu-node-fault"),
    ("conntrack-full",
     {"http.error_ratio": 0.02, "conntrack.table_full": True, "conntrack.drops": 5000},
     {"dropped-connections": "confirmed"}, "dropped-connections"),
]


@pytest.mark.parametrize(("facts", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(facts: dict[str, Any], expected: dict[str, str], lead: str) -> None:
    check_case(PLAYBOOK, TOP_LEVEL, facts, expected, lead)


def test_error_ratio_alone_leaves_everything_open() -> None:
    finding = judge(PLAYBOOK, {"http.error_ratio": 0.08})
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    by_id = {h.id: h for h in finding.hypotheses}
    assert "rollout.recent" in by_id["bad-rollout"].needs
    assert any('destination_service_name="checkout"' in c for c in by_id["bad-rollout"].next_checks)
    assert rendered_cleanly(finding)


@pytest.mark.parametrize(("facts", "expected"), [
    ({"alert.symptoms": ["error-rate"]}, True),
    ({"http.error_ratio": 0.05}, True),
    ({"http.error_ratio": 0.001}, False),
    ({"rollout.recent": True}, False),
], ids=["alert", "ratio", "noise", "rollout-alone"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
