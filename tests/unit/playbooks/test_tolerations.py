"""`tolerates`: Kubernetes' toleration matching over the fact strings (key=value:Effect)."""

from __future__ import annotations

import pytest

from playbooks.tolerations import tolerates


@pytest.mark.parametrize(("tolerations", "taint", "expected"), [
    (["nvidia.com/gpu:NoSchedule"], "nvidia.com/gpu=present:NoSchedule", True),   # Exists, any value
    (["nvidia.com/gpu:NoSchedule"], "nvidia.com/gpu:NoSchedule", True),
    (["nvidia.com/gpu:NoExecute"], "nvidia.com/gpu=present:NoSchedule", False),   # another effect
    (["nvidia.com/gpu"], "nvidia.com/gpu=present:NoExecute", True),               # no effect: every effect
    (["dedicated=infra:NoSchedule"], "dedicated=infra:NoSchedule", True),         # Equal, same value
    (["dedicated=infra:NoSchedule"], "dedicated=ml:NoSchedule", False),           # Equal, other value
    (["*"], "node-role.kubernetes.io/control-plane:NoSchedule", True),            # empty key, Exists
    (["*:NoExecute"], "spot=true:NoSchedule", False),
    ([], "spot=true:NoSchedule", False),
    (["node.kubernetes.io/not-ready:NoExecute"], "node-role.kubernetes.io/control-plane:NoSchedule", False),
])
def test_tolerates(tolerations: list[str], taint: str, expected: bool) -> None:
    assert tolerates(tolerations, taint) is expected
