"""NVML snapshots (the node agent's /v1/nvml JSON, schema "triagebot.nvml/v1") to GPU health facts.

One fact per name for the whole node, taken from the worst GPU (hottest, most ECC errors, ...), because
the vocabulary merges across artifacts by max/any/union anyway; the excerpt names that GPU by index,
UUID and bus id. Citations point at the line of the value in the pretty-printed JSON, found in document
order (devices by their "index" line, events by their "xid" line), so a compact one-line snapshot still
parses, citing line 1.

A snapshot saying NVML is unavailable gives no facts, only a problem: missing GPU evidence leaves
hypotheses unknown, never ruled out.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from collectors.catalogs.xid import secondary_codes
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.metrics.metric_facts import THROTTLE_BITS
from collectors.parsers.sink import FactSink
from collectors.sniffers.nvml import sniff
from collectors.text import normalise

_NOT_SUPPORTED = "Not Supported"
_LOST_TEXT = "GPU is lost"
_BDF = re.compile(r"([0-9a-fA-F]{1,8}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-7])?")
_MAX_TEXT = 16 * 1024 * 1024


# ---- finding lines ----------------------------------------------------------------------------------


class _Lines:
    """Line numbers of keys in the JSON text, searched forward from a starting line."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def find(self, pattern: str, start: int = 1, stop: int | None = None) -> int:
        """The first 1-based line in [start, stop) matching the regex, or 0."""
        rx = re.compile(pattern)
        end = len(self.lines) + 1 if stop is None else stop
        for number in range(max(start, 1), end):
            if rx.search(self.lines[number - 1]):
                return number
        return 0

    def key(self, name: str, start: int = 1, stop: int | None = None) -> int:
        return self.find(r'"' + re.escape(name) + r'"\s*:', start, stop)


@dataclass(frozen=True)
class _Gpu:
    """One device of the snapshot and the lines it spans."""

    data: dict[str, Any]
    start: int
    stop: int  # first line after the device (exclusive bound for searches)

    @property
    def label(self) -> str:
        parts = [f"GPU {self.data.get('index', '?')}"]
        parts += [str(self.data[k]) for k in ("uuid", "pci_bus_id") if isinstance(self.data.get(k), str)]
        return " ".join(parts)

    def line(self, where: _Lines, *keys: str) -> int:
        """The line of a (nested) key inside this device; the device's first line when not found."""
        at = self.start
        for key in keys:
            found = where.key(key, at, self.stop)
            if not found:
                return self.start or 1
            at = found
        return at or 1


def _locate_devices(devices: list[dict[str, Any]], where: _Lines) -> list[_Gpu]:
    start = where.key("devices") or 1
    starts: list[int] = []
    for device in devices:
        index = device.get("index")
        pattern = r'"index"\s*:\s*' + (re.escape(str(index)) + r"\b" if isinstance(index, int) else "")
        found = where.find(pattern, start + (1 if starts else 0)) or start
        starts.append(found)
        start = found
    if not starts:
        return []
    limit = where.key("xid_events", starts[-1]) or len(where.lines) + 1
    stops = [*starts[1:], limit]
    return [_Gpu(d, s, max(e, s + 1)) for d, s, e in zip(devices, starts, stops, strict=True)]


# ---- reading values ---------------------------------------------------------------------------------


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def kernel_bdf(text: str) -> str | None:
    """A bus id in the kernel's spelling ("0000:18:00"), as the kernel parser reports xid.pci_bus_ids."""
    m = _BDF.fullmatch(text.strip())
    if m is None:
        return None
    return f"{int(m.group(1), 16):04x}:{m.group(2).lower()}:{m.group(3).lower()}"


def _is_lost(device: dict[str, Any]) -> bool:
    return device.get("lost") is True or any(v == _LOST_TEXT for v in _dict(device.get("errors")).values())


# ---- entry points -----------------------------------------------------------------------------------


def parse(artifact: Artifact) -> ParseResult:
    """GPU temperature, throttling, ECC, row remapping, lost GPUs and Xid events from a snapshot."""
    text = normalise(artifact.content[:_MAX_TEXT])
    lines = text.split("\n")
    sink = FactSink(artifact, lines)
    _read(sink, text, _Lines(lines))
    return sink.done()


