"""The scheduler's resource reasons said in a sentence about a pod waiting for a node (stated.yaml
scheduling-insufficient-memory / -cpu): real sentences, verbatim from the thread named beside each, and the
sentences near them that must not be read."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.text.stated import read_stated


def _reasons(text: str) -> list[object]:
    said = read_stated(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts
    return [v for f in said if f.name == "scheduling.reasons" for v in f.value]  # type: ignore[union-attr]


@pytest.mark.parametrize("text", [
    # https://github.com/kubernetes/kubernetes/issues/86942 (description)
    "when creating an statefulset with three replicas, only two pods were running, and one pod was pending because "
    "of `Insufficient memory`. echo pod requests 4c12g resource,  and has node affinity to node1, node2 and node3. ",
    # https://github.com/Azure/AKS/issues/691 (description)
    "Other than the built-in pods I am only running a single pod with a memory limit of 6.5G yet I am getting "
    "\"insufficient memory\" as the reason the pod is Pending.",
    # https://github.com/crc-org/crc/issues/1638 (title)
    "Insufficient memory to schedule httpd-example in the centos CI",
])
def test_insufficient_memory_said_of_a_waiting_pod_is_the_scheduler_s_reason(text: str) -> None:
    assert _reasons(text) == ["insufficient-memory"]


@pytest.mark.parametrize("text", [
    "The pod is not pending because of insufficient memory.",  # denied
    "The job was scheduled, then the process died with insufficient memory.",  # a running process: an OOM's words
    "My laptop has insufficient memory for the build.",  # no pod waiting for a node
    "Is the pod pending because of insufficient memory?",  # asked
])
def test_memory_short_outside_a_scheduling_wait_is_not_read(text: str) -> None:
    assert _reasons(text) == []
