"""kubelet log parser: journal and bare klog lines, structured and older free-text messages."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.node import kubelet
from tests.unit.parsers.cited_fixtures import cited, fixture_tests

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "kubelet"


def parse_text(text: str) -> ParseResult:
    return kubelet.parse(Artifact(id="a1", kind=ArtifactKind.KUBELET_LOG, content=text))


def parse(name: str) -> ParseResult:
    return parse_text((FIXTURES / name).read_text(encoding="utf-8"))


CHECKOUT, TRITON = "pod/shop/checkout-7d9f8c6b5-x2lzp", "pod/inference/triton-serving-gpu-6c9d8f7b5-kx2vq"

EXPECTED = [
    ("journal.txt", "node.conditions", ["MemoryPressure"], 2, 2, "node/gpu-node-2"),
    ("journal.txt", "eviction.seen", True, 5, 5, CHECKOUT),
    ("journal.txt", "eviction.resource", "memory", 2, 5, CHECKOUT),
    ("journal.txt", "probe.failures", ["liveness"], 9, 9, TRITON),
    ("journal.txt", "probe.failures", ["readiness"], 10, 10, TRITON),
    ("journal.txt", "container.liveness_killed", True, 12, 12, TRITON),
    ("journal.txt", "image.pull_error", "timeout", 15, 15, "pod/shop/report-gen-5f6d7c8b9-q7w2e"),
    ("journal.txt", "image.name", "registry.example.com/shop/report-gen:2.3.0", 15, 15,
     "pod/shop/report-gen-5f6d7c8b9-q7w2e"),
    ("journal.txt", "container.waiting.reason", "CrashLoopBackOff", 16, 16, "pod/ml-team/training-job-xyz-0"),
    ("journal.txt", "kernel.oom_kill", True, 17, 17, "node/gpu-node-2"),
    ("journal.txt", "kernel.oom_global", True, 17, 17, "node/gpu-node-2"),
    ("journal.txt", "kernel.oom_victims", ["python"], 17, 17, "node/gpu-node-2"),
    ("journal.txt", "node.conditions", ["NotReady"], 19, 19, "node/gpu-node-2"),
    # bare klog lines from an older kubelet
    ("klog_old.txt", "node.conditions", ["DiskPressure"], 1, 1, ""),
    ("klog_old.txt", "eviction.seen", True, 3, 3, "pod/monitoring/logs-shipper-x7k2p"),
    ("klog_old.txt", "eviction.resource", "ephemeral-storage", 1, 3, "pod/monitoring/logs-shipper-x7k2p"),
    ("klog_old.txt", "probe.failures", ["liveness"], 4, 4, "pod/shop/api-6c9d8f7b5-kx2vq"),
    ("klog_old.txt", "container.liveness_killed", True, 4, 5, "pod/shop/api-6c9d8f7b5-kx2vq"),
    ("klog_old.txt", "image.pull_error", "tls", 6, 6, ""),
    ("klog_old.txt", "image.name", "registry.internal/api:v7", 6, 6, ""),
]


test_fact_is_read_and_cited, test_fixtures_parse_cleanly = fixture_tests(parse, EXPECTED, FIXTURES)


def test_a_kill_for_eviction_is_not_a_liveness_kill() -> None:
    facts = cited(parse("journal.txt"))
    assert [s for _, _, _, s in facts["container.liveness_killed"]] == [TRITON]


def test_liveness_kill_from_failure_and_kill_lines() -> None:
    text = (
        'I1122 06:03:40.010203    1234 prober.go:107] "Probe failed" probeType="Liveness" pod="ml/a-0" '
        'containerName="a" probeResult="failure" output="timeout"\n'
        'I1122 06:03:50.010203    1234 prober.go:107] "Probe failed" probeType="Liveness" pod="ml/b-0" '
        'containerName="b" probeResult="failure" output="timeout"\n'
        'I1122 06:04:00.011801    1234 kuberuntime_container.go:779] "Killing container with a grace period" '
        'pod="ml/a-0" containerName="a" gracePeriod=30\n'
        'I1122 06:04:00.011801    1234 kuberuntime_container.go:779] "Killing container with a grace period" '
        'pod="ml/c-0" containerName="c" gracePeriod=30\n'
    )
    assert cited(parse_text(text))["container.liveness_killed"] == [(True, 1, 3, "pod/ml/a-0")]


def test_oom_killed_container_reported_by_the_kubelet() -> None:
    line = 'I1122 06:09:48.1 1234 kubelet.go:2400] "Container ml/trainer-0/trainer was OOM killed" pod="ml/trainer-0"'
    assert cited(parse_text(line))["kernel.oom_kill"] == [(True, 1, 1, "pod/ml/trainer-0")]


def test_sniff() -> None:
    assert kubelet.sniff((FIXTURES / "journal.txt").read_text(encoding="utf-8")) >= 80
    assert kubelet.sniff((FIXTURES / "klog_old.txt").read_text(encoding="utf-8")) >= 90
    assert kubelet.sniff("NCCL INFO Bootstrap : Using eth0\nNCCL INFO NET/Socket") == 0


def test_the_eviction_managers_decision_names_the_resource_before_any_pod_is_evicted() -> None:
    # https://github.com/kubernetes/kubernetes/issues/44951 (the ranking line cut at its end: whole lines only)
    text = ("Apr 26 09:13:09 node-2-vm kubelet-wrapper[1064]: I0426 09:13:09.518941    1064 "
            "eviction_manager.go:313] eviction manager: must evict pod(s) to reclaim imagefs\n"
            "Apr 26 09:13:09 node-2-vm kubelet-wrapper[1064]: I0426 09:13:09.519150    1064 image_gc_manager.go:335] "
            "[imageGCManager]: Removing image "
            "\"sha256:91a48ff795cebb88646ec6cc4955bf7f500466feb44ec18b508f2ce94ed0d9b7\" to free 664880136 bytes\n")
    facts = cited(parse_text(text))
    assert [v for v, *_ in facts["eviction.resource"]] == ["ephemeral-storage"]
    assert "eviction.seen" not in facts


def test_attempting_to_reclaim_names_the_resource_the_node_is_short_of_but_no_eviction() -> None:
    # The manager reclaims only for the signal whose threshold the node crossed: an eviction at that time was for it.
    # Whether a pod was evicted is for other lines to say (GC may have freed enough).
    # https://github.com/kubernetes/minikube/issues/4084 (the first eviction_manager line of its kubelet log)
    text = ("W0412 09:28:14.744599   14260 eviction_manager.go:333] eviction manager: attempting to reclaim "
            "ephemeral-storage\n")
    facts = cited(parse_text(text))
    assert [v for v, *_ in facts["eviction.resource"]] == ["ephemeral-storage"]
    assert [v for v, *_ in facts["eviction.reclaiming"]] == [True]
    assert "eviction.seen" not in facts


@pytest.mark.parametrize(("said", "resource"), [
    ("memory", "memory"), ("ephemeral-storage", "ephemeral-storage"), ("inodes", "ephemeral-storage"),
    ("pids", "pids"), ("nodefs", "ephemeral-storage"), ("imagefs", "ephemeral-storage"),
])
def test_every_reclaim_wording_names_its_resource(said: str, resource: str) -> None:
    # kubernetes/kubernetes pkg/kubelet/eviction/eviction_manager.go synchronize(): the free-text form (1.7-1.20)
    # and the structured form (1.21-1.31) of the same log, rendered with each resource it can name (helpers.go
    # signalToResource; 1.7 named the filesystems nodefs and imagefs).
    for line in (f"W0412 09:28:14.744599   14260 eviction_manager.go:333] eviction manager: attempting to reclaim "
                 f"{said}",
                 f'I0412 09:28:14.744599   14260 eviction_manager.go:349] "Eviction manager: attempting to reclaim" '
                 f'resourceName="{said}"'):
        assert [v for v, *_ in cited(parse_text(line))["eviction.resource"]] == [resource], line


def test_the_old_recording_line_of_a_node_not_ready_event_is_a_not_ready_condition() -> None:
    # https://github.com/kubernetes/kubernetes/issues/45419 (its first journal line, kubelet 1.6)
    text = ("May 05 13:59:56 ip-10-50-20-208.ec2.internal kubelet[2858]: I0505 13:59:56.872880    2858 "
            "kubelet_node_status.go:379] Recording NodeNotReady event message for node ip-10-50-20-208.ec2.internal\n")
    facts = cited(parse_text(text))
    assert [v for v, *_ in facts["node.conditions"]] == [["NotReady"]]


def test_recording_a_healthy_node_event_is_no_condition() -> None:
    # The same setter records NodeReady and NodeHasSufficientMemory; they say the node is well. Rendered from
    # kubelet_node_status.go recordNodeStatusEvent ("Recording %s event message for node %s") with sample values.
    text = ("May 05 14:00:06 ip-10-50-20-208.ec2.internal kubelet[2858]: I0505 14:00:06.872880    2858 "
            "kubelet_node_status.go:379] Recording NodeReady event message for node ip-10-50-20-208.ec2.internal\n"
            "May 05 14:00:06 ip-10-50-20-208.ec2.internal kubelet[2858]: I0505 14:00:06.872881    2858 "
            "kubelet_node_status.go:379] Recording NodeHasSufficientMemory event message for node "
            "ip-10-50-20-208.ec2.internal\n")
    assert "node.conditions" not in cited(parse_text(text))
