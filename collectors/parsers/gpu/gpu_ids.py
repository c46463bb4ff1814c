"""Which GPU is which: the UUID, board serial and PCI bus id that upstream tools print for each GPU.

Read where those tools print them (NVIDIA driver 450-580's nvidia-smi, dcgm-exporter 3.x):

- `nvidia-smi -q`: a `GPU 00000000:AF:00.0` heading per GPU, then `Serial Number`, `GPU UUID` and, under `PCI`,
  `Bus Id` lines (`N/A` where the board has no readable serial). `Chassis Serial Number` names the rack, not a GPU.
- `nvidia-smi -L`: `GPU 0: <name> (UUID: GPU-…)` per GPU (MIG devices under it carry `MIG-` UUIDs: not boards).
- dcgm-exporter's samples: the `UUID` label on every series, and `pci_bus_id` from 3.3.6 (NVIDIA/dcgm-exporter#326).

Each GPU becomes one `gpu.identities` entry, `uuid=GPU-… serial=… bus=0000:af:00` with the parts the text gives
(the bus id in the kernel's spelling, as `xid.pci_bus_ids` has it), so an Xid's bus id can be joined to the
board's UUID and serial (bot/memory/keys.py). Pure; RE2 patterns.
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.sink import FactSink
from collectors.text import normalise

_HEX = "[0-9A-Fa-f]"
# google-re2 ships no type hints.
_QUERY_GPU: Any = re2.compile(rf"^GPU\s+({_HEX}{{4,8}}:{_HEX}{{2}}:{_HEX}{{2}}\.{_HEX})\s*$")
_FIELD: Any = re2.compile(r"^\s+(Serial Number|GPU UUID|Bus Id)\s*:\s*(\S+)\s*$")
_LIST: Any = re2.compile(r"^GPU\s+\d+:\s.*\(UUID:\s*(GPU-[0-9A-Fa-f-]{8,64})\)\s*$")
_UUID_LABEL: Any = re2.compile(r'[{,]\s*UUID="(GPU-[0-9A-Fa-f-]{8,64})"')
_BUS_LABEL: Any = re2.compile(r'[{,]\s*pci_bus_id="([0-9A-Fa-f:.]{7,20})"')
_BUS: Any = re2.compile(rf"^(?:({_HEX}{{4,8}}):)?({_HEX}{{2}}):({_HEX}{{2}})(?:\.{_HEX})?$")
_UUID: Any = re2.compile(r"^GPU-[0-9A-Fa-f-]{8,64}$")
_ABSENT = ("N/A", "[N/A]", "Unknown", "0")


def bus_id(text: str) -> str | None:
    """A PCI address as the kernel (0000:2b:00), nvidia-smi (00000000:2B:00.0) or dcgm-exporter prints it, in the
    kernel's spelling (4-digit domain, lower case, no function); None when it is not one."""
    found = _BUS.match(text.strip())
    if found is None:
        return None
    domain = (found.group(1) or "0000")[-4:]
    return f"{domain}:{found.group(2)}:{found.group(3)}".lower()


def entry(uuid: str | None = None, serial: str | None = None, bus: str | None = None) -> str | None:
    """One GPU's identity as the fact holds it; None when nothing identifies it."""
    parts = [f"uuid={uuid.lower()}" if uuid else "", f"serial={serial}" if serial else "",
             f"bus={bus}" if bus else ""]
    text = " ".join(p for p in parts if p)
    return text or None


def parse_entry(text: str) -> dict[str, str]:
    """`uuid=… serial=… bus=…` back into its parts (the reader of the fact: bot/memory/keys.py)."""
    out: dict[str, str] = {}
    for part in text.split():
        name, sep, value = part.partition("=")
        if sep and name in ("uuid", "serial", "bus") and value:
            out[name] = value
    return out


class _Gpu:
    def __init__(self, line: int, bus: str | None = None) -> None:
        self.line, self.bus = line, bus
        self.uuid: str | None = None
        self.serial: str | None = None


# Where else a paste puts these lines: under the kernel log it is about (an `nvidia-smi -q` pasted below the Xid
# lines is read as one kernel log), or among lines no structured kind claimed.
_ALSO_IN = (ArtifactKind.KERNEL_LOG, ArtifactKind.TEXT)


def read(artifact: Artifact) -> ParseResult:
    """gpu.identities of a pasted artifact whose own parser does not read them (the signal layer's reader)."""
    if artifact.kind not in _ALSO_IN:
        return ParseResult()
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    read_ids(sink, lines)
    return sink.done()


def read_ids(sink: FactSink, lines: list[str]) -> None:
    """Every GPU the text identifies, once, cited to the first line or report section that names it (a scrape
    repeats each GPU's labels on every series)."""
    said: set[str] = set()
    current: _Gpu | None = None
    for number, line in enumerate(lines, 1):
        if len(line) > 4000 or not _may_identify(line):
            continue
        if (heading := _QUERY_GPU.match(line)) is not None:
            _emit(sink, current, said)
            current = _Gpu(number, bus_id(heading.group(1)))
        elif (field := _FIELD.match(line)) is not None:
            if field.group(1) == "GPU UUID" and (current is None or current.uuid):
                # A report cut below its heading: the UUID line (only nvidia-smi -q prints it) starts the GPU.
                _emit(sink, current, said)
                current = _Gpu(number)
            if current is not None:
                _field(current, field.group(1), field.group(2))
        elif (listed := _LIST.match(line)) is not None:
            _emit(sink, current, said)
            current = None
            _add(sink, entry(uuid=listed.group(1)), number, said)
        elif (label := _UUID_LABEL.search(line)) is not None:
            bus = _BUS_LABEL.search(line)
            _add(sink, entry(uuid=label.group(1), bus=bus_id(bus.group(1)) if bus else None), number, said)
    _emit(sink, current, said)


def _may_identify(line: str) -> bool:
    """What each of the patterns above needs, checked at C speed: most lines of a log hold none of it, and four RE2
    calls on each line of a 200,000-line kernel log were a quarter of its reading."""
    return line.startswith("GPU") or "UUID" in line or "Serial Number" in line or "Bus Id" in line


def _field(gpu: _Gpu, name: str, value: str) -> None:
    if value in _ABSENT:
        return
    if name == "GPU UUID" and _UUID.match(value):
        gpu.uuid = value
    elif name == "Serial Number":
        gpu.serial = value
    elif name == "Bus Id" and gpu.bus is None:
        gpu.bus = bus_id(value)


def _emit(sink: FactSink, gpu: _Gpu | None, said: set[str]) -> None:
    # A report section with only its bus id says nothing the Xid line's own bus id does not.
    if gpu is not None and (gpu.uuid or gpu.serial):
        _add(sink, entry(gpu.uuid, gpu.serial, gpu.bus), gpu.line, said)


def _add(sink: FactSink, value: str | None, line: int, said: set[str]) -> None:
    if value is not None and value not in said:
        said.add(value)
        sink.add("gpu.identities", [value], line)
