"""The shop namespace the Slack end-to-end tests triage live: a `checkout` Service whose only pod keeps getting
OOMKilled, as the Kubernetes stand-in serves it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

CHECKOUT_POD = "checkout-6f7c9-x2x4p"
_IMAGE = "registry.example.com/shop/checkout:2.1"


def ago(minutes: int) -> str:
    return (datetime.now(UTC) - timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")


def checkout_objects(container: dict[str, Any], status: dict[str, Any]) -> list[dict[str, Any]]:
    """The Service and its pod, whose container `app` (its spec's `container` fields added) crash-loops after an
    OOM kill (its status's `status` fields added)."""
    return [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "checkout", "namespace": "shop"},
         "spec": {"selector": {"app": "checkout"}}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": {"name": CHECKOUT_POD, "namespace": "shop", "labels": {"app": "checkout"},
                      "creationTimestamp": ago(120)},
         "spec": {"nodeName": "node-a", "containers": [{"name": "app", "image": _IMAGE, **container}]},
         "status": {"phase": "Running", "containerStatuses": [
             {"name": "app", "ready": False, "restartCount": 4, "image": _IMAGE, **status,
              "state": {"waiting": {"reason": "CrashLoopBackOff"}},
              "lastState": {"terminated": {"reason": "OOMKilled", "exitCode": 137, "startedAt": ago(12),
                                           "finishedAt": ago(10)}}}]}},
    ]
