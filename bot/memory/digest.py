"""The weekly digest: pure, the week's incidents and labels in, the tallies out (issue 30 point 4).

Incidents by symptom (the playbook that led) and by verdict; what keeps coming back (the same leading hypothesis on
the same node or workload, more than once in the window); production accuracy from the labels on-call gave
(bot/memory/production.py). bot/render/memory/digest.py draws it; bot/memory/weekly.py reads the store.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from bot.memory.production import NO_VERDICT, Label, ProductionAccuracy, accuracy

TOP = 8  # rows per table: a digest is read in a minute


@dataclass(frozen=True)
class IncidentSummary:
    id: int
    title: str
    created_at: datetime
    status: str
    lead: str | None  # "playbook/hypothesis" of the latest run; None when nothing led
    where: str | None  # the node, else the workload ("namespace/service"); None when unknown


@dataclass(frozen=True)
class Repeat:
    where: str
    lead: str
    times: int
    last: datetime


@dataclass(frozen=True)
class Digest:
    since: datetime
    until: datetime
    incidents: int
    resolved: int
    by_symptom: list[tuple[str, int]]  # playbook, incidents: most first
    by_verdict: list[tuple[str, int]]  # playbook/hypothesis, incidents: most first
    repeats: list[Repeat]
    production: ProductionAccuracy


def _most_first(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:TOP]


def repeats(incidents: Iterable[IncidentSummary]) -> list[Repeat]:
    """The same verdict on the same node or workload twice or more: what keeps coming back."""
    seen: dict[tuple[str, str], list[datetime]] = {}
    for i in incidents:
        if i.where and i.lead:
            seen.setdefault((i.where, i.lead), []).append(i.created_at)
    found = [Repeat(where, lead, len(times), max(times)) for (where, lead), times in seen.items() if len(times) > 1]
    return sorted(found, key=lambda r: (-r.times, r.where, r.lead))[:TOP]


def build_digest(incidents: list[IncidentSummary], labels: Iterable[Label], since: datetime,
                 until: datetime) -> Digest:
    inside = [i for i in incidents if since <= i.created_at < until]
    symptoms = Counter(i.lead.split("/", 1)[0] if i.lead else NO_VERDICT for i in inside)
    verdicts = Counter(i.lead for i in inside if i.lead)
    return Digest(since=since, until=until, incidents=len(inside), resolved=sum(i.status == "resolved" for i in inside),
                  by_symptom=_most_first(symptoms), by_verdict=_most_first(verdicts), repeats=repeats(inside),
                  production=accuracy(lb for lb in labels if since <= lb.at < until))
