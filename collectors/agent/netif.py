"""The node's network interfaces and their MTUs, from sysfs: what `ip -d link` would show, as JSON.

Seed 000:61-72: an MTU mismatch shows only on large payloads or on overlay paths, so the check needs every
interface on the path at once: the uplink, the overlay tunnel (VXLAN, Geneve, WireGuard, IP-in-IP) and the pod
side (veth, bridge). The agent runs with hostNetwork, so /sys/class/net is the node's own.

Answer (schema "triagebot.netlinks/v1"): per interface its name, MTU, operstate, whether a device backs it
(a physical NIC), and the kernel's DEVTYPE (vxlan, geneve, wireguard, bridge, ...) when it has one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collectors.agent.nvml import now_iso

SCHEMA = "triagebot.netlinks/v1"
MAX_INTERFACES = 4096  # a node with tens of thousands of veths still answers in bounded time and size


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip()
    except OSError:
        return None


def _devtype(uevent: str | None) -> str:
    for line in (uevent or "").splitlines():
        if line.startswith("DEVTYPE="):
            return line.split("=", 1)[1].strip()
    return ""


def interfaces(sys_root: Path, node: str = "") -> dict[str, Any]:
    """Every interface under <sys_root>/class/net, sorted by name; unreadable fields are left out."""
    doc: dict[str, Any] = {"schema": SCHEMA, "node": node, "captured_at": now_iso()}
    base = sys_root / "class" / "net"
    try:
        names = sorted(p.name for p in base.iterdir())
    except OSError as err:
        return doc | {"available": False, "error": f"cannot list {base}: {err.strerror or err}"}
    out: list[dict[str, Any]] = []
    for name in names[:MAX_INTERFACES]:
        entry: dict[str, Any] = {"name": name}
        mtu = _read(base / name / "mtu")
        if mtu is not None and mtu.isdigit():
            entry["mtu"] = int(mtu)
        state = _read(base / name / "operstate")
        if state:
            entry["operstate"] = state
        entry["physical"] = (base / name / "device").exists()
        if devtype := _devtype(_read(base / name / "uevent")):
            entry["devtype"] = devtype
        out.append(entry)
    doc |= {"available": True, "interfaces": out}
    if len(names) > MAX_INTERFACES:
        doc["truncated"] = {"interfaces": len(names) - MAX_INTERFACES}
    return doc
