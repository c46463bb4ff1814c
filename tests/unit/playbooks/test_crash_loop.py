"""The crash-loop playbook beyond its case table (playbooks/cases/crash-loop.yaml).

Who ends the container decides the branch: an exit 137 with reason Error after a failed liveness probe is the
kubelet, not the application and not the OOM killer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.report import Finding, Target
from tests.unit.playbooks.table import fires, linted_with_sources
from tests.unit.playbooks.verdicts import statuses as _statuses

PLAYBOOK = "crash-loop"
TOP_LEVEL = ["app-error", "bad-config", "dependency-unreachable", "oom-loop", "liveness-probe-kill",
             "corrupt-model-artifact", "gpu-fault", "failures-on-one-node"]
LOOPING = {"container.waiting.reason": "CrashLoopBackOff", "container.restart_count": 7}


def test_gpu_fault_on_the_pods_own_node_is_confirmed(make_facts: Callable[..., FactSet],
                                                      judge: Callable[..., Finding]) -> None:
    node_facts = {"xid.codes": [79], "xid.primary_codes": [79], "gpu.fallen_off_bus": True}
    situation = {**LOOPING, "container.last_terminated.reason": "Error", "pod.gpu_request": 8,
                 "pod.node": "gpu-node-7", **node_facts}
    on_node = make_facts(situation, subjects=dict.fromkeys(node_facts, "node/gpu-node-7"))
    elsewhere = make_facts(situation, subjects=dict.fromkeys(node_facts, "node/gpu-node-2"))
    assert _statuses(judge(PLAYBOOK, on_node))["gpu-fault"] == "confirmed"
    assert _statuses(judge(PLAYBOOK, elsewhere))["gpu-fault"] == "likely"


def test_liveness_kill_outranks_the_oom_playbook(make_facts: Callable[[dict[str, Any]], FactSet],
                                                 judge: Callable[..., Finding]) -> None:
    """A probe kill seen by both playbooks: crash-loop confirms it, oom-killed confirms nothing."""
    facts = make_facts({**LOOPING, "container.last_terminated.reason": "Error",
                        "container.last_terminated.exit_code": 137, "container.liveness_killed": True})
    crash = judge(PLAYBOOK, facts)
    assert crash.hypotheses[0].id == "liveness-probe-kill" and crash.hypotheses[0].status == "confirmed"
    oom = judge("oom-killed", facts)
    assert all(h.status not in ("confirmed", "likely") for h in oom.hypotheses)


def test_oom_loop_defers_to_the_oom_playbook(make_facts: Callable[[dict[str, Any]], FactSet],
                                             judge: Callable[..., Finding]) -> None:
    facts = make_facts({**LOOPING, "container.last_terminated.reason": "OOMKilled",
                        "container.last_terminated.exit_code": 137, "kernel.oom_memcg": True})
    loop = next(h for h in judge(PLAYBOOK, facts).hypotheses if h.id == "oom-loop")
    limit = next(h for h in judge("oom-killed", facts).hypotheses if h.id == "limit-too-low")
    assert loop.status == limit.status == "confirmed"
    assert limit.score > loop.score


@pytest.mark.parametrize(("facts", "expected"), [
    ({"container.waiting.reason": "CrashLoopBackOff"}, True),
    ({"container.restart_count": 5, "container.last_terminated.reason": "Error"}, True),
    ({"alert.symptoms": ["crash-loop"]}, True),
    ({"container.waiting.reason": "ImagePullBackOff", "container.restart_count": 0}, False),
    ({"container.restart_count": 1, "container.last_terminated.reason": "Completed"}, False),
    # A last state with a non-zero exit and a restart is the loop, whatever the code (kubernetes#82519: exit 3).
    ({"container.restart_count": 2, "container.last_terminated.reason": "Error",
      "container.last_terminated.exit_code": 3}, True),
    ({"container.restart_count": 2, "container.last_terminated.exit_code": 1}, True),
    # One restart after a non-zero exit can be a one-off (kubernetes#68286: the node's disk filled once).
    ({"container.restart_count": 1, "container.last_terminated.reason": "Error",
      "container.last_terminated.exit_code": 2}, False),
    ({"container.restart_count": 1, "container.last_terminated.reason": "Completed",
      "container.last_terminated.exit_code": 0}, False),
    # The memory cgroup's kill is oom-killed's; a node restarted under the container (Unknown, 255) is no loop.
    ({"container.restart_count": 2, "container.last_terminated.reason": "OOMKilled",
      "container.last_terminated.exit_code": 137}, False),
    ({"container.restart_count": 2, "container.last_terminated.reason": "Unknown",
      "container.last_terminated.exit_code": 255}, False),
    # A non-zero exit with no restart recorded: a Job's pod that failed once, not a loop.
    ({"container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 1}, False),
], ids=["backoff", "restarts", "alert", "image-pull", "one-restart", "exit-3-two-restarts", "exit-1-two-restarts",
        "exit-2-one-restart",
        "exit-0-one-restart", "oom-one-restart", "node-restart-unknown", "no-restart"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_checks_are_rendered_for_the_subject(make_facts: Callable[[dict[str, Any]], FactSet],
                                             judge: Callable[..., Finding]) -> None:
    target = Target(namespace="serving", pod="triton-llm-7f9c4d8b6-m2xkp", node="gpu-node-11")
    facts = make_facts({**LOOPING, "container.name": "triton", "container.last_terminated.reason": "Error",
                        "container.last_terminated.exit_code": 137, "container.liveness_killed": True})
    finding = judge(PLAYBOOK, facts, target)
    probe = finding.hypotheses[0]
    assert probe.id == "liveness-probe-kill"
    unhealthy = ("kubectl get events -n serving --field-selector "
                 "involvedObject.name=triton-llm-7f9c4d8b6-m2xkp,reason=Unhealthy")
    assert unhealthy in probe.next_checks
    assert any('kube_pod_container_status_restarts_total{namespace="serving",pod="triton-llm-7f9c4d8b6-m2xkp"}' in c
               for c in probe.next_checks)
    assert any("startupProbe" in m for m in probe.mitigations)
    for h in finding.hypotheses:
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text and "<pod>" not in text and "<container>" not in text


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    compiled = linted_with_sources(PLAYBOOK)
    assert [h.id for h in compiled.spec.hypotheses] == TOP_LEVEL
