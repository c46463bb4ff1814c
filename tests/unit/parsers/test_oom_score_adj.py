"""The victim's oom_score_adj from the kernel's kill line (kernel.oom_victim_score_adj), read from real pastes in
tests/realworld (each case.yaml names its source thread)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import kernel

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "oom-killed"


def adj(text: str) -> list[object]:
    result = kernel.parse(Artifact(id="k", kind=ArtifactKind.KERNEL_LOG, content=text))
    return [f.value for f in result.facts if f.name == "kernel.oom_victim_score_adj"]


@pytest.mark.parametrize(("case", "expected"), [
    # A Burstable PHP worker killed by its memory cgroup (minikube#15467, a Russian journal).
    ("minikube-15467-russian-journal-memcg-kill-php-in-kubepods", [992]),
    # A node-wide kill of a process outside any pod (reportportal#2103): adj 0.
    ("reportportal-2103-global-oom-uwsgi-constraint-none", [0]),
])
def test_the_kill_line_gives_the_victims_score_adj(case: str, expected: list[int]) -> None:
    assert adj((REALWORLD / case / "evidence.txt").read_text(encoding="utf-8")) == expected


def test_guaranteed_victims_read_negative_and_the_highest_of_several_wins() -> None:
    # A kill line of aws-efs-csi-driver#1218's paste (a Guaranteed pod's process, -997) alone, then beside one of
    # minikube#15467's (992): the highest is the one that says a QoS class made the victim an early pick.
    efs = ("[18149.128628] Memory cgroup out of memory: Killed process 142321 (openssl) total-vm:38688kB, "
           "anon-rss:484kB, file-rss:2028kB, shmem-rss:0kB, UID:0 pgtables:108kB oom_score_adj:-997")
    php = ("дек 06 14:58:14 acerpredator kernel: Memory cgroup out of memory: Killed process 636206 (php) "
           "total-vm:512864kB, anon-rss:203564kB, file-rss:1004kB, shmem-rss:56812kB, UID:1000 pgtables:664kB "
           "oom_score_adj:992")
    assert adj(efs) == [-997]
    assert adj(efs + "\n" + php) == [992]


def test_a_kill_line_without_the_field_reads_nothing() -> None:
    # Kernels before 4.19 print no oom_score_adj on the kill line.
    assert adj("Out of memory: Kill process 994 (containerd) score 4 or sacrifice child") == []
