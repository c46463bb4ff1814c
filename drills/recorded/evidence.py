"""A recorded incident seen through any subset of its sources, parsed once.

A drill asks the playbooks the same question many times over growing subsets of one incident's artifacts:
for each proposal, and while finding the ideal path. `playbooks.pipeline.analyse` parses every artifact on
every call, and parsing is most of its cost (a 200,000-line kernel log takes about a second), so here each
artifact is parsed once and only the cheap part (facts -> playbooks) is redone per subset. The findings are the
same as `analyse` over just those artifacts; tests/unit/drills/test_evidence.py holds that for every incident.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

from collectors.factset import FactSet
from collectors.models import Artifact, ParseResult
from collectors.query_facts import parse_with_declared
from drills.hypotheses import HypothesisRef, index
from drills.recorded.incident import Incident
from drills.sources import SOURCES, source_of_kind
from playbooks.engine import template_variables
from playbooks.loader import CompiledPlaybook
from playbooks.pipeline import conclude, default_playbooks, joined_facts, unavailable
from playbooks.report import Report
from playbooks.templates import render

_ORDER = {s.id: i for i, s in enumerate(SOURCES)}
_CACHE_SIZE = 32
_CACHE: OrderedDict[tuple[object, ...], IncidentEvidence] = OrderedDict()


class IncidentEvidence:
    """One incident's artifacts by source, each parsed at most once, and reports over subsets of sources."""

    def __init__(self, incident: Incident, playbooks: list[CompiledPlaybook] | None = None) -> None:
        self.incident = incident
        self.playbooks = default_playbooks() if playbooks is None else playbooks
        self._parsed: dict[str, ParseResult] = {}
        self._reports: dict[tuple[frozenset[str], tuple[str, ...]], Report] = {}
        self.memo: dict[str, object] = {}  # derived results (the answer key) cached by their modules
        self.refs: dict[str, HypothesisRef] = index(self.playbooks)  # every hypothesis by playbook/id

    def artifacts(self, source: str) -> list[Artifact]:
        """Every artifact of one source in capture order, the unavailable ones included."""
        return [a for a in self.incident.artifacts if source_of_kind(a.kind) == source]

    def available_sources(self) -> list[str]:
        """Sources with at least one readable artifact, in the trainee-facing order."""
        found = {source_of_kind(a.kind) for a in self.incident.artifacts if a.unavailable is None}
        return sorted(found, key=_ORDER.__getitem__)

    def parsed(self, artifact: Artifact) -> ParseResult:
        result = self._parsed.get(artifact.id)
        if result is None:
            result = self._parsed[artifact.id] = parse_with_declared(artifact)
        return result

    def facts(self, sources: Iterable[str]) -> FactSet:
        chosen = set(sources)
        artifacts = [a for a in self.incident.artifacts if source_of_kind(a.kind) in chosen]
        parsed = [fact for a in artifacts if a.unavailable is None for fact in self.parsed(a).facts]
        return joined_facts(artifacts, parsed, unavailable(artifacts))

    def report(self, sources: Iterable[str], force: Iterable[str] = ()) -> Report:
        """Findings over the artifacts of `sources` only; playbooks in `force` run whatever their triggers say."""
        key = (frozenset(sources), tuple(sorted(set(force))))
        cached = self._reports.get(key)
        if cached is not None:
            return cached
        facts = self.facts(key[0])
        target = self.incident.meta.target
        findings = conclude(facts, target, self.playbooks, key[1])
        report = Report(target=target, symptoms=[f.playbook for f in findings], findings=findings,
                        facts=facts.values(), artifacts=[])
        self._reports[key] = report
        return report

    def render_claim(self, template: str, sources: Iterable[str]) -> str:
        """A claim for a hypothesis the engine did not explore, rendered for this incident's subject."""
        facts = self.facts(sources)
        return render(template, template_variables(self.incident.meta.target, facts))


def evidence_for(incident: Incident) -> IncidentEvidence:
    """The shared, parsed view of an incident; kept for the last few incidents a process has drilled."""
    key: tuple[object, ...] = (incident.path, incident.meta.id, repr(incident.meta.ground_truth),
                               tuple((a.id, a.kind, len(a.content), a.unavailable) for a in incident.artifacts))
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = IncidentEvidence(incident)
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    return found


def clear_cache() -> None:
    """Forget parsed incidents (benchmarks measure a cold start with it)."""
    _CACHE.clear()
