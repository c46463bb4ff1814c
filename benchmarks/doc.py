"""Writing one benchmark's results into its own section of docs/benchmarks.md, leaving the others alone."""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "benchmarks.md"
HEADER = """# Benchmarks

Budgets are from docs/architecture.md ("Performance budgets"). Each section is rewritten by the benchmark
named in it; run them on an otherwise idle machine. Numbers below were measured on the machine each section names.
"""


def machine() -> str:
    cpu = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, {platform.system()} "
            f"{platform.release()}, {time.strftime('%Y-%m-%d')}")


def write_section(name: str, title: str, body: str) -> None:
    """Replace (or add) the section marked `name` with `title` and `body`."""
    text = DOC.read_text(encoding="utf-8") if DOC.exists() else HEADER
    start, end = f"<!-- section:{name} -->", f"<!-- /section:{name} -->"
    block = f"{start}\n## {title}\n\n{body.strip()}\n{end}"
    DOC.write_text(replaced(text, start, end, block) or text.rstrip() + "\n\n" + block + "\n", encoding="utf-8")


def replaced(text: str, start: str, end: str, block: str) -> str | None:
    """`text` with the part from `start` to `end` (the markers included) replaced by `block`; None when a marker is
    missing."""
    if start not in text or end not in text:
        return None
    before, rest = text.split(start, 1)
    return before + block + rest.split(end, 1)[1]


def storm_options(description: str | None, *, backend: str, alerts: int, seconds: float, groups: int, tail: float,
                  tail_help: str) -> argparse.ArgumentParser:
    """The options every alert-storm benchmark takes, with its own defaults; the caller adds the rest."""
    parser = argparse.ArgumentParser(description=(description or "").splitlines()[0])
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default=backend)
    parser.add_argument("--alerts", type=int, default=alerts)
    parser.add_argument("--seconds", type=float, default=seconds)
    parser.add_argument("--groups", type=int, default=groups)
    parser.add_argument("--tail", type=float, default=tail, help=tail_help)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md alone")
    return parser


def backends(choice: str) -> list[str]:
    """The backends `--backend` names."""
    return ["sqlite", "postgresql"] if choice == "both" else [choice]
