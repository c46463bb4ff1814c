"""The default `nvidia-smi` table, read per GPU and joined to the processes listed under it.

A node's table shows every GPU, also the ones another job holds or none does; its highest GPU-Util says nothing
about a job whose own GPUs idle beside a busy neighbour. So each GPU's utilisation is joined to the compute
processes the Processes section lists on it (GPU index, PID, name, memory), and the processes are grouped into
jobs by name. `gpu.job_util_percent` is the busiest GPU of the least-busy job: low only when every GPU a job
computes on is idle; `gpu.job_util_gap_percent` is how far a job's least busy GPU trails its busiest. A GPU with
no compute process raises nothing. Inside a container nvidia-smi cannot see other PID namespaces, so "No running
processes found" leaves the job unknown rather than idle. A GPU whose memory total is far below the size its
board's name states is a slice a virtualisation layer (HAMi, a vGPU memory limit) carved for the container: its
GPU-Util is not this guest's reading and is not read, as MIG's N/A is not.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field

from collectors.parsers.sink import FactSink
from collectors.sniffers.nvidia_smi import STATS

# "|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |" : the GPU's index opens its first row.
_GPU_ROW = re.compile(r"^\|\s+(\d+)\s+\S.*\|\s*[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d")
# The index row's last cell is "Volatile Uncorr. ECC": uncorrectable ECC errors since the driver loaded ("N/A" with
# ECC off). nvidia-smi's own column, R340 onwards.
_ECC_CELL = re.compile(r"\|\s*(\d+|N/A)\s*\|$")
# The board's memory as its name states it ("Tesla V100-PCIE-16GB", "NVIDIA H100 80GB HBM3"): a GPU row whose total
# memory is far below it is a slice a virtualisation layer carved (HAMi's or another vGPU's memory limit), whose
# GPU-Util is the whole board's or none at all (HAMi-235: "no utilisation or process information in the container").
_NAME_GB = re.compile(r"^\|\s+\d+\s+[^|]*?\b(\d{1,3})\s?GB\b")
_SLICE_SHARE = 0.8  # real boards show 95-100 % of the named size (16160 of 16 GiB, 81559 of 80 GiB)
# "|    0   N/A  N/A     48213      C   python      12024MiB |" (older drivers have no GI/CI columns)
_PROCESS = re.compile(r"^\|\s+(\d+)\s+(?:\S+\s+\S+\s+)?(\d+)\s+(C|G|C\+G|M|M\+C)\s+(\S.*?)\s+(?:\d+MiB|N/A)\s*\|$")


# What a paste wraps each table line in: a quote's `> ` (nested too), inline backticks, indentation.
_WRAPPER = re.compile(r"^[\s>`]+|[\s`]+$")


@dataclass
class Gpu:
    index: str
    line: int
    temp_c: int
    used_mib: int
    total_mib: int
    util: int | None
    ecc_uncorrected: int | None = None
    sliced: bool = False  # a memory slice of a larger board: its GPU-Util is not this guest's reading


@dataclass
class Table:
    gpus: dict[str, Gpu] = field(default_factory=dict)
    # GPU index -> (PID, process name, line) for every process row; compute rows only in `compute`.
    processes: dict[str, list[tuple[int, str, int]]] = field(default_factory=lambda: defaultdict(list))
    compute: dict[str, list[tuple[int, str, int]]] = field(default_factory=lambda: defaultdict(list))
    ecc_lines: dict[str, int] = field(default_factory=dict)  # GPU index -> the line of its ECC count


def read_table(lines: list[str]) -> Table:
    """Every GPU's row and every process row; a stats row with no index row before it is numbered in order."""
    table = Table()
    index: str | None = None
    ecc: tuple[int, int] | None = None  # the index row's uncorrected ECC count and its line
    named_mib: int | None = None  # the memory the index row's board name states
    in_processes = False
    for n, line in enumerate(lines, 1):
        stripped = _WRAPPER.sub("", line)
        if "Processes:" in line:
            in_processes = True
        if in_processes and (p := _PROCESS.match(stripped)):
            row = (int(p.group(2)), _job_name(p.group(4)), n)
            table.processes[p.group(1)].append(row)
            if "C" in p.group(3):  # graphics clients (Xorg, a desktop) are not a job's compute
                table.compute[p.group(1)].append(row)
            continue
        if g := _GPU_ROW.match(stripped):
            index = g.group(1)
            cell = _ECC_CELL.search(stripped)
            ecc = (int(cell.group(1)), n) if cell is not None and cell.group(1).isdigit() else None
            named = _NAME_GB.match(stripped)
            named_mib = int(named.group(1)) * 1024 if named is not None else None
            continue
        if (m := STATS.search(line)) is None:
            continue
        key = index if index is not None and index not in table.gpus else str(len(table.gpus))
        total = int(m.group(3))
        sliced = named_mib is not None and total < named_mib * _SLICE_SHARE
        util = int(m.group(4)) if m.group(4) is not None and not sliced else None
        table.gpus[key] = Gpu(key, n, int(m.group(1)), int(m.group(2)), total, util,
                              ecc[0] if ecc is not None else None, sliced)
        if ecc is not None:
            table.ecc_lines[key] = ecc[1]
        index, ecc, named_mib = None, None, None
    return table


