"""The kubelet's "object "ns"/"name" not registered" (its Secret/ConfigMap manager no longer tracks the pod): most
often the race after a pod finished (kubernetes#105204). It is read as a volume error, never as a failed mount, so
it starts container-creating only beside a pod still waiting to start (the playbook cases hold that side)."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import events
from collectors.parsers.kubernetes.messages.k8s_messages import mount_blocked, volume_errors
from collectors.parsers.registry import parse_artifact

# Lines real users pasted, verbatim, with their threads.
REAL = [
    # https://github.com/bitnami/charts/issues/16965
    'MountVolume.SetUp failed for volume "kube-api-access-lw6n6" : object "airflow"/"kube-root-ca.crt" not registered',
    # https://github.com/kubernetes/kubernetes/issues/111938
    'MountVolume.SetUp failed for volume "kube-api-access-8x9l6" : object "app"/"kube-root-ca.crt" not registered',
    # https://github.com/Netcracker/KubeMarine/pull/225 (the kubelet's own log wording)
    '* Error preparing data for projected volume kube-api-access-gd628 for pod cloud-rbm-pg-release/rb-mf-subpath-'
    'job-10c59fa0e-bss-fmzng: object "cloud-rbm-pg-release"/"kube-root-ca.crt" not registered',
]


def _facts(text: str, kind: ArtifactKind = ArtifactKind.TEXT) -> dict[str, object]:
    result = parse_artifact(Artifact(id="paste.txt", kind=kind, content=text))
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize("line", REAL)
def test_a_real_not_registered_line_is_a_volume_error_not_a_failed_mount(line: str) -> None:
    assert volume_errors(line) == ["object-not-registered"]
    assert not mount_blocked(volume_errors(line))
    facts = _facts(line)
    assert "volume.mount_failed" not in facts
    assert facts.get("evidence.symptoms", []) == []


def test_a_describe_row_of_it_is_no_failed_mount() -> None:
    row = ("  Warning  FailedMount  3m  kubelet  MountVolume.SetUp failed for volume \"kube-api-access-x7k2p\" : "
           "object \"batch\"/\"kube-root-ca.crt\" not registered\n")
    facts = {f.name: f.value for f in events.parse(Artifact(id="e", kind=ArtifactKind.EVENTS, content=row)).facts}
    assert facts["volume.errors"] == ["object-not-registered"]
    assert "volume.mount_failed" not in facts


def test_other_volume_errors_still_block_the_mount() -> None:
    for message in ('MountVolume.SetUp failed for volume "creds" : secret "db" not found',
                    'MountVolume.SetUp failed for volume "pvc-0a1b" : mount failed: exit status 32'):
        assert mount_blocked(volume_errors(message)), message
