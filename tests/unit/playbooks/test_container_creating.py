"""The container-creating playbook: what keeps a scheduled pod from starting its containers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import fires, judge, rendered_cleanly

PLAYBOOK = "container-creating"


def test_waiting_alone_leaves_everything_open() -> None:
    finding = judge(PLAYBOOK, {"container.waiting.reason": "ContainerCreating"})
    assert {h.status for h in finding.hypotheses} == {"unknown"}
    by_id = {h.id: h for h in finding.hypotheses}
    assert "volume.errors" in by_id["multi-attach"].needs
    assert "sandbox.errors" in by_id["cni-ip-exhaustion"].needs
    assert rendered_cleanly(finding)


@pytest.mark.parametrize(("facts", "expected"), [
    ({"alert.symptoms": ["container-creating"]}, True),
    ({"container.waiting.reason": "ContainerCreating"}, True),
    ({"container.waiting.reason": "CreateContainerConfigError"}, True),
    ({"volume.mount_failed": True}, True),
    ({"sandbox.errors": ["ip-exhausted"]}, True),
    ({"container.waiting.reason": "CrashLoopBackOff"}, False),
    ({"container.waiting.reason": "ImagePullBackOff"}, False),
    # A Running pod got its volumes, sandbox and objects: a mount failure in its events was transient.
    ({"volume.mount_failed": True, "pod.missing_refs": ["secret/cert"], "pod.phase": "Running"}, False),
    ({"volume.mount_failed": True, "pod.phase": "Pending"}, True),
    ({"container.waiting.reason": "ContainerCreating", "pod.phase": "Running"}, True),
    # A container started after the mount failure (a later Started event): the wait was transient.
    ({"volume.mount_failed": True, "pod.missing_refs": ["secret/cert"], "pod.setup_resolved": True}, False),
    ({"container.waiting.reason": "CreateContainerConfigError", "pod.setup_resolved": True}, True),
], ids=["alert", "creating", "config-error", "mount", "sandbox", "crash-loop", "image-pull", "transient-mount-running",
        "mount-pending", "waiting-says-so", "transient-mount-started", "config-error-after-start"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_a_mount_failure_a_container_started_after_holds_nothing() -> None:
    # The playbook can still run (someone said the pod "reports FailedMount"): a later Started event rules the
    # missing object and the mount out, as the kubelet mounts every volume before any container starts.
    facts = {"volume.mount_failed": True, "volume.errors": ["secret-not-found"], "pod.missing_refs": ["secret/cert"],
             "pod.setup_resolved": True}
    by_id = {h.id: h.status for h in judge(PLAYBOOK, facts).hypotheses}
    assert by_id["missing-secret-or-configmap"] == "ruled-out"
    assert by_id["volume-attach-or-mount"] == "ruled-out"
    unresolved = {h.id: h.status for h in judge(PLAYBOOK, {**facts, "pod.setup_resolved": False}).hypotheses}
    assert unresolved["missing-secret-or-configmap"] == "confirmed"
