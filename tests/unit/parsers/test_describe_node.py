"""`kubectl describe node(s)` parser: conditions, taints, GPU capacity and what is left of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes import describe_node
from tests.unit.parsers.cited_fixtures import cited, fixture_tests

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "describe_node"


def parse(name: str) -> ParseResult:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return describe_node.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_NODE, content=text))


N4, N9, N10 = "node/gpu-node-4", "node/gpu-node-9", "node/gpu-node-10"

EXPECTED = [
    # every GPU of the node is requested: `nvidia.com/gpu  8  8` in Allocated resources
    ("gpu_full.txt", "node.name", "gpu-node-4", 1, 1, N4),
    ("gpu_full.txt", "node.taints", [], 22, 22, N4),
    # InternalIP, InternalDNS and Hostname: a scrape target's instance label may be any of them
    ("gpu_full.txt", "node.addresses", ["10.0.12.44", "ip-10-0-12-44.ec2.internal"], 36, 38, N4),
    ("gpu_full.txt", "node.unschedulable", False, 23, 23, N4),
    ("gpu_full.txt", "node.conditions", [], 28, 28, N4),
    ("gpu_full.txt", "node.gpu_sharing", "exclusive", 15, 15, N4),
    ("gpu_full.txt", "gpu.capacity_total", 8, 45, 45, N4),
    ("gpu_full.txt", "gpu.allocatable_total", 8, 53, 53, N4),
    ("gpu_full.txt", "gpu.unhealthy_count", 0, 45, 53, N4),
    ("gpu_full.txt", "gpu.free_total", 0, 84, 84, N4),
    ("gpu_full.txt", "gpu.max_free_per_node", 0, 84, 84, N4),
    ("gpu_full.txt", "events.reasons", [], 85, 85, N4),
    # a cordoned, NotReady node under memory pressure with 4 GPUs dropped from allocatable
    ("two_nodes.txt", "node.taints", ["gpu-unhealthy=true:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule",
                                      "node.kubernetes.io/unschedulable:NoSchedule"], 10, 10, N9),
    ("two_nodes.txt", "node.unschedulable", True, 13, 13, N9),
    ("two_nodes.txt", "node.conditions", ["MemoryPressure", "NotReady"], 18, 21, N9),
    ("two_nodes.txt", "node.gpu_sharing", "time-slicing", 7, 7, N9),
    ("two_nodes.txt", "gpu.capacity_total", 32, 25, 25, N9),
    ("two_nodes.txt", "gpu.allocatable_total", 28, 30, 30, N9),
    ("two_nodes.txt", "gpu.unhealthy_count", 4, 25, 30, N9),
    ("two_nodes.txt", "gpu.free_total", 8, 43, 43, N9),
    ("two_nodes.txt", "kernel.oom_kill", True, 50, 50, N9),
    ("two_nodes.txt", "kernel.oom_memcg", True, 50, 50, N9),
    ("two_nodes.txt", "kernel.oom_victims", ["python"], 50, 50, N9),
    ("two_nodes.txt", "events.reasons", ["EvictionThresholdMet"], 48, 48, N9),
    # a MIG node with nothing allocated: no nvidia.com/gpu row means none requested
    ("two_nodes.txt", "node.gpu_sharing", "mig", 60, 60, N10),
    ("two_nodes.txt", "node.conditions", [], 65, 65, N10),
    ("two_nodes.txt", "gpu.free_total", 16, 85, 85, N10),
    ("two_nodes.txt", "gpu.max_free_per_node", 16, 85, 85, N10),
]


test_fact_is_read_and_cited, test_fixtures_parse_cleanly = fixture_tests(parse, EXPECTED, FIXTURES)


def test_sums_across_nodes_are_per_node_facts() -> None:
    facts = cited(parse("two_nodes.txt"))
    assert [v for v, *_ in facts["gpu.capacity_total"]] == [32, 16]
    assert [v for v, *_ in facts["gpu.free_total"]] == [8, 16]


def test_a_gpu_node_without_the_resource_advertises_zero() -> None:
    text = ("Name:    gpu-node-1\nLabels:  nvidia.com/gpu.present=true\nCapacity:\n  cpu:  64\n"
            "Allocatable:\n  cpu:  63\n")
    facts = cited(describe_node.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_NODE, content=text)))
    assert facts["gpu.capacity_total"] == [(0, 3, 3, "node/gpu-node-1")]
    assert facts["gpu.allocatable_total"] == [(0, 5, 5, "node/gpu-node-1")]
    assert "gpu.free_total" not in facts  # nothing says what is allocated


def test_a_cpu_node_says_nothing_about_gpus() -> None:
    text = "Name:    cpu-node-1\nTaints:  <none>\nCapacity:\n  cpu:  64\nAllocatable:\n  cpu:  63\n"
    facts = cited(describe_node.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_NODE, content=text)))
    assert not [name for name in facts if name.startswith("gpu.")]
    assert facts["node.taints"] == [([], 2, 2, "node/cpu-node-1")]


def test_sniff() -> None:
    assert describe_node.sniff((FIXTURES / "gpu_full.txt").read_text(encoding="utf-8")) >= 90
    pod = (FIXTURES.parent / "describe_pod" / "oomkilled.txt").read_text(encoding="utf-8")
    assert describe_node.sniff(pod) < 30


REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "node-not-ready"


@pytest.mark.parametrize(("case", "expected"), [
    # nds-org/jupyter-et#13: Name and Roles, then the conditions table with its `Conditions:` key cut.
    ("jupyter-et-13-describe-nodes-pleg-16h",
     {"node.name": "etkhub", "node.conditions": ["NotReady"], "node.not_ready_reasons": ["pleg-unhealthy"]}),
    # kubernetes/kubernetes#73397: the table alone; a stale OutOfDisk row at Unknown, Ready True: nothing wrong.
    ("k8s-issue-73397-ready-true-stale-outofdisk-unknown", {"node.conditions": []}),
])
def test_a_conditions_table_without_its_key_is_read(case: str, expected: dict[str, object]) -> None:
    text = (REALWORLD / case / "evidence.txt").read_text(encoding="utf-8")
    assert describe_node.sniff(text) >= 80
    result = describe_node.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_NODE, content=text))
    assert {f.name: f.value for f in result.facts} == expected


# kubectl describe node's Conditions table (k8s.io/kubectl pkg/describe/describe.go, describeNode) rendered with
# sample values, its `Conditions:` key and column header cut from the paste as people cut them.
_CUT_TABLE = (
    "  MemoryPressure   False   Sat, 28 Nov 2026 10:00:01 +0000   Sat, 28 Nov 2026 09:00:00 +0000   "
    "KubeletHasSufficientMemory   kubelet has sufficient memory available\n"
    "  Ready            {status}   Sat, 28 Nov 2026 10:00:01 +0000   Sat, 28 Nov 2026 09:00:00 +0000   "
    "{reason}   {message}\n"
    "Addresses:\n  InternalIP:  10.0.0.4\n"
)


@pytest.mark.parametrize(("status", "reason", "message", "conditions"), [
    ("False", "KubeletNotReady", "container runtime network not ready: NetworkReady=false", ["NotReady"]),
    ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", ["NotReady"]),
    ("True", "KubeletReady", "kubelet is posting ready status", []),
])
def test_a_conditions_table_with_its_header_cut_is_read(status: str, reason: str, message: str,
                                                        conditions: list[str]) -> None:
    text = _CUT_TABLE.format(status=status, reason=reason, message=message)
    result = describe_node.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_NODE, content=text))
    assert [f.value for f in result.facts if f.name == "node.conditions"] == [conditions]


def test_a_condition_word_in_prose_is_no_table() -> None:
    text = "Ready False is what I see, not sure why\n"
    result = describe_node.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_NODE, content=text))
    assert [f for f in result.facts if f.name == "node.conditions"] == []
