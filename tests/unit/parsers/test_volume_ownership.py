"""The fsGroup step of a volume mount, slow or failed (container-creating's volume-permissions), read from real
pastes (first_sight_pastes.yaml, each with its URL) and from the kubelet's wordings."""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.messages.k8s_messages import volume_errors
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import first_facts as facts


def test_the_kubelets_progress_event_says_the_ownership_change_is_slow() -> None:
    got = facts(PASTES["kubernetes-130398-volume-permission-change-in-progress"])
    assert got.get("volume.ownership_slow") is True


def test_a_failed_fsgroup_step_is_its_own_volume_error_not_a_mount_failure() -> None:
    got = facts(PASTES["zfs-localpv-547-apply-fsgroup-failed"])
    assert got.get("volume.errors") == ["fsgroup-failed"]
    assert got.get("volume.mount_failed") is True
    assert "volume.ownership_slow" not in got


@pytest.mark.parametrize("line", [
    # The later progress events, as kubernetes pkg/volume/volume_linux.go (logWarning) prints them.
    "Setting volume ownership for 29928e79-9a46-4ab9-8aab-c612e82ec0d9/volumes/kubernetes.io~csi/biginode/mount, "
    "processed 2654670 files.",
])
def test_the_later_progress_messages_are_read_too(line: str) -> None:
    assert facts(line).get("volume.ownership_slow") is True


def test_an_ordinary_mount_failure_stays_a_mount_failure() -> None:
    assert volume_errors('MountVolume.SetUp failed for volume "data" : mount failed: exit status 32') == [
        "mount-failed"]
