"""What a command costs before it does anything: `--version`, `analyze` of one line, and the imports the Slack
bot needs to start. Usage: python -m benchmarks.bench_startup

CPU time is the child's own (user + system from wait4), with bytecode compiled first, as an installed package has
it. Each command runs RUNS times, interleaved with a bare interpreter (`python -c pass`), so every figure has the
same run's baseline beside it: on a shared machine the ratio means more than the seconds."""

from __future__ import annotations

import compileall
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from benchmarks.doc import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
RUNS = 9
SERVE_IMPORTS = "import uvicorn, bot.context, bot.server, bot.slack.app"


def child_cpu(argv: list[str], cwd: Path = ROOT) -> float:
    """User + system CPU seconds of one child process."""
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{argv} failed: {proc.stderr.read().decode()[-400:] if proc.stderr else ''}")
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> None:
    """With `--against DIR`, every command also runs from that checkout (an older commit), side by side."""
    args = argv if argv is not None else sys.argv[1:]
    other = Path(args[1]).resolve() if args[:1] == ["--against"] and len(args) > 1 else None
    # Both checkouts compiled: with PYTHONDONTWRITEBYTECODE set, the other one would compile its source every run.
    for root in (ROOT, other) if other is not None else (ROOT,):
        for package in ("bot", "collectors", "playbooks", "drills"):
            compileall.compile_dir(str(root / package), quiet=1)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory() as tmp:
        one = Path(tmp) / "one.txt"
        one.write_text("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
        commands = {
            "bare interpreter (`python -c pass`)": ([sys.executable, "-c", "pass"], "baseline"),
            "`triagebot --version`": ([sys.executable, "-m", "bot.cli", "--version"], "≤ 0.1 s"),
            "`triagebot analyze` of a one-line file": ([sys.executable, "-m", "bot.cli", "analyze", str(one)],
                                                      "≤ 0.25 s"),
            "the Slack bot's imports (`serve` before it listens)": ([sys.executable, "-c", SERVE_IMPORTS],
                                                                  "cold start ≤ 1.5 s"),
        }
        child_cpu(commands["`triagebot analyze` of a one-line file"][0])  # fills the playbook check cache
        samples: dict[str, list[float]] = {name: [] for name in commands}
        before: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(RUNS):
            for name, (command, _) in commands.items():
                samples[name].append(child_cpu(command))
                if other is not None:
                    before[name].append(child_cpu(command, other))
    load_after = os.getloadavg()
    base = statistics.median(samples["bare interpreter (`python -c pass`)"])
    rows = []
    for name, (_, budget) in commands.items():
        now = statistics.median(samples[name])
        then = f"{statistics.median(before[name]):.3f} s ({now / statistics.median(before[name]):.2f}x)" \
            if before[name] else "not measured"
        rows.append(f"| {name} | {budget} | {now:.3f} s | {now / base:.1f}x | {then} |")
    body = "\n".join([
        f"Measured by `python -m benchmarks.bench_startup` on {machine()}; load average {load_before[0]:.1f} when "
        f"it started and {load_after[0]:.1f} when it ended. Median CPU time (user + system, the child's own) of "
        f"{RUNS} runs each, interleaved, bytecode compiled, the playbook check cache warm (playbooks/checked.py)"
        + (f"; the last column ran the same commands from {other.name}, interleaved in the same run." if other
           else "."),
        "",
        "| command | target | CPU time | vs bare interpreter | the `--against` checkout (this run / that) |",
        "|---|---|---:|---:|---:|",
        *rows,
        "",
        "Each command imports what it uses when it runs (bot/cli/main.py builds the parser from light modules "
        "only); the CEL library is loaded without its REPL (playbooks/cel_lib.py); a playbook file whose exact "
        "text has passed every check skips the semantic checks (templates, likely clauses) on later runs, and its "
        "CEL predicates are compiled when first evaluated (every playbook's trigger and derived trigger, the "
        "hypotheses of those a paste triggers), while `playbooks lint` always checks and compiles everything; such "
        "a file's validated Playbook is kept with the mark (pickled), so it is not validated against the schema "
        "again either. The catalogs (collectors/catalogs/*.yaml, the query files, the narrowing layers) are "
        "validated once as well: the "
        "validated objects are remembered by the hash of their text and of the code that checks them "
        "(collectors/catalogs/validated.py), and every pydantic model of a catalog or a playbook is declared with "
        "`defer_build`, so a start that finds them all in the cache never builds their validators; the tests "
        "validate every catalog with the cache off. Patterns a module defines at import are compiled when first "
        "used (collectors/lazy_regex.py: a one-line paste uses about 70 of the 260 such patterns its modules "
        "define), and a short text's needles are found with `bytes.find` instead of a compiled RE2 alternation "
        "(collectors/parsers/text/needles.py). Parsed YAML (catalogs, playbooks with their "
        "line numbers) and the Python code Jinja generates for a check are remembered by content hash in the "
        "user's cache folder (collectors/parsed_cache.py; `TRIAGEBOT_CACHE_DIR=` turns it off), and PyYAML itself "
        "is imported only when a text is parsed (collectors/yaml_safe.py), so a start whose YAML all comes from the "
        "cache never loads it. The evidence every parser builds (Artifact, Citation, Fact, ParseResult in "
        "collectors/models.py) is plain dataclasses, not pydantic models: pydantic stays where data crosses a "
        "boundary (the report, catalogs and playbooks read from YAML, the database's rows). Detection loads the "
        "sniffers, not the parsers: which module reads a kind and which "
        "spots it is data (collectors/parsers/readers.py), the heavy parsers' sniffers live in collectors/sniffers/, "
        "and a parser module is imported the first time an artifact of its kind is read. Line-signal, stated-term and "
        "secret patterns are compiled when a text first holds one of their hints, and the report is redacted one "
        "distinct string at a time (a one-line report's 1,800 strings are 360 different ones). The CLI lets the "
        "garbage collector run after every 10,000 allocations instead of 700, and `analyze` and `replay` freeze the "
        "heap at exit (gc.freeze in an atexit handler), so the interpreter's shutdown no longer runs full "
        "collections over the 50,000 objects of the start, about 30 ms, to free memory the operating system takes "
        "back anyway. The Slack bot's start loads neither "
        "the Kubernetes client (it comes with the first triage), numpy (with the first answer graded by meaning) "
        "nor Alembic (bot/store/db.py imports it in the functions that migrate). "
        "tests/unit/core/test_startup_imports.py holds the module counts.",
        "",
        "What is left, measured in process (CPU time, 2026-11-29): pydantic, about 70 ms (its import 24 ms; "
        "the first model, 30 ms, pulls in the schema machinery and scans every installed package's entry points "
        "for pydantic plugins through importlib.metadata; then the report's 15 models; the report is a pydantic "
        "model because it is read back from JSON and the database, so the output needs it); 111 dataclasses "
        "(about 34 ms, half of them pydantic's own, each class a few generated methods run through exec); 264 "
        "regular expressions compiled (about 24 ms, none over 4 ms: the 24 secret shapes whose hints a report "
        "holds, Kubernetes scheduling messages, the rest one or two a module); compiling the CEL programs the "
        "playbook choice evaluates (150 for a one-line paste, 6.7 ms; 117 of them find their facts absent, but "
        "telling that without compiling is only sound for a predicate without `||`, `!` and `has()`, and would "
        "save about 4 ms); redacting the report (9 ms, most of it compiling the shapes above); Jinja (its import "
        "11 ms: a one-line paste renders 37 templates, the pending playbook's claims and checks, which the JSON "
        "report carries whether shown or not) and rich (the terminal report, about 15 ms; `--format json` loads "
        "none of it); the sniffers that still live in their parser (the Kubernetes tables and descriptions, the "
        "kernel log, access logs, whose sniffer is the reader itself, conntrack, cpu.stat, Prometheus text, "
        "network links: about 10 ms beyond what a Kubernetes events paste loads anyway for its own parser), and "
        "the readers every pasted text goes through (line signals, stated facts, figures, status fields). On the "
        "Slack bot's side SQLAlchemy is most of what remains, and `serve` still imports Alembic before it listens, "
        "since its start migrates the database: skipping Alembic when the schema is already at head would need "
        "the head's revision without Alembic.",
    ])
    write_section("startup", "Start-up", body)
    sys.stdout.write(body + "\n")


if __name__ == "__main__":
    main()
