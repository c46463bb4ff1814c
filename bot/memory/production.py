"""Accuracy in production, from what on-call people said of the verdicts (the report's feedback buttons).

Pure: labels in, tallies out. A label pairs what a triage said (its report's lead) with what the person said it
was; the latest label of a run wins, so a person who changes their mind is counted once, as they last said.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

NO_VERDICT = "(no verdict)"
OTHER = "(something else)"


@dataclass(frozen=True)
class Label:
    run_id: int
    said: str | None  # "playbook/hypothesis" the report led with; None when it led with nothing
    right: bool  # the person marked the verdict correct
    was: str | None  # "playbook/hypothesis" the person chose when it was wrong; None: free text or not said
    by: str
    at: datetime


@dataclass(frozen=True)
class Tally:
    key: str
    labelled: int
    right: int

    @property
    def percent(self) -> int:
        return round(100 * self.right / self.labelled) if self.labelled else 0


@dataclass(frozen=True)
class ProductionAccuracy:
    labelled: int
    right: int
    by_playbook: list[Tally]
    by_hypothesis: list[Tally]
    confusions: list[tuple[str, str, int]]  # said, was, how often: the most frequent first

    @property
    def percent(self) -> int:
        return round(100 * self.right / self.labelled) if self.labelled else 0


def latest_per_run(labels: Iterable[Label]) -> list[Label]:
    latest: dict[int, Label] = {}
    for label in sorted(labels, key=lambda lb: lb.at):
        latest[label.run_id] = label
    return list(latest.values())


def _tallies(pairs: Iterable[tuple[str, bool]]) -> list[Tally]:
    seen: Counter[str] = Counter()
    right: Counter[str] = Counter()
    for key, ok in pairs:
        seen[key] += 1
        right[key] += ok
    # Worst first: the verdicts to distrust are what a reader of this table looks for.
    return sorted((Tally(k, seen[k], right[k]) for k in seen), key=lambda t: (t.percent, -t.labelled, t.key))


def accuracy(labels: Iterable[Label]) -> ProductionAccuracy:
    kept = latest_per_run(labels)
    said = [(lb.said or NO_VERDICT, lb.right) for lb in kept]
    confusions = Counter((lb.said or NO_VERDICT, lb.was or OTHER) for lb in kept if not lb.right)
    return ProductionAccuracy(
        labelled=len(kept), right=sum(lb.right for lb in kept),
        by_playbook=_tallies((s.split("/", 1)[0] if s != NO_VERDICT else s, ok) for s, ok in said),
        by_hypothesis=_tallies(said),
        confusions=[(s, w, n) for (s, w), n in sorted(confusions.items(), key=lambda item: (-item[1], item[0]))])
