"""Finding a pod's cgroup from its UID, naming containers, and refusing anything path-like."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from collectors.agent import cgroup
from collectors.agent.errors import AgentError
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import cpu_stat

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agent"
V2 = FIXTURES / "cgroup"
V1 = FIXTURES / "cgroup-v1"
UID = "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5"
V1_UID = "0d7c9e1a-2b3c-4d5e-8f90-a1b2c3d4e5f6"
APP = "5d1e8a9b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a4b3c2d1e0f"
BUNDLES = [str(FIXTURES / "run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}")]
POD_DIR = "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2d3e_4b5a_4c6d_8e7f_90a1b2c3d4e5.slice"


def throttled_ratio(text: str) -> object:
    facts = cpu_stat.parse(Artifact(id="c", kind=ArtifactKind.CPU_STAT, content=text)).facts
    return next(f.value for f in facts if f.name == "cpu.throttled_ratio")


def test_v2_systemd_container_by_name() -> None:
    found = cgroup.read_cpu_stat(V2, UID, "app", None, BUNDLES)
    assert found.version == "v2"
    assert found.path == f"{POD_DIR}/cri-containerd-{APP}.scope/cpu.stat"
    assert throttled_ratio(found.content) == 0.42


def test_v2_container_by_id_with_runtime_prefix() -> None:
    cid = cgroup.validate_container_id(f"containerd://{APP}")
    assert cgroup.read_cpu_stat(V2, UID, None, cid, []).path.endswith(f"cri-containerd-{APP}.scope/cpu.stat")


def test_v2_whole_pod_when_no_container_is_named() -> None:
    found = cgroup.read_cpu_stat(V2, UID, None, None, BUNDLES)
    assert found.path == f"{POD_DIR}/cpu.stat"
    assert throttled_ratio(found.content) == 0.0


def test_v1_cgroupfs_guaranteed_pod() -> None:
    found = cgroup.read_cpu_stat(V1, V1_UID, None, "9f8e7d6c5b4a39281706f5e4d3c2b1a0" * 2, [])
    assert found.version == "v1"
    assert found.path.startswith(f"cpu,cpuacct/kubepods/pod{V1_UID}/")
    assert throttled_ratio(found.content) == 0.0042


def test_unknown_container_lists_the_pods_containers() -> None:
    with pytest.raises(AgentError) as caught:
        cgroup.read_cpu_stat(V2, UID, "sidecar", None, BUNDLES)
    assert caught.value.status == 404
    assert caught.value.expected == "one of the pod's containers: app"  # the pause sandbox is not listed


def test_names_need_the_runtime_bundles() -> None:
    with pytest.raises(AgentError) as caught:
        cgroup.read_cpu_stat(V2, UID, "app", None, ["/nonexistent/{id}"])
    assert caught.value.status == 404
    assert "container_id" not in caught.value.message and "64 hex" in caught.value.expected


def test_pod_not_on_this_node() -> None:
    with pytest.raises(AgentError) as caught:
        cgroup.read_cpu_stat(V2, "00000000-0000-0000-0000-000000000000", None, None, BUNDLES)
    assert caught.value.status == 404
    assert "not running on this node" in caught.value.message


@pytest.mark.parametrize("raw", ["../../etc", "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5/../..", "", "ABC",
                                 "6F1C2D3E-4B5A-4C6D-8E7F-90A1B2C3D4E5", "6f1c2d3e_4b5a_4c6d_8e7f_90a1b2c3d4e5",
                                 "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5\x00"])
def test_bad_pod_uid_is_a_400(raw: str) -> None:
    with pytest.raises(AgentError) as caught:
        cgroup.validate_uid(raw)
    assert caught.value.status == 400
    assert caught.value.expected == cgroup.UID_EXPECTED


@pytest.mark.parametrize("raw", ["../app", "App", "a" * 64, "-app", "app/cpu.stat", "app.scope"])
def test_bad_container_name_is_a_400(raw: str) -> None:
    with pytest.raises(AgentError) as caught:
        cgroup.validate_container(raw)
    assert caught.value.status == 400


def test_bad_container_id_is_a_400() -> None:
    with pytest.raises(AgentError):
        cgroup.validate_container_id("../" + APP)


def test_a_symlink_out_of_the_cgroup_root_is_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "cgroup"
    shutil.copytree(V2, root, symlinks=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "cpu.stat").write_text("nr_periods 1\nnr_throttled 1\n")
    pod = root / POD_DIR
    shutil.rmtree(pod)
    pod.symlink_to(outside)
    with pytest.raises(AgentError) as caught:
        cgroup.read_cpu_stat(root, UID, None, None, BUNDLES)
    assert caught.value.status == 404
