"""The container-creating playbook: what keeps a scheduled pod from starting its containers."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.playbooks.table import check_case, fires, judge, rendered_cleanly

PLAYBOOK = "container-creating"
TOP_LEVEL = ["multi-attach", "volume-attach-or-mount", "missing-secret-or-configmap", "cni-ip-exhaustion",
             "cni-not-ready", "slow-image-pull", "pvc-terminating"]

CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    ("rwo-volume-held-by-old-node",
     {"container.waiting.reason": "ContainerCreating", "volume.mount_failed": True,
      "volume.errors": ["multi-attach", "mount-timeout"]},
     {"multi-attach": "confirmed", "volume-attach-or-mount": "likely"}, "multi-attach"),
    ("csi-driver-not-registered",
     {"volume.mount_failed": True, "volume.errors": ["csi-driver-missing", "mount-failed"]},
     {"volume-attach-or-mount": "confirmed"}, "volume-attach-or-mount"),
    ("mount-timeout-alone-is-likely",
     {"volume.mount_failed": True, "volume.errors": ["mount-timeout"]},
     {"volume-attach-or-mount": "likely"}, "volume-attach-or-mount"),
    ("secret-volume-missing",
     {"volume.mount_failed": True, "volume.errors": ["secret-not-found"], "pod.missing_refs": ["secret/db-creds"]},
     {"missing-secret-or-configmap": "confirmed", "volume-attach-or-mount": "likely"},
     "missing-secret-or-configmap"),
    ("env-from-missing-configmap",
     {"container.waiting.reason": "CreateContainerConfigError", "pod.missing_refs": ["configmap/app-config"]},
     {"missing-secret-or-configmap": "confirmed"}, "missing-secret-or-configmap"),
    ("pod-cidr-exhausted",
     {"container.waiting.reason": "ContainerCreating", "sandbox.errors": ["ip-exhausted"]},
     {"cni-ip-exhaustion": "confirmed"}, "cni-ip-exhaustion"),
    ("cni-agent-down",
     {"sandbox.errors": ["cni-not-ready"]}, {"cni-not-ready": "confirmed"}, "cni-not-ready"),
    ("big-image-still-pulling",
     {"container.waiting.reason": "ContainerCreating", "image.pulling": True},
     {"slow-image-pull": "likely"}, "slow-image-pull"),
    ("image-pulled-in-five-minutes",
     {"container.waiting.reason": "ContainerCreating", "image.pulling": False, "image.pull_seconds": 301.2},
     {"slow-image-pull": "confirmed"}, "slow-image-pull"),
    ("fast-pull-is-ruled-out",
     {"container.waiting.reason": "ContainerCreating", "image.pulling": False, "image.pull_seconds": 2.1,
      "pvc.terminating": True},
     {"slow-image-pull": "ruled-out", "pvc-terminating": "confirmed"}, "pvc-terminating"),
]


@pytest.mark.parametrize(("facts", "expected", "lead"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(facts: dict[str, Any], expected: dict[str, str], lead: str) -> None:
    check_case(PLAYBOOK, TOP_LEVEL, facts, expected, lead)


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
], ids=["alert", "creating", "config-error", "mount", "sandbox", "crash-loop", "image-pull"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected
