"""The scope a triage starts from before Kubernetes narrows it (and keeps when there is no cluster access)."""

from __future__ import annotations

import pytest

from collectors.live.collect import initial_scope
from collectors.models import Target


@pytest.mark.parametrize(
    ("target", "namespace", "service"),
    [
        (Target(namespace="shop", service="checkout"), "shop", "checkout"),
        (Target(service="checkout"), "default", "checkout"),
        # A node is cluster-scoped, also when a request came with a namespace (`/triage node/x` defaults one).
        (Target(service="node/gpu-node-2", node="gpu-node-2"), "", None),
        (Target(namespace="default", service="node/gpu-node-2"), "", None),
        (Target(node="gpu-node-2"), "", None),
        # A namespace as a whole names no Service.
        (Target(namespace="ml", service="namespace/ml"), "ml", None),
    ],
)
def test_initial_scope(target: Target, namespace: str, service: str | None) -> None:
    scope = initial_scope(target)
    assert (scope.namespace, scope.service) == (namespace, service)
