"""Sections of `nvidia-smi -q` (the report, not the table): ECC counters, remapped rows, temperature, and the
reasons the clocks are held down, and how far the SM clock runs below its maximum.

A100 and later remap a bad memory row to a spare one; the remap takes effect at the next GPU reset, and until
then `Pending` says Yes. A remap for an uncorrectable error that still waits for its reset, or a remap that
failed (no spare row left), is what `gpu.row_remap_failed` means; a row remapped for correctable errors is
routine. Older GPUs retire pages instead and count single and double bit errors.
"""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes.k8s_describe_layout import DNode, describe_tree
from collectors.parsers.sink import FactSink

_GPU = LazyPattern(r"^GPU\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-9A-Fa-f])\s*$")
_READ = ("Remapped Rows", "ECC Errors", "Temperature", "Clocks Event Reasons", "Clocks Throttle Reasons", "Clocks",
         "Max Clocks", "Utilization")
# nvidia-smi -q names each clocks-event reason as NVML's nvmlClocksEventReason* bits (nvml.h, the same bits
# DCGM_FI_DEV_CLOCKS_EVENT_REASONS carries, read in metric_facts.THROTTLE_BITS); the section was "Clocks Throttle
# Reasons" up to driver R530 and "Clocks Event Reasons" from R535 (nvidia-smi(1), NVIDIA driver 450-580). Idle,
# Applications Clocks Setting, Sync Boost and Display Clock Setting are normal states and are not throttling.
_REASONS = {"SW Power Cap": "power", "HW Slowdown": "hw-slowdown", "HW Thermal Slowdown": "thermal",
            "HW Power Brake Slowdown": "power-brake", "SW Thermal Slowdown": "sw-thermal"}
# "Utilization" then "Gpu : 12 %" (the share of the sample period a kernel ran; nvidia-smi(1), NVIDIA driver 390-565;
# drivers 570 and later spell it "GPU" and add JPEG and OFA rows below; "N/A" under MIG or a vGPU that does not
# report it). A fragment of the report shows the header's two-line shape.
_UTIL = LazyPattern(r"(\d{1,3}) %")
_UTIL_FRAGMENT = LazyPattern(r"(?m)^\s*Utilization\s*\n\s+(?:Gpu|GPU)\s+: (?:\d{1,3} %|N/A)\s*$")
_TEMP = LazyPattern(r"(\d{1,3}(?:\.\d+)?) C")
_MHZ = LazyPattern(r"(\d{1,5}) MHz")


def read_query(sink: FactSink, lines: list[str]) -> None:
    """Facts from every GPU's memory-error sections; a fragment without its GPU line counts as one GPU."""
    clocks: dict[str, dict[str, tuple[int, int]]] = {}
    busy: list[tuple[int, int]] = []  # (Gpu utilisation %, its line) per GPU
    for node in _sections(describe_tree(lines, 0, len(lines))):
        gpu = _gpu_of(node, lines)
        subject = f"gpu/{gpu}" if gpu else None
        if node.text == "Utilization":
            if (util := _gpu_util(node)) is not None:
                busy.append(util)
        elif node.text in ("Clocks", "Max Clocks"):
            if (found := _value(node, "SM")) and (m := _MHZ.fullmatch(found[0])):
                clocks.setdefault(gpu, {})[node.text] = (int(m.group(1)), found[1])
        elif node.text == "Remapped Rows":
            _remapped_rows(sink, node, subject)
        elif node.text == "ECC Errors":
            _ecc(sink, node, subject)
        elif node.text == "Temperature":
            _temperature(sink, node, subject)
        else:
            _clock_reasons(sink, node, subject)
    _sm_clock(sink, clocks)
    _busiest(sink, busy)


def read_utilization(artifact: Artifact) -> ParseResult:
    """gpu.util_percent from the Utilization blocks of a report pasted without what makes it one (its banner, its
    ECC sections): a fragment cut around the figure the person meant."""
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    if artifact.kind != ArtifactKind.NVIDIA_SMI and _UTIL_FRAGMENT.search(artifact.content[:200_000]):
        _busiest(sink, [u for node in _sections(describe_tree(lines, 0, len(lines)))
                        if node.text == "Utilization" and (u := _gpu_util(node)) is not None])
    return sink.done()


def _busiest(sink: FactSink, busy: list[tuple[int, int]]) -> None:
    """The busiest GPU's utilisation, as the table and gpustat readers give it."""
    if busy:
        value, line = max(busy)
        sink.add("gpu.util_percent", float(value), line)


def _gpu_util(node: DNode) -> tuple[int, int] | None:
    """(Gpu %, its line) under a Utilization header; None for N/A."""
    found = _value(node, "Gpu") or _value(node, "GPU")
    m = _UTIL.fullmatch(found[0]) if found else None
    return (int(m.group(1)), found[1]) if m and found else None


