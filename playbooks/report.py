"""The renderer-neutral report: what the engine concluded and the evidence behind it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from collectors.models import Missing, Target

__all__ = ["ArtifactRef", "ChartSpec", "Evidence", "Finding", "HypothesisResult", "Missing", "Report", "Rule",
           "Scope", "ScopeAnswer", "Status", "Target"]

Status = Literal["confirmed", "likely", "ruled-out", "unknown"]


class Evidence(BaseModel):
    """One cited fact: where it was read and what the line said."""

    fact: str
    value: Any
    artifact: str
    lines: str  # "12" or "12-14"; empty when the whole artifact is cited
    excerpt: str = ""
    kind: str = ""  # the artifact's kind, e.g. kernel-log
    parser: str = ""  # what read it: a parser module (kernel) or a line signal (signal:nvrm-line)


class ChartSpec(BaseModel):
    """The playbook's chart declaration for a hypothesis, with a fact-valued threshold already resolved."""

    metric: str
    title: str
    unit: str
    threshold: float | None = None
    threshold_label: str = ""
    breach: Literal["above", "below"] = "above"  # the side of the line the rule fires on


class Rule(BaseModel):
    """The predicate that decided a hypothesis's status, as written in its playbook."""

    file: str  # playbooks/crash-loop.yaml
    line: int
    cel: str


class HypothesisResult(BaseModel):
    id: str
    status: Status
    score: float
    claim: str
    because: list[str] = Field(default_factory=list)
    falsified_by: str
    next_checks: list[str] = Field(default_factory=list)
    mitigations: list[str] = Field(default_factory=list)
    parent: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    needs: list[str] = Field(default_factory=list)  # facts whose absence leaves this unknown
    source: list[str] = Field(default_factory=list)
    merged_into: str | None = None  # the playbook whose finding owns this cause (it ran too)
    decided_by: Literal["confirm", "likely", "rule_out"] | None = None  # None: no predicate held (unknown)
    rule: Rule | None = None
    note: str | None = None  # why the status is not what the rule alone gives (docs/playbooks.md, "Ranking")
    chart: ChartSpec | None = None  # the series that illustrates it, as the playbook declares

    @property
    def supported(self) -> bool:
        """Evidence decided it: only a confirmed or likely hypothesis may lead a report."""
        return self.status in ("confirmed", "likely") and self.merged_into is None


class Finding(BaseModel):
    playbook: str
    title: str
    hypotheses: list[HypothesisResult]
    # Set when the finding is context, not a candidate verdict: in a triage an alert about a node started, what
    # the other workloads on that node show ("also on this node"). Such a finding never leads the report.
    aside: str | None = None

    def lineage(self, hypothesis: str) -> set[str]:
        """The hypothesis, its ancestors and its descendants: all can be true together with it (a child refines
        its parent's cause; siblings are alternatives the playbook tells apart)."""
        parents = {h.id: h.parent for h in self.hypotheses}
        related = {hypothesis}
        node: str | None = parents.get(hypothesis)
        while node is not None and node not in related:
            related.add(node)
            node = parents.get(node)
        changed = True
        while changed:
            changed = False
            for child, parent in parents.items():
                if parent in related and child not in related:
                    related.add(child)
                    changed = True
        return related


class ArtifactRef(BaseModel):
    id: str
    kind: str
    source: str
    unavailable: str | None = None
    subject: str = ""
    command: str = ""
    captured_at: datetime | None = None


Level = Literal["request", "pod", "node", "pool", "cluster"]


class ScopeAnswer(BaseModel):
    """One layer-narrowing question (playbooks/data/scope.yaml) and what the evidence answers."""

    level: Level
    question: str
    answer: Literal["yes", "no", "unknown"]
    because: list[str] = Field(default_factory=list)  # the cited facts, as in a hypothesis's `because`
    needs: list[str] = Field(default_factory=list)  # facts that would answer it, when unknown


class Scope(BaseModel):
    """How far the failure reaches: the narrowest layer the evidence confines it to, and every question."""

    level: Level | None = None  # None: no question could be answered yes
    answers: list[ScopeAnswer] = Field(default_factory=list)


class CacheState(BaseModel):
    """Where the cluster's objects came from when `serve` answered from its watch cache."""

    age_seconds: float  # since the API server last spoke on the watches read (an event, a bookmark, a list)
    namespaces: list[str] = Field(default_factory=list)  # the cache's scope; empty: every namespace


class Lead(BaseModel):
    """The report's one verdict: the leading hypothesis and, by id, the hypotheses of its finding that support it."""

    playbook: str
    hypothesis: str
    status: Status
    supporting: list[str] = Field(default_factory=list)


class Report(BaseModel):
    target: Target
    symptoms: list[str]
    findings: list[Finding]
    facts: dict[str, Any]
    artifacts: list[ArtifactRef]
    missing: list[Missing] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # what parsers could not read
    notes: list[str] = Field(default_factory=list)  # what the reader should know, e.g. that nothing was recognised
    scope: Scope = Field(default_factory=Scope)  # the layer-narrowing questions (docs/report-json.md)
    cache: CacheState | None = None  # set when pods, events and nodes came from serve's watch cache

    def leading(self) -> tuple[Finding, HypothesisResult] | None:
        """The best hypothesis evidence supports (confirmed or likely) in the first finding that has one.

        Findings come ranked (a pointer that joined a finding lends it its strength), so the first finding with
        support owns the diagnosis. A hypothesis nothing supports never leads (docs/playbooks.md, "Ranking"), nor
        does a finding set aside as context (`aside`).
        """
        for finding in self.findings:
            if finding.aside:
                continue
            supported = [h for h in finding.hypotheses if h.supported]
            if supported:
                return finding, max(supported, key=lambda h: h.score)
        return None

    def supporting(self) -> list[HypothesisResult]:
        """The other hypotheses the evidence supports that agree with the lead: in its finding and its lineage
        (an ancestor or a refinement of it). A report has one lead; these are shown under it, as contributing,
        never as a second verdict (docs/playbooks.md, "Ranking", and docs/report-json.md, `lead`)."""
        found = self.leading()
        if found is None:
            return []
        finding, lead = found
        related = finding.lineage(lead.id)
        return [h for h in finding.hypotheses if h is not lead and h.supported and h.id in related]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def lead(self) -> Lead | None:
        """The one verdict and what supports it, so a reader of the JSON needs not rank the findings again."""
        found = self.leading()
        if found is None:
            return None
        return Lead(playbook=found[0].playbook, hypothesis=found[1].id, status=found[1].status,
                    supporting=[h.id for h in self.supporting()])

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)
