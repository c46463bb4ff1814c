"""`df /dev/shm` as people paste it, and the node agent's /v1/shm answer, to the size and use of /dev/shm."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import shm_usage


def facts(text: str) -> dict[str, object]:
    result = shm_usage.parse(Artifact(id="df", kind=ArtifactKind.DF, content=text))
    return {f.name: f.value for f in result.facts}


# https://www.sobyte.net/post/2022-04/k8s-pod-shared-memory/ : a pod on the runtime's default, filled with dd.
SOBYTE_FULL = """\
[root@centos-7df8445565-dvpnt /]# df -h|grep shm
Filesystem      Size  Used Avail Use% Mounted on
shm              64M   64M     0 100% /dev/shm
"""

# https://github.com/apecloud/kubeblocks/issues/6014 : a PostgreSQL pod whose /dev/shm is a memory volume.
KUBEBLOCKS_WHOLE_TABLE = """\
Filesystem      Size  Used Avail Use% Mounted on
overlay         457G  128G  307G  30% /
tmpfs            64M     0   64M   0% /dev
/dev/sda2       457G  128G  307G  30% /etc/hosts
tmpfs           126G  8.0K  126G   1% /kb-podinfo
tmpfs           126G   40K  126G   1% /dev/shm
tmpfs           126G   12K  126G   1% /run/secrets/kubernetes.io/serviceaccount
tmpfs            63G     0   63G   0% /proc/acpi
tmpfs            63G     0   63G   0% /proc/scsi
tmpfs            63G     0   63G   0% /sys/firmware
"""


def test_a_full_default_shm_in_a_pod() -> None:
    assert facts(SOBYTE_FULL) == {"pod.shm_size_bytes": 64 * 2**20, "pod.shm_used_ratio": 1.0}
    assert shm_usage.sniff(SOBYTE_FULL) == 90


def test_only_the_dev_shm_row_of_a_whole_table_is_read() -> None:
    # /dev (also 64M tmpfs) and /kb-podinfo are other filesystems: only /dev/shm speaks of shared memory.
    assert facts(KUBEBLOCKS_WHOLE_TABLE) == {"pod.shm_size_bytes": 126 * 2**30, "pod.shm_used_ratio": 0.01}


@pytest.mark.parametrize(("text", "size", "ratio"), [
    # coreutils src/df.c default (1K blocks) and busybox df, as each prints its header and a /dev/shm row.
    ("Filesystem     1K-blocks  Used Available Use% Mounted on\nshm                65536 65536         0 100% /dev/shm",
     64 * 2**20, 1.0),
    ("Filesystem           1K-blocks      Used Available Use% Mounted on\n"
     "tmpfs                 16176264         0  16176264   0% /dev/shm", 16176264 * 1024, 0.0),
    ("Filesystem                Size      Used Available Use% Mounted on\n"
     "shm                      64.0M     64.0M         0 100% /dev/shm", 64 * 2**20, 1.0),
    ("Filesystem     1M-blocks  Used Available Use% Mounted on\nshm                   64    13        51  20% /dev/shm",
     64 * 2**20, 0.2),
    ("Filesystem      Size  Used Avail Use% Mounted on\ntmpfs           7.9G  1.2G  6.7G  15% /dev/shm",
     int(7.9 * 2**30), 0.15),
])
def test_every_df_layout_gives_size_and_use(text: str, size: int, ratio: float) -> None:
    assert facts(text) == {"pod.shm_size_bytes": size, "pod.shm_used_ratio": ratio}


@pytest.mark.parametrize("text", [
    "Filesystem      Size  Used Avail Use% Mounted on\noverlay         457G  128G  307G  30% /",
    "shm              64M   64M     0 100% /dev/shm",  # a row with no header: the columns are not known
    "My /dev/shm is 64MB and there's plenty of space",
    "",
])
def test_other_filesystems_rows_without_a_header_and_prose_give_nothing(text: str) -> None:
    assert facts(text) == {}


def test_the_agents_answer_gives_each_containers_shm() -> None:
    doc = {"schema": "triagebot.shm/v1", "node": "gpu-node-3", "pod_uid": "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5",
           "available": True, "containers": [
               {"container": "trainer", "source": "/run/containerd/io.containerd.grpc.v1.cri/sandboxes/ab/shm",
                "size_bytes": 67108864, "used_bytes": 66060288},
               {"container": "sidecar", "error": "its OCI spec mounts nothing at /dev/shm"}]}
    text = json.dumps(doc, indent=2)
    result = shm_usage.parse(Artifact(id="shm", kind=ArtifactKind.DF, content=text))
    assert {f.name: f.value for f in result.facts} == {"pod.shm_size_bytes": 67108864, "pod.shm_used_ratio": 0.984}
    assert result.problems == ["/dev/shm of container sidecar: its OCI spec mounts nothing at /dev/shm"]
    assert shm_usage.sniff(text) == 95


def test_an_unavailable_answer_is_a_problem_not_a_fact() -> None:
    text = json.dumps({"schema": "triagebot.shm/v1", "available": False, "error": "no container names readable"})
    result = shm_usage.parse(Artifact(id="shm", kind=ArtifactKind.DF, content=text))
    assert result.facts == [] and result.problems == ["/dev/shm sizes unavailable: no container names readable"]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=400))
def test_garbage_never_raises(text: str) -> None:
    header = "Filesystem Size Used Avail Use% Mounted on\n"
    shm_usage.parse(Artifact(id="x", kind=ArtifactKind.DF, content=header + text))
    assert 0 <= shm_usage.sniff(text) <= 100
