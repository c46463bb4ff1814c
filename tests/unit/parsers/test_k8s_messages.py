"""Messages that say why a pod cannot start or a node is not ready, normalised one way."""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.messages.k8s_messages import (
    missing_refs,
    node_not_ready_reasons,
    pull_seconds,
    sandbox_errors,
    volume_errors,
)


@pytest.mark.parametrize(("message", "expected"), [
    ('Multi-Attach error for volume "pvc-8f1c" Volume is already exclusively attached to one node and can\'t be '
     "attached to another", ["multi-attach"]),
    ('Multi-Attach error for volume "pvc-8f1c" Volume is already used by pod(s) pg-main-0', ["multi-attach"]),
    ('MountVolume.MountDevice failed for volume "pvc-1" : kubernetes.io/csi: attacher.MountDevice failed to create '
     "newCsiDriverClient: driver name ebs.csi.aws.com not found in the list of registered CSI drivers",
     ["csi-driver-missing", "mount-failed"]),
    ('MountVolume.SetUp failed for volume "creds" : secret "db-credentials" not found', ["secret-not-found"]),
    ('MountVolume.SetUp failed for volume "cfg" : configmap "app-config" not found', ["configmap-not-found"]),
    ("Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[data]: timed out waiting "
     "for the condition", ["mount-timeout"]),
    ('AttachVolume.Attach failed for volume "pvc-2" : rpc error: code = DeadlineExceeded', ["attach-failed"]),
    ('MountVolume.SetUp failed for volume "nfs" : mount failed: exit status 32', ["mount-failed"]),
    ("Successfully assigned ml/x to gpu-node-1", []),
])
def test_volume_errors(message: str, expected: list[str]) -> None:
    assert volume_errors(message) == expected


def test_missing_refs_from_volumes_env_and_keys() -> None:
    assert missing_refs('Error: secret "hf-token" not found') == ["secret/hf-token"]
    assert missing_refs('secret \\"hf-token\\" not found') == ["secret/hf-token"]
    assert missing_refs("Error: couldn't find key password in Secret shop/db-creds") == ["secret/db-creds"]
    assert missing_refs('configmap "a" not found; configmap "a" not found') == ["configmap/a"]
    assert missing_refs('persistentvolumeclaim "data" not found') == []


@pytest.mark.parametrize(("message", "expected"), [
    ('failed to setup network for sandbox "x": plugin type="bridge" failed (add): failed to allocate for range 0: '
     "no IP addresses available in range set: 10.244.6.1-10.244.6.254", ["ip-exhausted"]),
    ("add cmd: failed to assign an IP address to container", ["ip-exhausted"]),
    ("network is not ready: container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
     "message:Network plugin returns error: cni plugin not initialized", ["cni-not-ready"]),
    ('failed to setup network for sandbox "x": plugin type="calico" failed (add): connection is unauthorized',
     ["cni-error"]),
    # No CNI plugin binaries on the node: a line of k0sproject/k0s#582's paste, verbatim (the paste wraps the
    # message; tests/realworld/container-creating/k0s-582-sandbox-loopback-plugin-missing reads it whole).
    ('andbox "55dbd184d9926ada73934c2379359797774bd1046fa85b462f3cfa0dc3e4e242": failed to find plugin "loopback" '
     "in path [/opt/cni/bin]", ["cni-not-ready"]),
    ("Failed to create pod sandbox: rpc error: code = DeadlineExceeded", ["runtime-error"]),
    # NVIDIA/gpu-operator#549, verbatim: the RuntimeClass's handler is not in containerd's config, and containerd
    # down; both fail before the CNI is called (tests/realworld/container-creating/gpu-operator-549-...).
    ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for '
     '"nvidia" is configured', ["runtime-handler-missing"]),
    ('Failed to create pod sandbox: rpc error: code = Unavailable desc = connection error: desc = "transport: Error '
     'while dialing dial unix /run/containerd/containerd.sock: connect: connection refused"', ["runtime-unreachable"]),
    # A CNI failure that also names a socket stays the CNI's.
    ('failed to setup network for sandbox "x": plugin type="calico" failed (add): dial unix '
     '/var/run/calico/cni-server.sock: connect: connection refused', ["cni-error"]),
    ("Started container app", []),
])
def test_sandbox_errors(message: str, expected: list[str]) -> None:
    assert sandbox_errors(message) == expected


@pytest.mark.parametrize(("message", "seconds"), [
    ('Successfully pulled image "nginx:1.27" in 4m32.5s (4m32.5s including waiting)', 272.5),
    ('Successfully pulled image "x" in 812ms (812ms including waiting)', 0.812),
    ('Successfully pulled image "x" in 1h2m3s', 3723.0),
    ('Container image "x" already present on machine', None),
])
def test_pull_seconds(message: str, seconds: float | None) -> None:
    assert pull_seconds(message) == seconds


@pytest.mark.parametrize(("text", "expected"), [
    ("NodeStatusUnknown Kubelet stopped posting node status.", ["kubelet-stopped-posting"]),
    ("KubeletNotReady PLEG is not healthy: pleg was last seen active 3m5s ago; threshold is 3m0s",
     ["pleg-unhealthy"]),
    ("KubeletNotReady [container runtime is down, PLEG is not healthy: pleg was last seen active 18m ago]",
     ["pleg-unhealthy", "runtime-down"]),
    ("KubeletNotReady container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady",
     ["network-not-ready"]),
    ("KubeletNotReady something new", ["kubelet-not-ready"]),
    ("KubeletReady kubelet is posting ready status", []),
])
def test_node_not_ready_reasons(text: str, expected: list[str]) -> None:
    assert node_not_ready_reasons(text) == expected
