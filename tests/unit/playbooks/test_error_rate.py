"""The error-rate playbook: what changed, what fails behind the service, and where the errors sit."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires, judge, rendered_cleanly

PLAYBOOK = "error-rate"


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


@pytest.mark.parametrize(("facts", "expected"), [
    ({"rollout.recent": True, "http.error_statuses": [502]}, "likely"),
    ({"rollout.recent": True, "http.error_statuses": [503]}, "unknown"),  # not the refused-upstream status
    ({"http.error_statuses": [502]}, "unknown"),  # a 502 alone: the app or its own proxy may answer it
], ids=["502-in-rollout", "503-in-rollout", "502-alone"])
def test_a_502_during_a_rollout_is_a_connection_to_a_pod_being_replaced(facts: dict[str, Any], expected: str) -> None:
    by_id = {h.id: h for h in judge(PLAYBOOK, facts).hypotheses}
    assert by_id["backend-connection-failures"].status == expected
