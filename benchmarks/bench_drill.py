"""Drill step latency over every recorded incident. Usage: python -m benchmarks.bench_drill [--rounds N]

Each incident is drilled along one scripted path: start, the ideal path's evidence plus one more source, a
proposal of the truth and of a rival, three hints, and the declaration. The first drill of an incident runs
cold (nothing parsed or cached for it: what the first trainee on a fresh process meets); the next rounds run
warm. Loading the incident from disk is timed on its own, since a surface loads it once per drill.
Prints a markdown row for docs/benchmarks.md, then the per-step breakdown.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from drills import session as drill
from drills.hypotheses import index
from drills.key import answer_key
from drills.recorded.evidence import clear_cache, evidence_for
from drills.recorded.incident import Incident, incident_dirs, load_incident
from drills.session import DrillSession
from drills.sources import SOURCES
from playbooks.pipeline import default_playbooks


class Clock:
    """Times each call of a step function under its kind."""

    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)

    def step(self, kind: str, fn: Callable[..., tuple[DrillSession, Any]], *args: Any) -> DrillSession:
        start = time.perf_counter()
        session, _ = fn(*args)
        self.ms[kind].append((time.perf_counter() - start) * 1000)
        return session

    def all(self) -> list[float]:
        return [v for values in self.ms.values() for v in values]


def drill_once(incident: Incident, clock: Clock, path: list[str], rival: str, truth: str) -> None:
    s = clock.step("start", drill.start, incident, "bench", "bench")
    for source in path:
        s = clock.step("evidence", drill.request_evidence, s, incident, source)
    for hypothesis in (truth, rival):
        s = clock.step("propose", drill.propose, s, incident, hypothesis)
    for _ in range(3):
        s = clock.step("hint", drill.hint, s, incident)
    playbook, _, hypothesis = truth.partition("/")
    clock.step("declare", drill.declare, s, incident, playbook, hypothesis)


def _plan(incident: Incident) -> tuple[list[str], str, str]:
    """The path and proposals for one incident, worked out before timing (with a throwaway evidence view)."""
    key = answer_key(evidence_for(incident))
    extra = next(s.id for s in SOURCES if s.id not in key.ideal_path)
    refs = index(evidence_for(incident).playbooks)
    rival = next(k for k, r in refs.items() if r.playbook == key.truth.playbook and k not in key.lineage)
    return [*key.ideal_path, extra], rival, key.truth_key


def q(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="warm drills per incident")
    args = parser.parse_args()

    start = time.perf_counter()
    default_playbooks()  # compiling the playbooks is process start-up, paid once before any drill
    warm_up_ms = (time.perf_counter() - start) * 1000

    cold, warm = Clock(), Clock()
    loads: list[float] = []
    folders = incident_dirs()
    for folder in folders:
        t0 = time.perf_counter()
        incident = load_incident(folder)
        loads.append((time.perf_counter() - t0) * 1000)
        plan = _plan(incident)
        clear_cache()
        drill_once(incident, cold, *plan)
        for _ in range(args.rounds):
            drill_once(incident, warm, *plan)

    all_cold, all_warm = cold.all(), warm.all()
    print("| work | budget | measured |")
    print("|---|---|---|")
    print(f"| a drill step (start, evidence, propose, hint, declare), {len(folders)} incidents, "
          f"{len(all_warm) // (args.rounds * len(folders))} steps per drill | < 200 ms | "
          f"warm: p50 {statistics.median(all_warm):.2f} ms, p95 {q(all_warm, 95):.2f} ms, "
          f"max {max(all_warm):.1f} ms; cold (first drill of an incident, parsing included): "
          f"p50 {statistics.median(all_cold):.2f} ms, p95 {q(all_cold, 95):.1f} ms, max {max(all_cold):.1f} ms |")
    print()
    print(f"process warm-up (compile playbooks, once): {warm_up_ms:.0f} ms; "
          f"load_incident: p50 {statistics.median(loads):.1f} ms, max {max(loads):.1f} ms")
    print()
    print("| step | cold p50 | cold max | warm p50 | warm p95 | warm max |")
    print("|---|---|---|---|---|---|")
    for kind in ("start", "evidence", "propose", "hint", "declare"):
        c, w = cold.ms[kind], warm.ms[kind]
        print(f"| {kind} | {statistics.median(c):.2f} ms | {max(c):.1f} ms | {statistics.median(w):.2f} ms | "
              f"{q(w, 95):.2f} ms | {max(w):.1f} ms |")


if __name__ == "__main__":
    main()
