"""Two playbooks reading the same fact: the situation decides which one leads (issue #29's findings), not which
playbook saw the word first. Judged by `conclude`, as a report ranks its findings."""

from __future__ import annotations

from typing import Any

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import events
from playbooks.pipeline import conclude, default_playbooks
from playbooks.report import Target
from tests.unit.playbooks.conftest import build_facts

TARGET = Target(namespace="research", pod="nightly-eval-llama-4bq7t", service="nightly-eval-llama")


def _lead(facts: dict[str, Any], target: Target = TARGET) -> tuple[str, str] | None:
    findings = conclude(build_facts(facts), target, default_playbooks())
    for finding in findings:
        supported = [h for h in finding.hypotheses if h.supported]
        if supported:
            best = max(supported, key=lambda h: h.score)
            return finding.playbook, best.id
    return None


PREEMPTED = {"scheduling.preempted": True, "scheduling.failed": True,
             "scheduling.reasons": ["insufficient-gpu", "preemption-not-helpful"], "pod.gpu_request": 4,
             "events.reasons": ["Preempted", "Killing", "FailedScheduling"]}


def test_a_preempted_pod_that_waits_again_is_a_pending_problem() -> None:
    assert _lead({**PREEMPTED, "pod.phase": "Pending"}) == ("pending", "preempted")


def test_a_preempted_pod_that_is_gone_is_evicted_s() -> None:
    assert _lead({**PREEMPTED, "pod.phase": "Failed"}) == ("evicted", "preemption")


def test_an_error_rate_in_front_of_an_empty_service_has_one_lead_in_error_rate() -> None:
    target = Target(namespace="shop", service="checkout")
    facts = {"http.error_ratio": 0.42, "http.error_statuses": [503], "endpoints.ready": 0, "endpoints.not_ready": 2}
    findings = conclude(build_facts(facts), target, default_playbooks())
    assert _lead(facts, target) == ("error-rate", "no-ready-backends")
    joined = {(f.playbook, h.id): h.merged_into for f in findings for h in f.hypotheses}
    assert joined[("service-unreachable", "no-ready-endpoints")] == "error-rate"
    assert joined[("service-unreachable", "readiness-failing")] == "error-rate"  # its refinement goes with it


def test_an_empty_service_without_an_error_rate_stays_service_unreachable_s() -> None:
    target = Target(namespace="shop", service="checkout")
    assert _lead({"endpoints.ready": 0, "endpoints.not_ready": 2}, target) == ("service-unreachable",
                                                                                "readiness-failing")


def test_a_scale_to_zero_supports_no_ready_backends_not_a_bad_rollout() -> None:
    # The deployment controller's ScalingReplicaSet row (pkg/controller/deployment/sync.go), rendered: the only
    # replica set emptied, none scaled up. It is a scale-down, not a rollout (finding 29.5).
    text = ("LAST SEEN   TYPE     REASON              OBJECT           MESSAGE\n"
            "3m          Normal   ScalingReplicaSet   deployment/web   "
            "Scaled down replica set web-7f98c7b879 to 0 from 3\n")
    parsed = events.parse(Artifact(id="ev", kind=ArtifactKind.EVENTS, content=text))
    facts = {f.name: f.value for f in parsed.facts if f.name != "events.reasons"}
    assert facts == {"rollout.scaled_to_zero": True}
    target = Target(namespace="shop", service="web")
    findings = conclude(build_facts({**facts, "http.error_ratio": 0.42, "http.error_statuses": [503]}), target,
                        default_playbooks())
    statuses = {(f.playbook, h.id): h.status for f in findings for h in f.hypotheses}
    assert statuses[("error-rate", "bad-rollout")] == "unknown"
    assert _lead({**facts, "http.error_ratio": 0.42, "http.error_statuses": [503]}, target) == (
        "error-rate", "no-ready-backends")
