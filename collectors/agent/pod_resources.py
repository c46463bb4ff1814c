"""Which pod holds which GPU, from the kubelet PodResources API.

The API itself is gRPC on /var/lib/kubelet/pod-resources/kubelet.sock, and this build has no gRPC client
(grpcio is not a dependency). Until it is, the agent reads a JSON dump of the List answer, in the
protobuf JSON mapping (camelCase, as `grpcurl` prints it) or snake_case, from
TRIAGEBOT_AGENT_POD_RESOURCES_JSON; without one every answer says "pod-resources unavailable" and GPUs
are reported without pods. Device ids of `nvidia.com/gpu` are GPU UUIDs; time-slicing appends `::<n>`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from collectors.agent.bounded import read_head

_CAP = 16 * 1024 * 1024
_GPU_RESOURCES = ("nvidia.com/gpu",)


@dataclass
class PodResources:
    available: bool
    note: str = ""
    by_device: dict[str, list[str]] = field(default_factory=dict)  # GPU UUID -> ["namespace/pod/container"]

    def describe(self) -> dict[str, Any]:
        return {"available": self.available, "note": self.note}


def _get(obj: dict[str, Any], snake: str, camel: str) -> Any:
    return obj.get(snake, obj.get(camel))


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def parse_dump(doc: Any) -> dict[str, list[str]]:
    """GPU UUID -> the containers holding it, from a PodResources List answer."""
    out: dict[str, list[str]] = {}
    pods = _list(_get(doc, "pod_resources", "podResources")) if isinstance(doc, dict) else []
    for pod in pods:
        if not isinstance(pod, dict):
            continue
        prefix = f"{pod.get('namespace', '')}/{pod.get('name', '')}"
        for container in filter(lambda c: isinstance(c, dict), _list(pod.get("containers"))):
            holder = f"{prefix}/{container.get('name', '')}"
            for device in filter(lambda d: isinstance(d, dict), _list(container.get("devices"))):
                if _get(device, "resource_name", "resourceName") not in _GPU_RESOURCES:
                    continue
                for raw in _list(_get(device, "device_ids", "deviceIds")):
                    uuid = str(raw).split("::", 1)[0]  # time-sliced replicas share the physical GPU
                    holders = out.setdefault(uuid, [])
                    if holder not in holders:
                        holders.append(holder)
    return out


def load(dump: Path | None, socket: Path) -> PodResources:
    if dump is not None:
        try:
            return PodResources(True, f"from {dump}", parse_dump(json.loads(read_head(dump, _CAP))))
        except (OSError, ValueError) as err:
            return PodResources(False, f"pod-resources unavailable: cannot read {dump}: {err}")
    if socket.exists():
        return PodResources(False, f"pod-resources unavailable: {socket} speaks gRPC and this agent has no gRPC "
                                   "client; set TRIAGEBOT_AGENT_POD_RESOURCES_JSON to a dump of its List answer")
    return PodResources(False, f"pod-resources unavailable: no kubelet socket at {socket}")
