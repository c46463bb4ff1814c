"""The oom-killed playbook beyond its case table (playbooks/cases/oom-killed.yaml).

The negative cases matter most: an exit code 137
that is not OOMKilled (a liveness-probe kill) is not an OOM, and an eviction is not an OOM kill.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.engine import triggered
from playbooks.loader import PLAYBOOK_DIR, check_file
from playbooks.report import Finding, Target
from tests.unit.playbooks.table import fires, linted_with_sources
from tests.unit.playbooks.verdicts import statuses as _statuses

PLAYBOOK = "oom-killed"
TOP_LEVEL = ["limit-too-low", "node-oom", "kubelet-eviction", "shm-too-small", "gpu-oom", "memory-leak"]
GiB = 1024**3


LIVENESS_KILLS: list[dict[str, Any]] = [
    {"container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 137},
    {"container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 137,
     "container.liveness_killed": True, "probe.failures": ["liveness"], "container.restart_count": 6,
     "container.waiting.reason": "CrashLoopBackOff", "events.reasons": ["Unhealthy", "Killing", "BackOff"]},
    {"container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 137,
     "container.liveness_killed": True, "memory.working_set_ratio": 0.55, "pod.gpu_request": 1,
     "pod.qos_class": "Burstable", "pod.phase": "Running"},
]


@pytest.mark.parametrize(("facts", "runs"), list(zip(LIVENESS_KILLS, [True, False, False], strict=True)),
                         ids=["137-error", "137-liveness-events", "137-liveness-metrics"])
def test_exit_137_without_oomkilled_is_not_an_oom(make_facts: Callable[[dict[str, Any]], FactSet],
                                                  judge: Callable[..., Finding], facts: dict[str, Any],
                                                  runs: bool) -> None:
    compiled, _ = check_file(PLAYBOOK_DIR / f"{PLAYBOOK}.yaml")
    assert compiled is not None
    # A bare 137 runs the playbook to ask whether it was the OOM killer (issue 24); a kill the kubelet is shown
    # making for a failed liveness probe has its sender and does not.
    assert triggered(compiled, make_facts(facts).cel_context()) is runs
    # Even when someone forces the playbook, nothing in it may be confirmed or even likely.
    statuses = _statuses(judge(PLAYBOOK, make_facts(facts)))
    assert not [hid for hid, s in statuses.items() if s in ("confirmed", "likely")], statuses


def test_liveness_kill_with_metrics_rules_out_the_limit(make_facts: Callable[[dict[str, Any]], FactSet],
                                                         judge: Callable[..., Finding]) -> None:
    statuses = _statuses(judge(PLAYBOOK, make_facts(LIVENESS_KILLS[2])))
    assert statuses["limit-too-low"] == "ruled-out"


def test_missing_evidence_never_rules_out(make_facts: Callable[[dict[str, Any]], FactSet],
                                          judge: Callable[..., Finding]) -> None:
    finding = judge(PLAYBOOK, make_facts({"container.last_terminated.reason": "OOMKilled"}))
    statuses = _statuses(finding)
    assert statuses["node-oom"] == "unknown"
    assert statuses["memory-leak"] == "unknown"
    assert statuses["shm-too-small"] == "unknown"
    node_oom = next(h for h in finding.hypotheses if h.id == "node-oom")
    assert "kernel.oom_global" in node_oom.needs


@pytest.mark.parametrize(("facts", "expected"), [
    ({"container.last_terminated.reason": "OOMKilled", "container.last_terminated.exit_code": 137}, True),
    ({"kernel.oom_kill": True, "kernel.oom_global": True}, True),
    ({"cuda.oom": True}, True),
    ({"app.shm_exhausted": True}, True),
    ({"alert.symptoms": ["oom-killed"]}, True),
    ({"container.last_terminated.reason": "Error", "container.last_terminated.exit_code": 137,
      "container.liveness_killed": True}, False),
    ({"eviction.seen": True, "eviction.resource": "memory", "pod.status.reason": "Evicted"}, False),
    ({"container.waiting.reason": "CrashLoopBackOff", "container.last_terminated.reason": "Error",
      "container.last_terminated.exit_code": 1}, False),
    ({"kernel.oom_kill": False, "cuda.oom": False}, False),
    # SIGTERM (a drain's stop) with a reason echoing an earlier cgroup OOM event: no OOM kill ended it.
    ({"container.last_terminated.reason": "OOMKilled", "container.last_terminated.exit_code": 143}, False),
    ({"container.last_terminated.reason": "OOMKilled"}, True),
    # torchrun's "exitcode: -9": a child SIGKILLed with its parent spared is how the OOM killer acts in a container.
    ({"app.child_sigkilled": True}, True),
    ({"app.child_sigkilled": False}, False),
], ids=["oomkilled", "kernel-oom", "cuda-oom", "shm", "alert", "liveness-137", "eviction", "app-crash",
        "explicit-false", "oomkilled-143-sigterm", "oomkilled-no-code", "child-sigkill", "child-not-killed"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_checks_are_rendered_for_the_subject(make_facts: Callable[[dict[str, Any]], FactSet],
                                             judge: Callable[..., Finding]) -> None:
    target = Target(namespace="ml", pod="training-job-xyz", node="gpu-node-2")
    facts = make_facts({"container.last_terminated.reason": "OOMKilled", "kernel.oom_memcg": True,
                        "container.name": "trainer", "pod.gpu_request": 8})
    finding = judge(PLAYBOOK, facts, target)
    by_id = {h.id: h for h in finding.hypotheses}
    limit = by_id["limit-too-low"]
    assert limit.status == "confirmed"
    assert any(c.startswith("kubectl get pod training-job-xyz -n ml -o jsonpath=") for c in limit.next_checks)
    assert any('container_memory_working_set_bytes{namespace="ml",pod="training-job-xyz"' in c
               for c in limit.next_checks)
    assert "trainer" in limit.claim and "training-job-xyz" in limit.claim
    assert any("node/gpu-node-2" in c for c in by_id["node-oom"].next_checks)
    for h in finding.hypotheses:
        assert h.source, h.id
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text and "<pod>" not in text and "<namespace>" not in text


def test_label_values_are_escaped(make_facts: Callable[[dict[str, Any]], FactSet],
                                  judge: Callable[..., Finding]) -> None:
    target = Target(namespace='m"l', pod="a b")
    finding = judge(PLAYBOOK, make_facts({"container.last_terminated.reason": "OOMKilled"}), target)
    limit = next(h for h in finding.hypotheses if h.id == "limit-too-low")
    assert any('namespace="m\\"l",pod="a b"' in c for c in limit.next_checks)
    assert any(c.startswith("kubectl get pod 'a b' -n 'm\"l'") for c in limit.next_checks)


def test_evidence_is_cited(make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]) -> None:
    finding = judge(PLAYBOOK, make_facts({"container.last_terminated.reason": "OOMKilled",
                                          "kernel.oom_memcg": True, "container.memory_limit_bytes": 200 * GiB}))
    limit = next(h for h in finding.hypotheses if h.id == "limit-too-low")
    assert {e.fact for e in limit.evidence} >= {"container.last_terminated.reason", "kernel.oom_memcg",
                                                "container.memory_limit_bytes"}
    assert all(e.artifact == "case" and e.lines for e in limit.evidence)


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    compiled = linted_with_sources(PLAYBOOK)
    ids = [h.id for h, _ in compiled.spec.walk()]
    assert [h.id for h in compiled.spec.hypotheses] == TOP_LEVEL
    assert {"faulty-gpu", "host-memory-underestimated", "allocator-fragmentation"} <= set(ids)
