"""`kubectl describe pod` parser: real describe output, cited to the line that shows each fact."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes import describe_pod

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "describe_pod"


def parse(name: str) -> ParseResult:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return describe_pod.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_POD, content=text))


def cited(result: ParseResult) -> dict[str, list[tuple[object, int, int]]]:
    """fact name -> [(value, first line, last line)] in emission order."""
    out: dict[str, list[tuple[object, int, int]]] = {}
    for fact in result.facts:
        out.setdefault(fact.name, []).append((fact.value, fact.citation.start, fact.citation.end))
    return out


EXPECTED = [
    # OOMKilled in Last State while the current state waits in CrashLoopBackOff
    ("oomkilled.txt", "pod.name", "training-job-xyz-0", 1, 1),
    ("oomkilled.txt", "pod.namespace", "ml-team", 2, 2),
    ("oomkilled.txt", "pod.node", "gpu-node-7", 5, 5),
    ("oomkilled.txt", "pod.phase", "Running", 12, 12),
    ("oomkilled.txt", "container.name", "trainer", 18, 18),
    ("oomkilled.txt", "container.image", "nvcr.io/nvidia/pytorch:24.05-py3", 20, 20),
    ("oomkilled.txt", "container.waiting.reason", "CrashLoopBackOff", 29, 29),
    ("oomkilled.txt", "container.last_terminated.reason", "OOMKilled", 31, 31),
    ("oomkilled.txt", "container.last_terminated.exit_code", 137, 32, 32),
    ("oomkilled.txt", "container.restart_count", 4, 36, 36),
    ("oomkilled.txt", "container.cpu_limit_millicores", 32000, 38, 38),
    ("oomkilled.txt", "container.memory_limit_bytes", 200 * 2**30, 39, 39),
    ("oomkilled.txt", "container.memory_request_bytes", 100 * 2**30, 43, 43),
    ("oomkilled.txt", "pod.gpu_request", 8, 44, 44),
    ("oomkilled.txt", "pod.shm_volume", False, 57, 57),
    ("oomkilled.txt", "pod.shm_size_bytes", 64 * 2**20, 57, 57),  # nothing at /dev/shm: the runtime's 64 MiB
    ("oomkilled.txt", "pod.qos_class", "Burstable", 68, 68),
    ("oomkilled.txt", "pod.tolerations", ["node.kubernetes.io/not-ready:NoExecute",
                                          "node.kubernetes.io/unreachable:NoExecute",
                                          "nvidia.com/gpu:NoSchedule"], 70, 70),
    ("oomkilled.txt", "events.reasons", ["BackOff"], 80, 80),
    # exit 137 after liveness kills: reason Error, with the probe evidence from events
    ("liveness_137.txt", "container.last_terminated.reason", "Error", 30, 30),
    ("liveness_137.txt", "container.last_terminated.exit_code", 137, 31, 31),
    ("liveness_137.txt", "pod.priority_class", "production-critical", 4, 4),
    ("liveness_137.txt", "probe.liveness_delay_seconds", 60, 44, 44),
    ("liveness_137.txt", "probe.startup_configured", False, 44, 44),
    ("liveness_137.txt", "pod.shm_volume", True, 48, 48),
    ("liveness_137.txt", "pod.shm_size_bytes", 16 * 2**30, 61, 61),  # SizeLimit: 16Gi
    ("liveness_137.txt", "probe.readiness_delay_seconds", 5, 45, 45),  # Readiness: ... delay=5s
    ("liveness_137.txt", "probe.failures", ["liveness"], 76, 76),
    ("liveness_137.txt", "probe.failures", ["readiness"], 78, 78),
    ("liveness_137.txt", "container.liveness_killed", True, 77, 77),
    ("liveness_137.txt", "pod.qos_class", "Guaranteed", 68, 68),
    # evicted under memory pressure
    ("evicted.txt", "pod.phase", "Failed", 10, 10),
    ("evicted.txt", "pods.not_running", ["checkout-7d9f8c6b5-x2lzp"], 10, 10),
    ("evicted.txt", "pod.status.reason", "Evicted", 11, 11),
    ("evicted.txt", "eviction.seen", True, 11, 12),
    ("evicted.txt", "eviction.resource", "memory", 12, 12),
    ("evicted.txt", "container.memory_request_bytes", 2 * 2**30, 36, 36),
    ("evicted.txt", "events.reasons", ["Evicted"], 62, 62),
    # pending with a multi-reason FailedScheduling message wrapped onto a second line
    ("pending_multi.txt", "pod.node", "", 7, 7),
    ("pending_multi.txt", "pod.phase", "Pending", 12, 12),
    ("pending_multi.txt", "pods.pending", ["llm-finetune-worker-3"], 12, 12),
    ("pending_multi.txt", "pod.priority_class", "best-effort-experiment", 5, 5),
    ("pending_multi.txt", "pod.rdma_request", True, 29, 29),
    ("pending_multi.txt", "pod.shm_volume", False, 43, 43),  # emptyDir at /dev/shm, but not Medium: Memory
    ("pending_multi.txt", "scheduling.failed", True, 62, 63),
    ("pending_multi.txt", "scheduling.nodes_total", 20, 62, 63),
    ("pending_multi.txt", "scheduling.reasons",
     ["untolerated-taint", "insufficient-memory", "insufficient-gpu", "preemption-not-helpful"], 62, 63),
    ("pending_multi.txt", "nccl.socket_ifname", "eth0", 36, 36),
    ("pending_multi.txt", "dist.env_missing", [], 31, 31),
    ("pending_multi.txt", "dist.ranks", [3], 34, 34),
    ("pending_multi.txt", "dist.world_sizes", [4], 33, 33),
    ("pending_multi.txt", "dist.master_addrs", ["llm-finetune-master-0"], 32, 32),
    # seed 004 scenario 5: the simplified taint message, and a rank without RANK
    ("seed_taint.txt", "scheduling.reasons", ["untolerated-taint"], 45, 45),
    ("seed_taint.txt", "scheduling.nodes_total", 20, 45, 45),
    ("seed_taint.txt", "scheduling.message", "0/20 nodes are available: 1 node had taint that pod didn't tolerate",
     45, 45),
    ("seed_taint.txt", "dist.env_missing", [], 23, 23),  # RANK comes from the launcher (torchrun)
    ("seed_taint.txt", "pod.gpu_request", 4, 21, 21),
    # two pods: shm, startup probe, env per rank, a finished init container that must not shadow the main one
    ("two_pods.txt", "pod.name", "bert-finetuning-exp42-worker-0", 1, 1),
    ("two_pods.txt", "pod.name", "bert-finetuning-exp42-worker-1", 85, 85),
    ("two_pods.txt", "container.name", "pytorch", 33, 33),
    ("two_pods.txt", "container.memory_request_bytes", 10**9, 47, 47),
    ("two_pods.txt", "pod.shm_volume", True, 60, 60),
    ("two_pods.txt", "pod.shm_volume", False, 125, 125),
    ("two_pods.txt", "pod.shm_size_bytes", 64 * 2**30, 73, 73),
    ("two_pods.txt", "pod.shm_size_bytes", 64 * 2**20, 125, 125),
    ("two_pods.txt", "probe.liveness_delay_seconds", 0, 49, 49),
    ("two_pods.txt", "probe.startup_configured", True, 49, 49),
    ("two_pods.txt", "pod.tolerations", ["*:NoSchedule", "nvidia.com/gpu:NoSchedule"], 80, 80),
    ("two_pods.txt", "nccl.ib_hca", "mlx5", 58, 58),
    ("two_pods.txt", "dist.ranks", [1, 1], 55, 118),  # a duplicated rank stays visible
    ("two_pods.txt", "events.reasons", [], 82, 82),
    # the seed's simplified fragment still reads
    ("fragment.txt", "container.last_terminated.reason", "OOMKilled", 5, 5),
    ("fragment.txt", "container.last_terminated.exit_code", 137, 6, 6),
]


@pytest.mark.parametrize(("fixture", "name", "value", "start", "end"), EXPECTED)
def test_fact_is_read_and_cited(fixture: str, name: str, value: object, start: int, end: int) -> None:
    assert (value, start, end) in cited(parse(fixture)).get(name, [])


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_fixtures_parse_cleanly(fixture: str) -> None:
    assert parse(fixture).problems == []


def test_a_disk_backed_volume_at_dev_shm_states_no_size() -> None:
    # pending_multi.txt mounts an emptyDir without Medium: Memory at /dev/shm: its size is the node's disk.
    facts = cited(parse("pending_multi.txt"))
    assert [v for v, _, _ in facts["pod.shm_volume"]] == [False]
    assert "pod.shm_size_bytes" not in facts


def test_liveness_kill_exit_137_is_not_an_oom() -> None:
    facts = cited(parse("liveness_137.txt"))
    assert [v for v, _, _ in facts["container.last_terminated.reason"]] == ["Error"]
    assert "kernel.oom_kill" not in facts


def test_eviction_is_not_an_oom_kill() -> None:
    facts = cited(parse("evicted.txt"))
    assert "OOMKilled" not in [v for v, _, _ in facts["container.last_terminated.reason"]]
    assert "kernel.oom_kill" not in facts


def test_current_terminated_state_wins_over_last_state() -> None:
    text = (
        "Name:         job-0\nNamespace:    ml\nContainers:\n  main:\n"
        "    State:          Terminated\n      Reason:       Error\n      Exit Code:    1\n"
        "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
    )
    result = describe_pod.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_POD, content=text))
    facts = cited(result)
    assert facts["container.last_terminated.reason"] == [("Error", 6, 6)]
    assert facts["container.last_terminated.exit_code"] == [(1, 7, 7)]


def test_a_finished_init_container_does_not_shadow_the_main_container() -> None:
    facts = cited(parse("two_pods.txt"))
    assert "Completed" not in [v for v, _, _ in facts.get("container.last_terminated.reason", [])]
    assert ("fetch-model", 17, 17) not in facts["container.name"]


def test_each_pod_gets_its_own_subject() -> None:
    subjects = {f.subject for f in parse("two_pods.txt").facts if f.name == "pod.name"}
    assert subjects == {"pod/nlp/bert-finetuning-exp42-worker-0", "pod/nlp/bert-finetuning-exp42-worker-1"}


@pytest.mark.parametrize(("fixture", "low", "high"), [
    ("oomkilled.txt", 90, 100), ("fragment.txt", 50, 70), ("two_pods.txt", 90, 100),
])
def test_sniff(fixture: str, low: int, high: int) -> None:
    assert low <= describe_pod.sniff((FIXTURES / fixture).read_text(encoding="utf-8")) <= high


def test_sniff_rejects_describe_node_and_logs() -> None:
    node = (FIXTURES.parent / "describe_node" / "gpu_full.txt").read_text(encoding="utf-8")
    assert describe_pod.sniff(node) < 30
    assert describe_pod.sniff("Nov 22 06:01:02 host kernel: Out of memory: Killed process 1 (x)") == 0
