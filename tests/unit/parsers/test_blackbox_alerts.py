"""Round 13 (issue #24, class a): an alert of one's own on a blackbox_exporter probe (alerts.yaml: a *Down,
*Unreachable* or *ProbeFail* alert whose job is a probing job) is a target that did not answer: service-unreachable.
Real paste: first_sight_pastes.yaml (with its thread)."""

from __future__ import annotations

import pytest

from collectors.catalogs.alert_map import symptom_for
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, first_facts


def test_a_blackbox_down_alert_in_a_github_issue_table_is_service_unreachable() -> None:
    facts = first_facts(FIRST_SIGHT_PASTES["homelab-3128-github-html-ingressdown-blackbox"])
    assert facts.get("alert.names") == ["IngressDown"]
    assert facts.get("alert.symptoms") == ["service-unreachable"]


@pytest.mark.parametrize(("name", "job", "symptom"), [
    ("IngressDown", "ingress-blackbox", "service-unreachable"),
    ("WebsiteUnreachable", "blackbox-http", "service-unreachable"),
    ("EndpointProbeFailed", "probe-https", "service-unreachable"),
    # A blackbox job's certificate or slow-probe alert is not a target down.
    ("BlackboxSslCertificateWillExpireSoon", "blackbox", None),
    ("BlackboxProbeSlowHttp", "blackbox", None),
    # A "Down" alert of another job says nothing of a probe: left to the other rules (none maps this one).
    ("IngressDown", "ingress-nginx", None),
])
def test_only_a_probe_that_failed_maps_to_service_unreachable(name: str, job: str, symptom: str | None) -> None:
    assert symptom_for(name, {"alertname": name, "job": job}) == symptom
