"""The service-unreachable playbook: from the Service's endpoints down to the path and the name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires, judge, rendered_cleanly

PLAYBOOK = "service-unreachable"


def test_children_are_not_explored_when_endpoints_are_ready() -> None:
    finding = judge(PLAYBOOK, {"endpoints.ready": 4, "endpoints.not_ready": 0})
    assert "selector-matches-nothing" not in {h.id for h in finding.hypotheses}


def test_the_selector_is_named_in_the_claim() -> None:
    finding = judge(PLAYBOOK, {"endpoints.ready": 0, "endpoints.not_ready": 0, "service.has_selector": True,
                               "service.selector": "app=checkout-api"})
    child = next(h for h in finding.hypotheses if h.id == "selector-matches-nothing")
    assert "app=checkout-api" in child.claim
    assert "kubectl get pods -n ml --show-labels" in child.next_checks
    assert rendered_cleanly(finding)


@pytest.mark.parametrize(("facts", "expected"), [
    ({"alert.symptoms": ["service-unreachable"]}, True),
    ({"endpoints.ready": 0}, True),
    ({"proxy.sync_failed": True}, True),
    ({"endpoints.ready": 3}, False),
    ({"dns.errors": True}, False),
], ids=["alert", "no-endpoints", "proxy", "healthy-endpoints", "dns-alone"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
