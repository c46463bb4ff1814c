"""The kubelet's dial errors to the container runtime's socket are the runtime down (signals.yaml,
kubelet-cri-socket-dial-failed); the same error from another client of the socket names nothing
(test_names_nothing.py)."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def facts_of(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


READ = [
    # https://github.com/kubernetes/kubernetes/issues/89682 (a kubelet journal line, whole)
    "6月 16 21:40:46 runh-master-1 kubelet[691]: W0616 21:40:46.540391     691 clientconn.go:1208] grpc: "
    "addrConn.createTransport failed to connect to {/var/run/containerd/containerd.sock  <nil> 0 <nil>}. Err "
    ":connection error: desc = \"transport: Error while dialing dial unix /var/run/containerd/containerd.sock: "
    "connect: no such file or directory\". Reconnecting...",
    # https://github.com/kelseyhightower/kubernetes-the-hard-way/issues/309 (a kubelet journal line, whole; the
    # cri-containerd socket of 2017-2018)
    "Feb 02 20:06:46 k8s-worker-1 kubelet[17146]: 2018/02/02 20:06:46 grpc: addrConn.resetTransport failed to create "
    "client transport: connection error: desc = \"transport: dial unix /var/run/cri-containerd.sock: connect: "
    "connection refused\"; Reconnecting to {/var/run/cri-containerd.sock <nil>}",
]


@pytest.mark.parametrize("line", READ)
def test_the_kubelet_cannot_dial_the_runtime(line: str) -> None:
    facts = facts_of(line)
    assert "runtime-down" in facts["node.not_ready_reasons"]  # type: ignore[operator]
    assert "node-not-ready" in facts["evidence.symptoms"]  # type: ignore[operator]
