"""Xid lines from the kernel log, each mapped PCI BDF -> GPU UUID -> the pods holding that GPU.

The kernel names a GPU by PCI address (`NVRM: Xid (PCI:0000:18:00): 79, ...`), NVML by UUID and bus id
(`00000000:18:00.0`), the kubelet's device plugin by UUID. The BDF is compared as numbers (domain, bus,
device) because the two spell the domain with 4 and 8 digits.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from collectors.agent.kmsg import KmsgRecord

_XID = re.compile(
    r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F]{4,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?\):\s*(\d{1,5})")
_BDF = re.compile(r"([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?")
MAX_EVENTS = 512

Bdf = tuple[int, int, int]


def bdf_key(text: str) -> Bdf | None:
    m = _BDF.fullmatch(text.strip())
    return (int(m.group(1), 16), int(m.group(2), 16), int(m.group(3), 16)) if m else None


def kernel_xids(records: Iterable[KmsgRecord], boot: datetime) -> list[dict[str, Any]]:
    """One event per Xid line, in log order, with the kernel's BDF spelt as the kernel parser cites it."""
    out: list[dict[str, Any]] = []
    for record in records:
        line = record.lines[0]
        if "Xid" not in line:
            continue
        m = _XID.search(line)
        if m is None:
            continue
        domain, bus, device, code = m.groups()
        when = boot + timedelta(microseconds=record.usec)
        out.append({
            "time": when.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "source": "kernel",
            "pci_bus_id": f"{int(domain, 16):04x}:{bus.lower()}:{device.lower()}",
            "xid": int(code),
            "message": line.split(";", 1)[-1][:300],
        })
        if len(out) >= MAX_EVENTS:
            break
    return out


def attach(events: list[dict[str, Any]], devices: list[dict[str, Any]],
           pods_by_uuid: Mapping[str, list[str]]) -> None:
    """Fill in each event's GPU UUID (from its BDF) and pods (from the UUID), and each device's pods."""
    uuid_by_bdf: dict[Bdf, str] = {}
    for device in devices:
        uuid, bus_id = device.get("uuid"), device.get("pci_bus_id")
        if isinstance(uuid, str):
            device["pods"] = list(pods_by_uuid.get(uuid, []))
            key = bdf_key(bus_id) if isinstance(bus_id, str) else None
            if key is not None:
                uuid_by_bdf[key] = uuid
    for event in events:
        if "uuid" not in event and isinstance(event.get("pci_bus_id"), str):
            key = bdf_key(event["pci_bus_id"])
            if key is not None and key in uuid_by_bdf:
                event["uuid"] = uuid_by_bdf[key]
        uuid = event.get("uuid")
        event["pods"] = list(pods_by_uuid.get(uuid, [])) if isinstance(uuid, str) else []
