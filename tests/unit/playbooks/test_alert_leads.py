"""In a triage an alert started, the alert's own symptom leads (issue #24, point 3; playbooks.pipeline.alert_leads).

Facts stand in for what a live triage collected; tests/integration/test_alert_leads.py runs the same through the
Kubernetes API stand-in.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from bot.runner.jobs import TriageRequest
from collectors.factset import FactSet
from playbooks.pipeline import ALSO_ON_NODE, alert_leads, conclude, default_playbooks
from playbooks.report import Finding, Target
from tests.unit.playbooks.conftest import build_facts

# Another workload's OOM kill and the alert's own Xid 79, as a node triage reads them.
OOM_AND_XID: dict[str, Any] = {"container.last_terminated.reason": "OOMKilled",
                               "container.last_terminated.exit_code": 137, "xid.codes": [79]}
NODE = Target(service="node/gpu-node-2", node="gpu-node-2")
POD = Target(namespace="ml", service="pod/trainer-0", pod="trainer-0")


def _findings(facts: dict[str, Any], target: Target, leads: list[str]) -> list[Finding]:
    fact_set: FactSet = build_facts(facts)
    return alert_leads(conclude(fact_set, target, default_playbooks(), leads), leads, target)


def _leader(findings: list[Finding]) -> str | None:
    for f in findings:
        if not f.aside and any(h.supported for h in f.hypotheses):
            return f.playbook
    return None


def test_on_a_node_the_alerts_playbook_leads_and_the_rest_is_context() -> None:
    findings = _findings(OOM_AND_XID, NODE, ["gpu-xid"])
    assert findings[0].playbook == "gpu-xid" and findings[0].aside is None
    assert {f.playbook: f.aside for f in findings[1:]}.get("oom-killed") == ALSO_ON_NODE
    assert _leader(findings) == "gpu-xid"


def test_on_a_node_another_workloads_finding_never_leads_even_alone() -> None:
    findings = _findings({"container.last_terminated.reason": "OOMKilled",
                          "container.last_terminated.exit_code": 137}, NODE, ["gpu-xid"])
    assert _leader(findings) is None
    assert all(f.aside == ALSO_ON_NODE for f in findings if f.playbook != "gpu-xid")


def test_for_a_workload_the_alerts_playbook_leads_only_with_support() -> None:
    with_xid = _findings(OOM_AND_XID, POD, ["gpu-xid"])
    assert with_xid[0].playbook == "gpu-xid" and all(f.aside is None for f in with_xid)
    # Nothing supports the alert's own playbook: the workload's other findings keep their rank (same workload).
    without = _findings({"container.last_terminated.reason": "OOMKilled",
                         "container.last_terminated.exit_code": 137}, POD, ["gpu-xid"])
    assert _leader(without) == "oom-killed"


def test_without_an_alert_nothing_changes() -> None:
    fact_set = build_facts(OOM_AND_XID)
    plain = conclude(fact_set, NODE, default_playbooks())
    assert [f.playbook for f in alert_leads(list(plain), [], NODE)] == [f.playbook for f in plain]
    assert all(f.aside is None for f in plain)


def test_the_alert_travels_with_its_triage_job() -> None:
    alert = {"status": "firing", "alerts": [{"status": "firing", "labels": {"alertname": "GPUXidError",
                                                                             "err_code": "79"}}]}
    request = TriageRequest(target=NODE, since=timedelta(minutes=30), trigger="alert", channel="C1", key="k",
                            parent_key=None, symptoms=["gpu-xid"], alert=alert)
    assert TriageRequest.from_json(request.to_json()).alert == alert
    old = request.to_json()
    del old["alert"]  # a job queued by a bot from before this field
    assert TriageRequest.from_json(old).alert == {}
