"""Probe ports read from `kubectl describe pod`: each probe handler rendered as kubectl prints it
(k8s.io/kubectl pkg/describe/describe.go, DescribeProbe) with sample values, read back as kind:port."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import describe_pod

_POD = """Name:         web-7d4b9c
Namespace:    shop
Status:       Running
Containers:
  web:
    Image:          nginx:1.25
    Port:           8080/TCP
    Host Port:      0/TCP
    State:          Running
    Ready:          False
    Restart Count:  0
    {kind}:  {probe} delay=5s timeout=1s period=10s #success=1 #failure=3
"""


@pytest.mark.parametrize(("kind", "probe", "expected"), [
    ("Readiness", "http-get http://:8080/ready", "readiness:8080"),
    ("Readiness", "http-get https://:https/ready", "readiness:https"),
    ("Liveness", "http-get http://10.0.0.5:9000/healthz", "liveness:9000"),
    ("Liveness", "tcp-socket :6379", "liveness:6379"),
    ("Startup", "grpc <pod>:9090 ", "startup:9090"),
])
def test_each_probe_handler_gives_its_port(kind: str, probe: str, expected: str) -> None:
    text = _POD.format(kind=kind, probe=probe)
    facts = {f.name: f.value for f in describe_pod.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_POD,
                                                                   content=text)).facts}
    assert facts.get("pod.probe_ports") == [expected]
    assert facts.get("pod.container_ports") == ["8080"]


def test_an_exec_probe_has_no_port() -> None:
    text = _POD.format(kind="Liveness", probe="exec [cat /tmp/healthy]")
    facts = {f.name for f in describe_pod.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_POD, content=text)).facts}
    assert "pod.probe_ports" not in facts
