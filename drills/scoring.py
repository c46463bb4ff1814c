"""Scoring a drill, deterministically, out of 100.

- root cause (50): 50 for the ground truth; 25 for its ancestor or descendant in the same tree (right branch,
  wrong depth); 0 otherwise.
- discrimination (20): 20 when the evidence revealed before declaring separates the truth from its rivals
  (drills/key.py), else 0.
- efficiency (15): 15 x useful / max(requested, needed). needed = the sources on the ideal path; useful =
  needed when separated, else the discriminating sources revealed (sources on some smallest separating set,
  at most needed): evidence requested against evidence needed.
- time (10): 10 x min(1, par / drill clock), par being the ideal path's clock cost; only when separated, since
  a quick answer without the evidence is a guess, not fast triage.
- independence (5): 5 - 5 per hint level used: +5 without hints, then 0, -5, and -10 after the answer hint.
  (Every level costs 5, as the brief asks; the 5 for none makes a perfect drill 100.)

Fractions round half up. The total is clamped to 0..100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field

ROOT_CAUSE, PARTIAL_ROOT_CAUSE = 50, 25
DISCRIMINATION = 20
EFFICIENCY = 15
TIME = 10
INDEPENDENCE = 5
HINT_COST = 5


class ScorePart(BaseModel):
    name: str
    points: int
    max: int
    why: str


class Score(BaseModel):
    total: int
    parts: list[ScorePart]
    needed: list[str] = Field(description="the ideal path's sources")
    requested: list[str]
    par_seconds: int
    clock_seconds: int

    def points(self, name: str) -> int:
        return next(p.points for p in self.parts if p.name == name)


def score(*, declared: str, truth: str, lineage: frozenset[str], requested: Sequence[str], separated: bool,
          discriminating: frozenset[str], ideal_path: Sequence[str], par_seconds: int, clock_seconds: int,
          hint_level: int) -> Score:
    """The score of one declaration; every input is plain data so each rule is testable on its own."""
    if declared == truth:
        root, root_why = ROOT_CAUSE, "the ground truth"
    elif declared in lineage:
        root, root_why = PARTIAL_ROOT_CAUSE, "right branch of the tree, not the root cause itself"
    else:
        root, root_why = 0, "not the root cause"

    touched = [s for s in requested if s in discriminating]
    if separated:
        disc, disc_why = DISCRIMINATION, "your evidence separated the truth from its rivals before you declared"
    elif touched:
        disc, disc_why = 0, (f"you requested {', '.join(dict.fromkeys(touched))}, part of a separating set, but "
                             "declared before your evidence separated the truth from its rivals")
    else:
        disc, disc_why = 0, "you declared without the evidence that separates the truth from its rivals"

    needed = len(ideal_path)
    useful = needed if separated else min(len(touched), needed)
    if needed and useful:
        eff = _round(EFFICIENCY * useful / max(len(requested), needed))
        eff_why = f"{len(requested)} source(s) requested, {needed} needed, {useful} of them useful"
    else:
        eff, eff_why = 0, "none of the evidence needed was requested"

    if separated and clock_seconds > 0:
        tim = _round(TIME * min(1.0, par_seconds / clock_seconds))
        tim_why = f"{_minutes(clock_seconds)} on the drill clock, par {_minutes(par_seconds)}"
    else:
        tim, tim_why = 0, "time counts only once the evidence separates the truth"

    level = max(0, min(3, hint_level))
    ind = INDEPENDENCE - HINT_COST * level
    ind_why = "no hints" if level == 0 else f"hints up to level {level}"

    parts = [
        ScorePart(name="root cause", points=root, max=ROOT_CAUSE, why=root_why),
        ScorePart(name="discrimination", points=disc, max=DISCRIMINATION, why=disc_why),
        ScorePart(name="efficiency", points=eff, max=EFFICIENCY, why=eff_why),
        ScorePart(name="time", points=tim, max=TIME, why=tim_why),
        ScorePart(name="independence", points=ind, max=INDEPENDENCE, why=ind_why),
    ]
    total = max(0, min(100, sum(p.points for p in parts)))
    return Score(total=total, parts=parts, needed=list(ideal_path), requested=list(requested),
                 par_seconds=par_seconds, clock_seconds=clock_seconds)


def _round(value: float) -> int:
    """Half up, as people round (Python's round() sends 2.5 to 2)."""
    return math.floor(value + 0.5)


def _minutes(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest:02d}s"