def _sections(roots: list[DNode]) -> list[DNode]:
    found: list[DNode] = []
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if node.text in _READ and node.children:
            found.append(node)
        else:
            stack.extend(reversed(node.children))
    return found


def _gpu_of(node: DNode, lines: list[str]) -> str:
    """The bus id of the `GPU 00000000:10:1C.0` line the section sits under, if the paste has it."""
    for n in range(node.line - 1, 0, -1):
        text = lines[n - 1].strip()
        if m := _GPU.match(text):
            return m.group(1)
    return ""


def _sub(node: DNode, name: str) -> DNode | None:
    """A heading under `node` (a line with no value, such as `Volatile`)."""
    return next((c for c in node.children if c.text == name and c.children), None)


def _value(node: DNode, key: str) -> tuple[str, int] | None:
    child = node.child(key)
    return (child.value, child.line) if child is not None and child.value else None


def _count(node: DNode, key: str) -> tuple[int, int] | None:
    found = _value(node, key)
    return (int(found[0]), found[1]) if found and found[0].isdigit() else None


def _remapped_rows(sink: FactSink, node: DNode, subject: str | None) -> None:
    failure, pending = _value(node, "Remapping Failure Occurred"), _value(node, "Pending")
    uncorrectable = _count(node, "Uncorrectable Error")
    if failure and failure[0] == "Yes":
        sink.add("gpu.row_remap_failed", True, failure[1], subject=subject)
    elif pending and pending[0] == "Yes" and uncorrectable and uncorrectable[0] > 0:
        sink.add("gpu.row_remap_failed", True, uncorrectable[1], pending[1], subject=subject)
    elif pending and pending[0] in ("Yes", "No") and (failure is None or failure[0] == "No"):
        # Nothing pending, or a remap for correctable errors only: routine, not a failure.
        sink.add("gpu.row_remap_failed", False, pending[1], subject=subject)


def _ecc(sink: FactSink, node: DNode, subject: str | None) -> None:
    """Volatile counters (since the last driver load): DRAM and SRAM on A100 and later, bit counts before."""
    volatile = _sub(node, "Volatile")
    if volatile is None:
        return
    for fact, keys in (("gpu.ecc_dbe", ("DRAM Uncorrectable", "SRAM Uncorrectable")),
                       ("gpu.ecc_sbe", ("DRAM Correctable", "SRAM Correctable"))):
        counts = [c for key in keys if (c := _count(volatile, key)) is not None]
        if not counts:
            bits = _sub(volatile, "Double Bit" if fact == "gpu.ecc_dbe" else "Single Bit")
            total = _count(bits, "Total") if bits is not None else None
            counts = [total] if total else []
        if counts:
            sink.add(fact, sum(c for c, _ in counts), min(n for _, n in counts), max(n for _, n in counts),
                     subject=subject)


def _temperature(sink: FactSink, node: DNode, subject: str | None) -> None:
    """The GPU's current temperature (its limits, printed beside it, are thresholds, not readings)."""
    found = _value(node, "GPU Current Temp")
    if found and (m := _TEMP.fullmatch(found[0])):
        sink.add("gpu.temp_c", float(m.group(1)), found[1], subject=subject)


def _clock_reasons(sink: FactSink, node: DNode, subject: str | None) -> None:
    """Every reason marked Active, nested ones included; a section that was read with none active says so."""
    stack, active, lines = list(node.children), [], []
    while stack:
        child = stack.pop()
        stack.extend(child.children)
        if child.key in _REASONS:
            lines.append(child.line)
            if child.value == "Active":
                active.append((child.line, _REASONS[child.key]))
    for line, reason in sorted(active):
        sink.add("gpu.throttle_reasons", [reason], line, subject=subject)
    if lines and not active:
        sink.add("gpu.throttle_reasons", [], min(lines), max(lines), subject=subject)


def _sm_clock(sink: FactSink, clocks: dict[str, dict[str, tuple[int, int]]]) -> None:
    """The SM clock now over the most it may run (`Clocks` and `Max Clocks`, per GPU). A low ratio is normal on
    an idle GPU (it drops to its idle P-state); beside work on the GPU it is a clock that did not ramp up."""
    for gpu, pair in clocks.items():
        if "Clocks" in pair and "Max Clocks" in pair and pair["Max Clocks"][0] > 0:
            (now, n1), (top, n2) = pair["Clocks"], pair["Max Clocks"]
            sink.add("gpu.sm_clock_ratio", round(min(now / top, 1.0), 3), min(n1, n2), max(n1, n2),
                     subject=f"gpu/{gpu}" if gpu else None)
