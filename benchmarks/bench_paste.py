"""Reading any input in linear time and bounded memory. Usage: python -m benchmarks.bench_paste

Each input runs through `triagebot analyze` in a fresh process pinned to one core (process start and JSON output
included), and its wall time and peak RSS are taken from that process. Budgets (issue #11, docs/architecture.md): any
200,000-line input < 2 s; a 10 MB single line < 5 s; 2,000,000 lines over several files within 10x the
200,000-line time; over-size input, file or stdin, refused with a one-line error.
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
from benchmarks.gen_logs import mixed_log

ROOT = Path(__file__).resolve().parents[1]
LINES = 200_000


@dataclass
class Run:
    seconds: float
    rss_mb: float
    code: int


def _analyze(paths: list[str], stdin: Path | None = None) -> Run:
    pin = ["taskset", "-c", "0"] if Path("/usr/bin/taskset").exists() else []
    command = [*pin, sys.executable, "-m", "bot.cli", "analyze", *paths, "--format", "json"]
    start = time.perf_counter()
    with open(stdin or os.devnull, "rb") as feed:
        proc = subprocess.Popen(command, cwd=ROOT, stdin=feed, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if proc.stderr is not None:
        proc.stderr.close()
    return Run(seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))


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


def main() -> None:
    rows: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = _inputs(folder)
        base: float | None = None
        for name, path in paths.items():
            run = _analyze([str(path)])
            budget = "< 5 s" if "10 MB" in name else "< 2 s"
            rows.append(f"| {name} | {budget} | {run.seconds:.2f} s | {run.rss_mb:.0f} MB | {run.code} |")
            if name.startswith("kernel + NCCL"):
                base = run.seconds
        # 2M lines over ten files: the same mixed log ten times.
        ten = [str(paths["kernel + NCCL log (mixed)"])] * 10
        run = _analyze(ten)
        ratio = run.seconds / base if base else float("nan")
        rows.append(f"| 2,000,000 lines over 10 files | within 10x the 200,000-line time | {run.seconds:.2f} s "
                    f"({ratio:.1f}x) | {run.rss_mb:.0f} MB | {run.code} |")
        for name, path, stdin in (("50 MB of random bytes (a file)", folder / "random.bin", None),
                                  ("65 MiB file (over the 64 MiB cap)", folder / "big.txt", None),
                                  ("65 MiB on stdin (over the cap)", None, folder / "big.txt")):
            run = _analyze([str(path)] if path else ["-"], stdin=stdin)
            rows.append(f"| {name} | refused, one line, exit 2 | {run.seconds:.2f} s | {run.rss_mb:.0f} MB "
                        f"| {run.code} |")
    body = "\n".join([
        f"Measured by `python -m benchmarks.bench_paste` on {machine()}. Each input is one `triagebot analyze` "
        "process pinned to one core (`taskset -c 0`): process start, reading, unwrapping, detection, the structural "
        "parsers, the line-signal layer, the playbooks and JSON output are all in the time; RSS is that process's "
        "peak.",
        "",
        "| input | budget | wall time | peak RSS | exit |",
        "|---|---|---:|---:|---:|",
        *rows,
        "",
        "Why it stays linear: lines longer than 4,096 characters are never handed to a line pattern; every hint "
        "is found in one RE2 pass over the whole text before any line pattern runs, and a line is scanned on only "
        "for hints it has not shown yet; the line-signal patterns are RE2 (linear time); each hint is looked for "
        "at most 2,000 times and each signal applied at most 500 times per artifact; and patterns with an "
        "open-ended repeat in the structural parsers are bounded.",
    ])
    write_section("paste", "Reading any input", body)
    print(body)


if __name__ == "__main__":
    main()
