"""Reading any input in linear time and bounded memory. Usage: python -m benchmarks.bench_paste

Each input runs through `triagebot analyze` in a fresh process pinned to one core (process start and JSON output
included). CPU time is that process's own (wait4); its peak RSS is the one it reports as it exits (VmHWM of its
own /proc/self/status): a child's ru_maxrss would count this process's memory as its own peak (Linux keeps the
high-water mark across fork and exec), which once reported 225 MB for every input. Budgets (issue #11, issue #24
point 5, docs/architecture.md): any 200,000-line input < 2 s CPU; the same lines in any order within 1.5x the CPU of the
grouped order; a 10 MB single line < 5 s; 2,000,000 lines over several files within 10x the 200,000-line time;
three 51 MB files together < 1 GB peak RSS; over-size input refused with a one-line error.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks.doc import machine, write_section
from benchmarks.gen_logs import mixed_log, ordered_log

ROOT = Path(__file__).resolve().parents[1]
LINES = 200_000
BIG_LINES = 730_000  # about 51 MB of these log lines
# `triagebot analyze` as `python -m bot.cli` runs it, which writes its own peak RSS as it exits: VmHWM from
# /proc/self/status, the high-water mark of this process image alone. The rusage of a child (ru_maxrss) is not its
# own: Linux carries the parent's high-water mark across fork and exec, so a child forked from this benchmark once
# reported the benchmark's 225 MB as every input's peak, and one forked from a small launcher had the launcher's
# RSS as its floor.
_CHILD = """
import atexit, os, sys
def _peak():
    with open("/proc/self/status", encoding="ascii") as status:
        kb = next((line.split()[1] for line in status if line.startswith("VmHWM:")), "-1")
    os.write(2, f"\\npeak-rss-kb {kb}\\n".encode())
