"""Which series live triage charts: those the triggered playbooks' hypotheses declare, in the order a reader needs
them.

Live triage fetches these as range queries (collectors/live/prometheus.py, within its bound) once the first wave
of evidence is in, before any hypothesis is judged: the playbooks that evidence triggers (playbooks.pipeline.
triggered_by) name them. The bound can cut the list, so every playbook's first series comes before any playbook's
second: the top of each tree (its commonest causes) is charted first, the forced playbooks (an alert's) before
the rest.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import chain, zip_longest

from playbooks.loader import CompiledHypothesis, CompiledPlaybook
from playbooks.model import Chart


def _declared(nodes: list[CompiledHypothesis]) -> Iterator[str]:
    """A tree's chart series, parents before their children, in the order written."""
    for node in nodes:
        if isinstance(node.spec.chart, Chart):
            yield node.spec.chart.metric
        yield from _declared(node.children)


def declared_series(playbooks: list[CompiledPlaybook]) -> list[str]:
    """The chart series (RANGE_METRICS keys) the playbooks declare, taken in turns, without repeats. Hypotheses
    that declare `chart: {none: ...}` add nothing."""
    per_playbook = [list(dict.fromkeys(_declared(p.hypotheses))) for p in playbooks]
    turns = chain.from_iterable(zip_longest(*per_playbook))
    return list(dict.fromkeys(s for s in turns if s is not None))
