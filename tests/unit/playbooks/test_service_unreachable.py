"""The service-unreachable playbook: from the Service's endpoints down to the path and the name."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import check_case, fires, judge, rendered_cleanly

PLAYBOOK = "service-unreachable"
TOP_LEVEL = ["no-ready-endpoints", "network-policy", "kube-proxy-rules", "dns", "port-mismatch", "hairpin"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("selector-typo",
     {"endpoints.ready": 0, "endpoints.not_ready": 0, "service.has_selector": True,
      "service.selector": "app=checkout-api"},
     {"no-ready-endpoints": "confirmed", "selector-matches-nothing": "confirmed", "readiness-failing": "ruled-out",
      "port-mismatch": "unknown"},
     "selector-matches-nothing"),
    ("all-pods-unready",
     {"endpoints.ready": 0, "endpoints.not_ready": 3, "probe.failures": ["readiness"], "netpol.count": 0},
     {"no-ready-endpoints": "confirmed", "readiness-failing": "confirmed", "selector-matches-nothing": "ruled-out",
      "network-policy": "ruled-out"},
     "readiness-failing"),
    ("policy-blocks-client",
     {"endpoints.ready": 3, "netpol.count": 2, "netpol.restricts_pods": True,
      "app.errors": ["connection-timeout"]},
     {"no-ready-endpoints": "ruled-out", "network-policy": "likely"}, "network-policy"),
    ("kube-proxy-sync-failed",
     {"endpoints.ready": 2, "proxy.sync_failed": True}, {"no-ready-endpoints": "ruled-out",
                                                         "kube-proxy-rules": "confirmed"}, "kube-proxy-rules"),
    ("name-does-not-resolve",
     {"endpoints.ready": 2, "dns.errors": True}, {"no-ready-endpoints": "ruled-out", "dns": "confirmed"}, "dns"),
    ("target-port-wrong",
     {"endpoints.ready": 2, "app.errors": ["connection-refused"], "dns.errors": False, "dns.error_ratio": 0.0},
     {"no-ready-endpoints": "ruled-out", "port-mismatch": "likely", "dns": "ruled-out"}, "port-mismatch"),
    ("hairpin-off",
     {"kubelet.hairpin_mode": "none"}, {"hairpin": "likely"}, "hairpin"),
]


@pytest.mark.parametrize(("facts", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(facts: dict[str, Any], expected: dict[str, str], lead: str) -> None:
    check_case(PLAYBOOK, TOP_LEVEL, facts, expected, lead)


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
