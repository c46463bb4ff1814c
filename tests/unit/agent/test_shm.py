"""/v1/shm: each container's /dev/shm found through its OCI spec's mount, measured with statvfs, and nothing read
outside the configured roots."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from collectors.agent import shm
from collectors.agent.errors import AgentError
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import shm_usage

UID = "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5"
TRAINER = "a" * 64
SIDECAR = "b" * 64
SANDBOX = "c" * 64
SANDBOXES = "/run/containerd/io.containerd.grpc.v1.cri/sandboxes"
KUBELET_PODS = "/var/lib/kubelet/pods"


def _bundle(run: Path, cid: str, name: str | None, shm_source: str | None) -> None:
    """A runtime bundle's config.json as containerd's CRI plugin writes it (annotations, mounts)."""
    annotations = {"io.kubernetes.cri.sandbox-id": SANDBOX, "io.kubernetes.cri.sandbox-uid": UID}
    if name:
        annotations |= {"io.kubernetes.cri.container-name": name, "io.kubernetes.cri.container-type": "container"}
    mounts = [{"destination": "/proc", "type": "proc", "source": "proc"}]
    if shm_source:
        mounts.append({"destination": "/dev/shm", "type": "bind", "source": shm_source,
                       "options": ["rbind", "rprivate", "rw"]})
    (run / cid).mkdir(parents=True)
    (run / cid / "config.json").write_text(json.dumps({"ociVersion": "1.1.0", "annotations": annotations,
                                                       "mounts": mounts}))


@pytest.fixture
def node(tmp_path: Path) -> dict[str, object]:
    cgroup = tmp_path / "cgroup"
    (cgroup / "cgroup.controllers").parent.mkdir(parents=True)
    (cgroup / "cgroup.controllers").write_text("cpu memory\n")
    pod = (cgroup / "kubepods.slice" / "kubepods-burstable.slice"
           / f"kubepods-burstable-pod{UID.replace('-', '_')}.slice")
    for cid in (TRAINER, SIDECAR, SANDBOX):
        (pod / f"cri-containerd-{cid}.scope").mkdir(parents=True)
    run = tmp_path / "bundles"
    emptydir = f"{KUBELET_PODS}/{UID}/volumes/kubernetes.io~empty-dir/dshm"
    _bundle(run, TRAINER, "trainer", emptydir)
    _bundle(run, SIDECAR, "sidecar", f"{SANDBOXES}/{SANDBOX}/shm")
    _bundle(run, SANDBOX, None, None)
    kubelet, sandboxes = tmp_path / "host-kubelet-pods", tmp_path / "host-sandboxes"
    (kubelet / UID / "volumes" / "kubernetes.io~empty-dir" / "dshm").mkdir(parents=True)
    (sandboxes / SANDBOX / "shm").mkdir(parents=True)
    return {"cgroup_root": cgroup, "uid": UID, "bundle_dirs": [str(run / "{id}")],
            "roots": {KUBELET_PODS: kubelet, SANDBOXES: sandboxes}}


def test_every_container_reports_the_filesystem_behind_its_dev_shm(node: dict[str, object], tmp_path: Path) -> None:
    doc = shm.shm_usage(name=None, node="gpu-node-3", **node)  # type: ignore[arg-type]
    fs = os.statvfs(tmp_path)
    assert doc["available"] is True and doc["schema"] == "triagebot.shm/v1" and doc["node"] == "gpu-node-3"
    assert [(c["container"], c["source"]) for c in doc["containers"]] == [
        ("sidecar", f"{SANDBOXES}/{SANDBOX}/shm"),
        ("trainer", f"{KUBELET_PODS}/{UID}/volumes/kubernetes.io~empty-dir/dshm")]
    for entry in doc["containers"]:
        # The fixture's directories sit on tmp_path's filesystem, so statvfs gives its figures.
        assert entry["size_bytes"] == fs.f_blocks * fs.f_frsize
        assert 0 <= entry["used_bytes"] <= entry["size_bytes"]
    read = shm_usage.parse(Artifact(id="shm", kind=ArtifactKind.DF, content=json.dumps(doc)))
    assert {f.name for f in read.facts} == {"pod.shm_size_bytes", "pod.shm_used_ratio"}


def test_one_named_container(node: dict[str, object]) -> None:
    doc = shm.shm_usage(name="trainer", **node)  # type: ignore[arg-type]
    assert [c["container"] for c in doc["containers"]] == ["trainer"]


def test_an_unknown_container_is_a_404_naming_the_pods_containers(node: dict[str, object]) -> None:
    with pytest.raises(AgentError) as err:
        shm.shm_usage(name="worker", **node)  # type: ignore[arg-type]
    assert err.value.status == 404 and err.value.expected == "one of the pod's containers: sidecar, trainer"


@pytest.mark.parametrize("source", [
    "/etc/shadow",  # under no configured root
    f"{KUBELET_PODS}/../../../etc",  # climbs out of its root
    f"{SANDBOXES}-evil/{SANDBOX}/shm",  # a sibling whose name only starts like a root
])
def test_a_source_outside_the_roots_is_never_read(node: dict[str, object], tmp_path: Path, source: str) -> None:
    (tmp_path / "bundles" / TRAINER / "config.json").write_text(json.dumps({
        "annotations": {"io.kubernetes.cri.container-name": "trainer"},
        "mounts": [{"destination": "/dev/shm", "type": "bind", "source": source}]}))
    entry = shm.shm_usage(name="trainer", **node)["containers"][0]  # type: ignore[arg-type]
    assert "size_bytes" not in entry and entry["error"] == "the source is under none of TRIAGEBOT_AGENT_SHM_ROOTS"


def test_a_symlink_out_of_a_root_is_not_followed(node: dict[str, object], tmp_path: Path) -> None:
    dshm = tmp_path / "host-kubelet-pods" / UID / "volumes" / "kubernetes.io~empty-dir" / "dshm"
    dshm.rmdir()
    dshm.symlink_to(tmp_path / "cgroup")
    entry = shm.shm_usage(name="trainer", **node)["containers"][0]  # type: ignore[arg-type]
    assert "size_bytes" not in entry and "TRIAGEBOT_AGENT_SHM_ROOTS" in entry["error"]


def test_a_container_without_a_dev_shm_mount_says_so(node: dict[str, object], tmp_path: Path) -> None:
    (tmp_path / "bundles" / TRAINER / "config.json").write_text(json.dumps({
        "annotations": {"io.kubernetes.cri.container-name": "trainer"}, "mounts": []}))
    entry = shm.shm_usage(name="trainer", **node)["containers"][0]  # type: ignore[arg-type]
    assert entry == {"container": "trainer", "error": "its OCI spec mounts nothing at /dev/shm"}


def test_a_pod_not_on_this_node_is_a_404(node: dict[str, object]) -> None:
    with pytest.raises(AgentError) as err:
        shm.shm_usage(name=None, **(node | {"uid": "0" * 32}))  # type: ignore[arg-type]
    assert err.value.status == 404