def _job_name(cell: str) -> str:
    """The program of a process cell: '/opt/conda/bin/python3 train.py' and '...envs/x/bin/python3' are python3."""
    program = cell.split()[0] if cell.split() else cell
    return program.rstrip("/").rsplit("/", 1)[-1] or program


def emit(sink: FactSink, table: Table) -> None:
    gpus = list(table.gpus.values())
    if busiest := max((g for g in gpus if g.util is not None), key=lambda g: g.util or 0, default=None):
        sink.add("gpu.util_percent", float(busiest.util or 0), busiest.line)
    if fullest := max((g for g in gpus if g.total_mib > 0), key=lambda g: g.used_mib / g.total_mib, default=None):
        sink.add("gpu.fb_used_ratio", round(fullest.used_mib / fullest.total_mib, 4), fullest.line)
    if hottest := max(gpus, key=lambda g: g.temp_c, default=None):
        sink.add("gpu.temp_c", float(hottest.temp_c), hottest.line)
    # Only a count above zero is read: the column is volatile, so a zero says nothing of an error before the
    # driver last loaded (nvidia-smi -q's aggregate counters do).
    if worst := max((g for g in gpus if g.ecc_uncorrected), key=lambda g: g.ecc_uncorrected or 0, default=None):
        line = table.ecc_lines.get(worst.index, worst.line)
        sink.add("gpu.ecc_dbe", worst.ecc_uncorrected, line,
                 text=f"GPU {worst.index}: {worst.ecc_uncorrected} volatile uncorrectable ECC error(s)")
    if table.processes:
        rows = [n for _, _, n in max(table.processes.values(), key=len)]
        sink.add("gpu.process_count", len(rows), rows[0], rows[-1])
    _job_util(sink, table)
    if not table.processes:
        _idle_beside_busy(sink, gpus)


def _idle_beside_busy(sink: FactSink, gpus: list[Gpu]) -> None:
    """A table with no process rows (cut above them, or taken where processes are hidden) whose busiest GPU holds
    memory and computes while another holds next to nothing and idles: nvidia-smi shows the GPUs the job, the
    container or the allocation was given, so one of them sits unused ("the second A100 stays idle")."""
    read = [g for g in gpus if g.util is not None and g.total_mib > 0]
    busy = max((g for g in read if g.used_mib / g.total_mib >= 0.1), key=lambda g: g.util or 0, default=None)
    idle = min((g for g in read if g.used_mib / g.total_mib < 0.02), key=lambda g: g.util or 0, default=None)
    if busy is None or idle is None or (busy.util or 0) - (idle.util or 0) < 30:
        return
    gap = (busy.util or 0) - (idle.util or 0)
    first, last = sorted((busy.line, idle.line))
    sink.add("gpu.table_util_gap_percent", float(gap), first, last,
             text=f"GPU {busy.index} at {busy.util}% holding memory, GPU {idle.index} at {idle.util}% holding none")


def _job_util(sink: FactSink, table: Table) -> None:
    """The busiest GPU of each job (processes of one name), and the least busy of those across jobs."""
    jobs: dict[str, list[tuple[Gpu, int]]] = defaultdict(list)
    for index, rows in table.compute.items():
        gpu = table.gpus.get(index)
        if gpu is None or gpu.util is None:
            continue
        for _, name, n in rows:
            jobs[name].append((gpu, n))
    if not jobs:
        return
    name, placed = min(jobs.items(), key=lambda job: max(g.util or 0 for g, _ in job[1]))
    busiest = max(placed, key=lambda gn: gn[0].util or 0)[0]
    indices = sorted({g.index for g, _ in placed}, key=lambda i: int(i) if i.isdigit() else 0)
    cited = [busiest.line, *(n for _, n in placed)]
    text = f"{name} on GPU {', '.join(indices)}: its busiest GPU at {busiest.util}% ({len(jobs)} job(s) listed)"
    sink.add("gpu.job_util_percent", float(busiest.util or 0), min(cited), max(cited), text=text)
    _widest_gap(sink, jobs)


def _widest_gap(sink: FactSink, jobs: dict[str, list[tuple[Gpu, int]]]) -> None:
    """The largest gap between a job's busiest and least busy GPU: one GPU of a job doing far less than the others
    (DataParallel's replicas, a rank that waits) is under-used however busy the first one is."""
    spans = []
    for name, placed in jobs.items():
        gpus = {g.index: g for g, _ in placed}
        if len(gpus) >= 2:
            utils = [g.util or 0 for g in gpus.values()]
            spans.append((max(utils) - min(utils), name, sorted(g.line for g in gpus.values())))
    if not spans:
        return
    gap, name, lines = max(spans, key=lambda s: s[0])
    sink.add("gpu.job_util_gap_percent", float(gap), lines[0], lines[-1],
             text=f"{name}: its GPUs {gap} points apart in GPU-Util")
