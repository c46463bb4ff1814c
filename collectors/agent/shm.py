"""The size and use of each container's /dev/shm, as `df /dev/shm` inside the pod would show them.

Seed 003's NCCL section and seed 004's DataLoader scenarios: ranks on one node exchange data through shared
memory, and a /dev/shm left at the runtime's 64 MiB default, or filled up, hangs NCCL or kills a DataLoader
worker with a bus error. The pod spec says what was asked for; only the tmpfs itself says what there is and how
full it is.

The agent finds the tmpfs without entering the container: the container's OCI spec (its runtime bundle's
config.json) names the host directory bind-mounted at /dev/shm, either the sandbox's shm (containerd
`.../io.containerd.grpc.v1.cri/sandboxes/<id>/shm`, CRI-O `.../overlay-containers/<id>/userdata/shm`) or a
memory-backed emptyDir under the kubelet's pods directory. That directory is a tmpfs mount on the host, which
the DaemonSet mounts read-only with HostToContainer propagation, and statvfs on it gives size and use. Only
sources under the configured roots are read, and each resolved path must stay under its root.

Answer (schema "triagebot.shm/v1"): per container its name, the mount's host source, `size_bytes` and
`used_bytes`, or the reason they could not be read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from collectors.agent import cgroup
from collectors.agent.errors import not_found
from collectors.agent.nvml import now_iso

SCHEMA = "triagebot.shm/v1"
SHM = "/dev/shm"


def _shm_source(spec: dict[str, object] | None) -> str | None:
    """The host path the OCI spec bind-mounts at /dev/shm, if it mounts one."""
    mounts = spec.get("mounts") if spec is not None else None
    for mount in mounts if isinstance(mounts, list) else []:
        if isinstance(mount, dict) and mount.get("destination") == SHM and isinstance(mount.get("source"), str):
            return str(mount["source"])
    return None


def _local_path(source: str, roots: dict[str, Path]) -> Path | None:
    """Where the agent sees a host path: under the mount that the DaemonSet gives for its root, or None when the
    path is under no configured root (the agent reads nothing else) or leaves its root once resolved."""
    for host_root, local_root in roots.items():
        prefix = host_root.rstrip("/") + "/"
        if source.startswith(prefix) and ".." not in source.split("/"):
            local = local_root / source[len(prefix):]
            try:
                if local.resolve().is_relative_to(local_root.resolve()):
                    return local
            except OSError:
                return None
    return None


def _usage(name: str, source: str | None, roots: dict[str, Path]) -> dict[str, Any]:
    entry: dict[str, Any] = {"container": name}
    if source is None:
        return entry | {"error": f"its OCI spec mounts nothing at {SHM}"}
    entry["source"] = source
    local = _local_path(source, roots)
    if local is None:
        return entry | {"error": "the source is under none of TRIAGEBOT_AGENT_SHM_ROOTS"}
    try:
        fs = os.statvfs(local)
    except OSError as err:
        return entry | {"error": f"cannot stat {local}: {err.strerror or err}"}
    return entry | {"size_bytes": fs.f_blocks * fs.f_frsize, "used_bytes": (fs.f_blocks - fs.f_bfree) * fs.f_frsize}


def shm_usage(cgroup_root: Path, uid: str, name: str | None, bundle_dirs: list[str], roots: dict[str, Path],
              node: str = "") -> dict[str, Any]:
    """/dev/shm of the named container, or of every container of the pod when no name is given."""
    _, pod_dir = cgroup.find_pod_dir(cgroup_root, uid)
    containers = cgroup.named_containers(pod_dir, bundle_dirs)
    if name is not None and name not in containers:
        raise not_found(f"container {name!r} not found in pod {uid}",
                        "one of the pod's containers: " + (", ".join(sorted(containers)) or "none readable"))
    chosen = {name: containers[name]} if name is not None else containers
    out = [_usage(cname, _shm_source(cgroup.bundle_spec(cid, bundle_dirs)), roots)
           for cname, cid in sorted(chosen.items())]
    return {"schema": SCHEMA, "node": node, "pod_uid": uid, "captured_at": now_iso(), "available": bool(out),
            "containers": out} | ({} if out else {"error": "no container names readable from the runtime bundles"})
