"""A pod's (or one container's) cgroup cpu.stat, found from the pod UID alone.

Layouts the kubelet creates, by cgroup version and driver (QoS class: guaranteed pods sit directly
under kubepods, the others one level down):

    v2, systemd   kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid with _>.slice/
    v2, cgroupfs  kubepods/burstable/pod<uid>/
    v1            the same two shapes under the cpu controller: cpu,cpuacct/ or cpu/

Container cgroups below the pod are named by container id (`cri-containerd-<id>.scope`, `crio-<id>.scope`,
`docker-<id>.scope`, or the bare id). The cgroup tree does not know container names, so a name is
matched against the runtime's bundle config.json, whose CRI annotations carry it. Inputs are validated
against strict patterns before they become path parts, and every path is checked to stay under the root.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from collectors.agent.bounded import read_head
from collectors.agent.errors import AgentError, bad_request, not_found

POD_UID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32}")
CONTAINER_NAME = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?")
_CONTAINER_ID = re.compile(r"(?:[a-z][a-z0-9-]{0,19}://)?([0-9a-f]{64})")
_SCOPE = re.compile(r"(?:cri-containerd-|crio-|docker-)?([0-9a-f]{64})(?:\.scope)?")
_QOS = ("", "burstable", "besteffort")
_NAME_ANNOTATIONS = ("io.kubernetes.cri.container-name", "io.kubernetes.container.name")
_BUNDLE_CAP = 4 * 1024 * 1024
_STAT_CAP = 64 * 1024

UID_EXPECTED = "a pod UID: 36-character UUID (metadata.uid) or 32 hex digits (static pod), lowercase"
NAME_EXPECTED = "a container name: DNS-1123 label, lowercase letters, digits and '-', at most 63 characters"
ID_EXPECTED = "a container id: 64 hex digits, optionally with its runtime prefix (containerd://...)"


@dataclass(frozen=True)
class CpuStat:
    content: str
    path: str  # the cpu.stat file relative to the cgroup root, for the command a person would run
    version: str  # "v1" or "v2"


def validate_uid(raw: str | None) -> str:
    if not raw:
        raise bad_request("pod_uid is required", UID_EXPECTED)
    if POD_UID.fullmatch(raw) is None:
        raise bad_request(f"pod_uid={raw[:80]!r} is not a pod UID", UID_EXPECTED)
    return raw


def validate_container(raw: str | None) -> str | None:
    if raw is None or raw == "":
        return None
    if CONTAINER_NAME.fullmatch(raw) is None:
        raise bad_request(f"container={raw[:80]!r} is not a container name", NAME_EXPECTED)
    return raw


def validate_container_id(raw: str | None) -> str | None:
    if raw is None or raw == "":
        return None
    m = _CONTAINER_ID.fullmatch(raw)
    if m is None:
        raise bad_request(f"container_id={raw[:80]!r} is not a container id", ID_EXPECTED)
    return m.group(1)


def _hierarchies(root: Path) -> list[tuple[str, Path]]:
    """(version, directory that holds kubepods) in the order to try."""
    if (root / "cgroup.controllers").is_file():
        return [("v2", root)]
    return [("v1", root / name) for name in ("cpu,cpuacct", "cpu", "cpuacct,cpu")]


def _pod_candidates(base: Path, uid: str) -> list[Path]:
    under = uid.replace("-", "_")
    out: list[Path] = []
    for qos in _QOS:
        if qos:
            out.append(base / "kubepods.slice" / f"kubepods-{qos}.slice" / f"kubepods-{qos}-pod{under}.slice")
            out.append(base / "kubepods" / qos / f"pod{uid}")
        else:
            out.append(base / "kubepods.slice" / f"kubepods-pod{under}.slice")
            out.append(base / "kubepods" / f"pod{uid}")
    return out


def _inside(path: Path, root: Path) -> bool:
    """Whether the path, with symlinks resolved, is still under the root."""
    try:
        return path.resolve().is_relative_to(root.resolve())
    except OSError:
        return False


def find_pod_dir(root: Path, uid: str) -> tuple[str, Path]:
    for version, base in _hierarchies(root):
        for candidate in _pod_candidates(base, uid):
            if candidate.is_dir() and _inside(candidate, root):
                return version, candidate
    raise not_found(f"no cgroup for pod {uid} under {root} (kubepods.slice or kubepods, any QoS class): "
                    "the pod is not running on this node")


def container_dirs(pod_dir: Path) -> dict[str, Path]:
    """Container id -> its cgroup directory, for every container cgroup under the pod."""
    out: dict[str, Path] = {}
    for child in sorted(pod_dir.iterdir()):
        m = _SCOPE.fullmatch(child.name)
        if m and child.is_dir():
            out[m.group(1)] = child
    return out


def bundle_spec(container_id: str, bundle_dirs: list[str]) -> dict[str, object] | None:
    """The OCI runtime spec (config.json) of a container id from the first runtime bundle that has it."""
    for template in bundle_dirs:
        path = Path(template.replace("{id}", container_id)) / "config.json"
        try:
            spec = json.loads(read_head(path, _BUNDLE_CAP))
        except (OSError, ValueError):
            continue
        return spec if isinstance(spec, dict) else None
    return None


def container_name(container_id: str, bundle_dirs: list[str]) -> str | None:
    """The Kubernetes container name of a container id, from its runtime bundle's CRI annotations; None for a
    sandbox (pause) container, which has no container-name annotation."""
    spec = bundle_spec(container_id, bundle_dirs)
    annotations = spec.get("annotations") if spec is not None else None
    if not isinstance(annotations, dict):
        return None
    for key in _NAME_ANNOTATIONS:
        name = annotations.get(key)
        if isinstance(name, str) and name:
            return name
    return None


def named_containers(pod_dir: Path, bundle_dirs: list[str]) -> dict[str, str]:
    """Container name -> container id for every named container cgroup under the pod (sandboxes left out)."""
    return {name: cid for cid in container_dirs(pod_dir) if (name := container_name(cid, bundle_dirs))}


def _pick_container(pod_dir: Path, uid: str, name: str | None, cid: str | None,
                    bundle_dirs: list[str]) -> Path:
    dirs = container_dirs(pod_dir)
    if cid is not None:
        if cid not in dirs:
            raise not_found(f"container id {cid[:12]} has no cgroup in pod {uid}",
                            f"one of the pod's container ids: {', '.join(c[:12] for c in dirs) or 'none'}")
        return dirs[cid]
    names = {cname: dirs[c] for cname, c in named_containers(pod_dir, bundle_dirs).items()}
    if name in names:
        return names[name]
    if not names:
        raise not_found(f"container {name!r} not found in pod {uid}: no container names readable from the "
                        "runtime bundles (TRIAGEBOT_AGENT_CONTAINER_BUNDLE_DIRS)", ID_EXPECTED)
    raise not_found(f"container {name!r} not found in pod {uid}",
                    "one of the pod's containers: " + ", ".join(sorted(names)))


def read_cpu_stat(root: Path, uid: str, name: str | None, cid: str | None, bundle_dirs: list[str]) -> CpuStat:
    """cpu.stat of the container (by name or id), or of the whole pod when neither is given."""
    version, pod_dir = find_pod_dir(root, uid)
    target = pod_dir if name is None and cid is None else _pick_container(pod_dir, uid, name, cid, bundle_dirs)
    path = target / "cpu.stat"
    if not _inside(path, root):
        raise not_found(f"cpu.stat of pod {uid} resolves outside {root}")
    try:
        content = read_head(path, _STAT_CAP)
    except OSError as err:
        raise AgentError(404, f"cannot read {path}: {err.strerror or err}") from None
    return CpuStat(content, str(path.relative_to(root)), version)
