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
], ids=["alert", "creating", "config-error", "mount", "sandbox", "crash-loop", "image-pull", "transient-mount-running",
        "mount-pending", "waiting-says-so"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
