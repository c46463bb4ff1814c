"""Line signals for pods that never start, nodes that are not ready and services with nothing behind them."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def read(line: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, source="paste", content=line))
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize(("line", "expected"), [
    ('> Multi-Attach error for volume "pvc-1" Volume is already exclusively attached to one node',
     {"volume.errors": ["multi-attach"], "volume.mount_failed": True}),
    ('"MountVolume.SetUp failed for volume \\"creds\\" : secret \\"db\\" not found"',
     {"volume.errors": ["secret-not-found"], "volume.mount_failed": True, "pod.missing_refs": ["secret/db"]}),
    ("`Failed to create pod sandbox: rpc error: failed to setup network for sandbox: failed to allocate for range 0`",
     {"sandbox.errors": ["ip-exhausted"]}),
    ('the pod says Error: configmap "app-config" not found', {"pod.missing_refs": ["configmap/app-config"]}),
    ("Ready  False  KubeletNotReady  PLEG is not healthy: pleg was last seen active 3m ago",
     {"node.not_ready_reasons": ["pleg-unhealthy"]}),
    ("message: '[container runtime is down, PLEG is not healthy: pleg was last seen active 18m ago]'",
     {"node.not_ready_reasons": ["runtime-down"]}),
    ("Ready   Unknown   NodeStatusUnknown   Kubelet stopped posting node status.",
     {"node.not_ready_reasons": ["kubelet-stopped-posting"]}),
    ("Endpoints:         <none>", {"endpoints.ready": 0, "endpoints.not_ready": 0}),
    ('E0101 10:00:00.1 1 proxier.go:1523] "Failed to execute iptables-restore" err="exit status 4"',
     {"proxy.sync_failed": True}),
])
def test_signal(line: str, expected: dict[str, object]) -> None:
    got = read(line)
    assert {k: got.get(k) for k in expected} == expected


def test_endpoints_with_addresses_are_not_read_as_none() -> None:
    assert "endpoints.ready" not in read("Endpoints:         10.244.1.5:8080,10.244.2.7:8080")