def _read(sink: FactSink, text: str, where: _Lines) -> None:
    try:
        doc = json.loads(text)
    except (ValueError, RecursionError) as err:
        sink.problem(f"NVML snapshot is not JSON: {err}")
        return
    if not isinstance(doc, dict):
        sink.problem("NVML snapshot is not a JSON object")
        return
    if doc.get("available") is not True:
        node = f" on {doc['node']}" if doc.get("node") else ""
        sink.problem(f"NVML unavailable{node}: {doc.get('error') or 'no reason given'}; GPU health not read")
        return
    devices = [d for d in _list(doc.get("devices")) if isinstance(d, dict)]
    gpus = _locate_devices(devices, where)
    for rule in _RULES:
        rule(sink, gpus, where)
    _problems(sink, gpus, doc)
    events = [e for e in _list(doc.get("xid_events")) if isinstance(e, dict)]
    _xids(sink, events, where)


# ---- device rules -----------------------------------------------------------------------------------

_Rule = Callable[[FactSink, list[_Gpu], _Lines], None]


def _highest(sink: FactSink, gpus: list[_Gpu], where: _Lines, fact: str, read: Callable[[_Gpu], float | None],
             keys: tuple[str, ...], show: str, integer: bool = False) -> None:
    """The device with the largest value, cited at its key."""
    best: tuple[float, _Gpu] | None = None
    for gpu in gpus:
        value = read(gpu)
        if value is not None and (best is None or value > best[0]):
            best = (value, gpu)
    if best is None:
        return
    value, gpu = best
    shown: float | int = int(value) if integer else round(value, 4)
    sink.add(fact, shown, gpu.line(where, *keys), text=f"{gpu.label}: {show} {shown:g}")