atexit.register(_peak)
from bot.cli.main import main
raise SystemExit(main(sys.argv[1:]))
"""


@dataclass
class Run:
    cpu: float
    rss_mb: float
    wall: float
    code: int
    error: str


def _analyze(paths: list[str], stdin: Path | None = None) -> Run:
    """One `triagebot analyze` process: its CPU time (user + system, from wait4), its own peak RSS (_CHILD), its
    wall time, exit code and the end of its stderr."""
    pin = ["taskset", "-c", "0"] if Path("/usr/bin/taskset").exists() else []
    command = [*pin, sys.executable, "-c", _CHILD, "analyze", *paths, "--format", "json"]
    with open(stdin or os.devnull, "rb") as feed:
        start = time.perf_counter()
        child = subprocess.Popen(command, cwd=ROOT, stdin=feed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        assert child.stderr is not None
        err = child.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
    text, _, peak = err.rstrip().rpartition("peak-rss-kb ")
    if not peak.isdigit():
        raise SystemExit(f"{command[-3:]} reported no peak RSS: {err[-300:]}")
    return Run(usage.ru_utime + usage.ru_stime, int(peak) / 1024, wall, os.waitstatus_to_exitcode(status),
               text.strip()[-300:])


# The same blocks in two orders: interleaved (the order that went quadratic) and grouped by kind.
ORDERS = {
    "NCCL line first, kernel lines interleaved": ["nccl", "kernel"],
    "kernel line first, NCCL lines interleaved": ["kernel", "nccl"],
    "NCCL, kernel and kubelet lines in turn": ["nccl", "kernel", "kubelet"],
    "describe Events blocks between kernel lines": ["describe", "kernel"],
    "small kinds in turn (Events, conntrack, cpu.stat, kernel, kubelet)":
        ["describe", "conntrack", "cpu.stat", "kernel", "kubelet"],
}


def _inputs(folder: Path) -> dict[str, Path]:
    rng = random.Random(11)
    words = ["Warning", "Normal", "NCCL", "Xid", "OOMKilled", "nodes", "are", "available:", "0/5", "BackOff",
             "Failed", "to", "pull", "image", "Error:", "kubelet", "[123.4]", "$", "#", "-", "{", "}", "key:",
             "Back-off", "restarting", "failed", "container", "CrashLoopBackOff", "NVRM:", "exceeded", "quota"]
    nccl = "gpu-node-1:1234:1234 [0] NCCL INFO Channel 00/32 : 0 1 2 3 4 5 6 7\n"
    event = ("  Warning  FailedScheduling  3m (x{n} over 1h)  default-scheduler  0/{n} nodes are available: "
             "{n} Insufficient nvidia.com/gpu.\n")
    texts = {
        "kernel + NCCL log (mixed)": mixed_log(LINES),
        "NCCL log that starts with an NCCL line": "h:1:1 [0] NCCL INFO NCCL version 2.18.1+cuda12.1\n" + nccl * LINES,
        "every line a fragment of known messages (adversarial)":
            "\n".join(" ".join(rng.choice(words) for _ in range(12)) for _ in range(LINES)),
        "describe Events rows": "Events:\n" + "".join(event.format(n=i % 97 + 1) for i in range(LINES)),
        "10 MB single line, no signal": "a" * 10_000_000,
        "10 MB single line of scheduler messages": "0/5 nodes are available: 3 Insufficient cpu, " * 220_000,
        "55 KB of nested JSON": "[" * 27_500 + "]" * 27_500,
    }
    paths = {}
    for i, (name, text) in enumerate(texts.items()):
        path = folder / f"input-{i}.txt"
        path.write_text(text, encoding="utf-8")
        paths[name] = path
    (folder / "random.bin").write_bytes(rng.randbytes(50_000_000))
    (folder / "big.txt").write_bytes(b"x" * (65 * 1024 * 1024))
    return paths


def _row(name: str, budget: str, run: Run, ratio: str = "") -> str:
    return (f"| {name} | {budget} | {run.cpu:.2f} s | {ratio} | {run.wall:.2f} s | {run.rss_mb:.0f} MB "
            f"| {run.code} |")


def main() -> None:
    load_before = os.getloadavg()
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = _inputs(folder)
        base: float | None = None
        for name, path in paths.items():
            run = _analyze([str(path)])
            rows.append(_row(name, "< 5 s" if "10 MB" in name else "< 2 s", run))
            if name.startswith("kernel + NCCL"):
                base = run.cpu
        for name, kinds in ORDERS.items():
            measured = {}
            for interleaved in (True, False):
                path = folder / f"order-{len(measured)}-{kinds[0]}-{len(kinds)}.txt"
                path.write_text(ordered_log(LINES, kinds, interleaved), encoding="utf-8")
                measured[interleaved] = _analyze([str(path)])
                path.unlink()
            ratio = measured[True].cpu / measured[False].cpu
            rows.append(_row(f"{name} ({LINES:,} lines)", "< 2 s; within 1.5x of grouped", measured[True],
                             f"**{ratio:.2f}x**"))
            rows.append(_row("the same lines grouped by kind", "< 2 s", measured[False], "1x"))
        # 2M lines over ten files: the same mixed log ten times.
        run = _analyze([str(paths["kernel + NCCL log (mixed)"])] * 10)
        ratio = run.cpu / base if base else float("nan")
        rows.append(_row("2,000,000 lines over 10 files", "within 10x the 200,000-line time", run,
                         f"{ratio:.1f}x the mixed log"))
        big = []
        for i, kinds in enumerate((["nccl", "kernel"], ["nccl", "kernel"], ["nccl", "kernel", "kubelet"])):
            path = folder / f"big-{i}.txt"
            path.write_text(ordered_log(BIG_LINES, kinds, interleaved=i != 1, seed=i), encoding="utf-8")
            big.append(path)
        size = sum(p.stat().st_size for p in big) / len(big) / 1e6
        rows.append(_row(f"three files of {size:.0f} MB together (NCCL-first interleaved, grouped, three kinds)",
                         "peak RSS < 1 GB", _analyze([str(p) for p in big])))
        for path in big:
            path.unlink()
        for name, path, stdin in (("50 MB of random bytes (a file)", folder / "random.bin", None),
                                  ("65 MiB file (over the 64 MiB cap)", folder / "big.txt", None),
                                  ("65 MiB on stdin (over the cap)", None, folder / "big.txt")):
            rows.append(_row(name, "refused, one line, exit 2", _analyze([str(path)] if path else ["-"], stdin=stdin)))
    load_after = os.getloadavg()
    body = "\n".join([
        f"Measured by `python -m benchmarks.bench_paste` on {machine()}; load average {load_before[0]:.1f} when it "
        f"started and {load_after[0]:.1f} when it ended (other people's work on the same two cores: CPU time is "
        "this process's own, but a busy machine slows it too, through shared caches). Each input is one "
        "`triagebot analyze` process pinned to one core (`taskset -c 0`): process start, reading, unwrapping, "
        "detection, the structural parsers, the line-signal layer, the playbooks and JSON output are all in the "
        "time. CPU time is that process's own (wait4); peak RSS is its own high-water mark (VmHWM of "
        "/proc/self/status as it exits; a child's ru_maxrss would include the benchmark's memory, as Linux keeps "
        "the high-water mark across fork and exec). The ratio compares "
        "an order of kinds with the same lines grouped by kind, measured one after the other in the same run.",
        "",
        "| input | budget | CPU time | vs grouped | wall time | peak RSS | exit |",
        "|---|---|---:|---:|---:|---:|---:|",
        *rows,
        "",
        "Why it stays linear: a paste becomes one artifact per log kind however often other lines interrupt it, "
        "and each structured piece holds only its own lines (`first_line` keeps the citations on the paste's "
        "numbering), so no order of kinds copies the paste once per segment, as an NCCL-first log interleaved with "
        "kernel lines once did (10,000 lines took 8.5 s, 40,000 took 120 s). Lines longer than 4,096 characters are "
        "never handed to a line pattern; every hint is found in one RE2 pass over the whole text before any line "
        "pattern runs, and a line is scanned on only for hints it has not shown yet; the line-signal patterns are "
        "RE2 (linear time); each hint is looked for at most 2,000 times and each signal applied at most 500 times "
        "per artifact; and patterns with an open-ended repeat in the structural parsers are bounded.",
        "",
        "Why memory stays bounded: files are read one at a time, each parsed before the next is read; detection "
        "works on the unwrapped lines without a second joined copy, joins a block only as far as a sniffer reads "
        "(200,000 characters), and remembers the claims of at most 65,536 distinct lines; the needle scan counts "
        "newlines instead of keeping a table of every line's end. Out of memory (a `ulimit -v` cap), the CLI says "
        "so in one line and exits 2.",
        "",
        'Over budget, and why (what is left to do): a 200,000-line log whose lines all differ is read line by'
        " line (unwrapping, each line's claim, then each kind's reader), and the kernel + NCCL log now is too"
        ': it starts with `[`, which once sent it whole to the kernel reader, so its NCCL lines were never gi'
        "ven to the NCCL reader; that reader's needle scan costs about 10 microseconds for each NCCL line it "
        'matches. Inputs made of many small blocks pay per block: every block is scored by every sniffer (22)'
        ', about 0.3 to 0.6 ms a block; linear, but far over 2 s at 200,000 lines, in any order. The blocks o'
        'f a kind whose parser reads many (describe, event and pod tables, counters) share one artifact where'
        'ver they are, so their order costs nothing more; a YAML or JSON document keeps an artifact of its ow'
        'n (its loader reads one). Compare the 55 KB JSON row, which does no per-line work, with the previous'
        ' run on an idle AMD EPYC (0.61 s) to see how much slower this machine was.',
    ])
    write_section("paste", "Reading any input", body)
    print(body)


if __name__ == "__main__":
    main()