def _temperature(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    _highest(sink, gpus, where, "gpu.temp_c", lambda g: _num(g.data.get("temperature_c")),
             ("temperature_c",), "temperature_c")


def _utilisation(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    _highest(sink, gpus, where, "gpu.util_percent",
             lambda g: _num(_dict(g.data.get("utilization")).get("gpu_percent")),
             ("utilization", "gpu_percent"), "utilization.gpu_percent")


def _fb_ratio(gpu: _Gpu) -> float | None:
    memory = _dict(gpu.data.get("memory"))
    used, total = _num(memory.get("used_bytes")), _num(memory.get("total_bytes"))
    return used / total if used is not None and total else None


def _framebuffer(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    _highest(sink, gpus, where, "gpu.fb_used_ratio", _fb_ratio, ("memory", "used_bytes"),
             "memory used/total")


def _ecc(kind: str) -> Callable[[_Gpu], float | None]:
    """Volatile count (since the driver loaded: this incident), aggregate when volatile is missing."""
    def read(gpu: _Gpu) -> float | None:
        ecc = _dict(gpu.data.get("ecc"))
        for counter in ("volatile", "aggregate"):
            value = _int(_dict(ecc.get(counter)).get(kind))
            if value is not None:
                return float(value)
        return None
    return read


def _ecc_counter(gpu: _Gpu) -> str:
    return "volatile" if "volatile" in _dict(gpu.data.get("ecc")) else "aggregate"


def _ecc_rule(fact: str, kind: str) -> _Rule:
    def rule(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
        read = _ecc(kind)
        found = [(v, g) for g in gpus if (v := read(g)) is not None]
        if not found:
            return
        value, gpu = max(found, key=lambda pair: pair[0])
        counter = _ecc_counter(gpu)
        sink.add(fact, int(value), gpu.line(where, "ecc", counter, kind),
                 text=f"{gpu.label}: ecc.{counter}.{kind} {int(value)}")
    return rule


def _throttle(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    read = [(mask, g) for g in gpus if (mask := _int(g.data.get("clocks_throttle_reasons"))) is not None and mask >= 0]
    seen: set[str] = set()
    for mask, gpu in read:
        for bit, reason in THROTTLE_BITS.items():
            if reason and mask & bit and reason not in seen:
                seen.add(reason)
                sink.add("gpu.throttle_reasons", [reason], gpu.line(where, "clocks_throttle_reasons"),
                         text=f"{gpu.label}: clocks_throttle_reasons {mask:#x} ({reason})")
    if read and not seen:
        # Masks were read and no reported bit is set (idle and app-clock bits are normal): not throttled.
        mask, gpu = read[0]
        sink.add("gpu.throttle_reasons", [], gpu.line(where, "clocks_throttle_reasons"),
                 text=f"{gpu.label}: clocks_throttle_reasons {mask:#x}")


def _row_remap(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    read = [(rows, g) for g in gpus if (rows := _dict(g.data.get("remapped_rows")))]
    bad = [(rows, g) for rows, g in read if rows.get("failure") is True or rows.get("pending") is True]
    if bad:
        rows, gpu = bad[0]
        key = "failure" if rows.get("failure") is True else "pending"
        sink.add("gpu.row_remap_failed", True, gpu.line(where, "remapped_rows", key),
                 text=f"{gpu.label}: remapped_rows {key} (uncorrectable {rows.get('uncorrectable', '?')})")
    elif read:
        rows, gpu = read[0]
        sink.add("gpu.row_remap_failed", False, gpu.line(where, "remapped_rows"),
                 text=f"{gpu.label}: remapped_rows failure false, pending false on the {len(read)} GPUs read")


def _lost(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    lost = [g for g in gpus if _is_lost(g.data)]
    if lost:
        gpu = lost[0]
        sink.add("gpu.fallen_off_bus", True, gpu.line(where, "lost"), text=f"{gpu.label}: NVML says GPU is lost")
    elif gpus and all("handle" not in _dict(g.data.get("errors")) for g in gpus):
        # Every device answered NVML: none is off the bus at capture time.
        sink.add("gpu.fallen_off_bus", False, where.key("device_count") or gpus[0].start or 1,
                 text=f"NVML read all {len(gpus)} GPUs; none reports GPU is lost")


# A GPU lowers its link generation when idle to save power; below this utilisation a lower generation is not a
# fault. The width never changes with load, so a narrower link always is one (seed 001:671-673, 001:808).
_LOADED_PERCENT = 50


def _link_shortfall(gpu: _Gpu) -> str | None:
    """How the negotiated PCIe link falls short of what device and slot allow, or None."""
    pcie = _dict(gpu.data.get("pcie"))
    gen, gen_max, width, width_max = (_int(pcie.get(k)) for k in ("gen", "gen_max", "width", "width_max"))
    short: list[str] = []
    if width is not None and width_max is not None and 0 < width < width_max:
        short.append(f"x{width} of x{width_max}")
    util = _num(_dict(gpu.data.get("utilization")).get("gpu_percent"))
    if (gen is not None and gen_max is not None and 0 < gen < gen_max and util is not None
            and util >= _LOADED_PERCENT):
        short.append(f"Gen{gen} of Gen{gen_max} at {util:g}% utilisation")
    return ", ".join(short) or None


def _pcie(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    read = [g for g in gpus if _dict(g.data.get("pcie"))]
    if not read:
        return
    short = [(text, g) for g in read if (text := _link_shortfall(g)) is not None]
    if short:
        text, gpu = short[0]
        sink.add("gpu.pcie_link_degraded", True, gpu.line(where, "pcie", "width"),
                 text=f"{gpu.label}: PCIe link {text}")
    else:
        sink.add("gpu.pcie_link_degraded", False, read[0].line(where, "pcie"),
                 text=f"PCIe links at their full width on the {len(read)} GPUs read")
    _highest(sink, read, where, "gpu.pcie_replays", lambda g: _num(_dict(g.data.get("pcie")).get("replay_count")),
             ("pcie", "replay_count"), "pcie.replay_count", integer=True)


_NVLINK_COUNTERS = ("crc_flit", "crc_data", "replay", "recovery")


def _nvlink_errors(gpu: _Gpu) -> float | None:
    links = [link for link in map(_dict, _list(gpu.data.get("nvlinks"))) if link.get("active") is True]
    counts = [v for link in links for k in _NVLINK_COUNTERS if (v := _int(link.get(k))) is not None]
    return float(sum(counts)) if counts else None


def _inactive_links(gpu: _Gpu) -> float | None:
    """Links down on a GPU whose other links are up: on one board every link should be alike."""
    states = [link.get("active") for link in map(_dict, _list(gpu.data.get("nvlinks")))]
    if True not in states:
        return None
    return float(sum(1 for state in states if state is False))


def _nvlink(sink: FactSink, gpus: list[_Gpu], where: _Lines) -> None:
    _highest(sink, gpus, where, "gpu.nvlink_errors", _nvlink_errors, ("nvlinks",),
             "NVLink CRC + replay + recovery errors since driver load", integer=True)
    _highest(sink, gpus, where, "gpu.nvlink_inactive_links", _inactive_links, ("nvlinks",),
             "NVLinks inactive while others are up", integer=True)


_RULES: tuple[_Rule, ...] = (
    _temperature, _utilisation, _framebuffer, _ecc_rule("gpu.ecc_dbe", "uncorrected"),
    _ecc_rule("gpu.ecc_sbe", "corrected"), _throttle, _row_remap, _lost, _pcie, _nvlink,
)


def _problems(sink: FactSink, gpus: list[_Gpu], doc: dict[str, Any]) -> None:
    for gpu in gpus:
        errors = _dict(gpu.data.get("errors"))
        # Unsupported queries are normal (page retirement on Ampere+); a lost GPU is a fact, not a problem.
        real = {k: v for k, v in errors.items() if v not in (_NOT_SUPPORTED, _LOST_TEXT)}
        if real:
            listed = "; ".join(f"{k}: {v}" for k, v in sorted(real.items()))
            sink.problem(f"{gpu.label}: NVML could not read {listed}")
    for key, value in sorted(_dict(doc.get("errors")).items()):
        sink.problem(f"NVML snapshot: {key}: {value}")


# ---- Xid events -------------------------------------------------------------------------------------


def _xid_text(event: dict[str, Any], bdf: str | None) -> str:
    gpu = " -> ".join(str(p) for p in (bdf, event.get("uuid")) if p)
    pods = ", ".join(str(p) for p in _list(event.get("pods")))
    text = f"Xid {event.get('xid')} ({event.get('source', '?')})"
    text += f" on {gpu}" if gpu else ""
    text += f" held by {pods}" if pods else ""
    message = event.get("message")
    return text + (f": {message}" if isinstance(message, str) and message else "")


def _xids(sink: FactSink, events: list[dict[str, Any]], where: _Lines) -> None:
    secondary = secondary_codes()
    at = where.key("xid_events") or 1
    line = at
    seen_codes: set[int] = set()
    seen_bdfs: set[str] = set()
    primary = 0
    first: tuple[int, str] | None = None
    for event in events:
        code = _int(event.get("xid"))
        if code is None:
            continue
        found = where.find(r'"xid"\s*:\s*' + str(code) + r"\b", at)
        if found:  # the next event is searched for below this one; else cite the last line found
            line, at = found, found + 1
        bus = event.get("pci_bus_id")
        bdf = kernel_bdf(bus) if isinstance(bus, str) else None
        text = _xid_text(event, bdf)
        first = first or (line, text)
        if code not in seen_codes:
            seen_codes.add(code)
            sink.add("xid.codes", [code], line, text=text)
            if code not in secondary:
                primary += 1
                sink.add("xid.primary_codes", [code], line, text=text)
        if bdf and bdf not in seen_bdfs:
            seen_bdfs.add(bdf)
            sink.add("xid.pci_bus_ids", [bdf], line, text=text)
    if first is not None and primary == 0:
        # Xids were seen and every one is an after-effect: say so, as the kernel parser does.
        sink.add("xid.primary_codes", [], first[0], text=first[1])


PARSER = Parser(kinds=(ArtifactKind.NVML,), parse=parse, sniff=sniff)
