"""The renderer-neutral report: what the engine concluded and the evidence behind it."""

from __future__ import annotations

from datetime import datetime
from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, Field, computed_field

from collectors.factset import FactSet
from collectors.models import Fact, Missing, Target
from playbooks.cel_expr import referenced_names

__all__ = ["ArtifactRef", "ChartSpec", "Evidence", "Expression", "Finding", "HypothesisResult", "Layer", "Missing",
           "Narrowing", "Report", "Rule", "Scope", "ScopeAnswer", "Status", "Target", "Traced", "Use", "cited_evidence",
           "expressions"]

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
    origin: str = ""  # the line of code that emitted it: collectors/parsers/node/kernel.py:120

    @property
    def place(self) -> str:
        return f"{self.artifact}:{self.lines}" if self.lines else self.artifact

    @classmethod
    def of(cls, name: str, fact: Fact) -> Evidence:
        c = fact.citation
        lines = "" if c.start == 0 else (str(c.start) if c.start == c.end else f"{c.start}-{c.end}")
        return cls(fact=name, value=fact.value, artifact=c.artifact, lines=lines, excerpt=fact.excerpt,
                   kind=fact.kind, parser=fact.parser, origin=fact.origin)


EVIDENCE_PER_FACT = 3


def cited_evidence(names: list[str], facts: FactSet) -> list[Evidence]:
    """The evidence behind facts a rule reads: the first few lines each was read from."""
    return [Evidence.of(name, fact) for name in names if (merged := facts.get(name)) is not None
            for fact in merged.sources[:EVIDENCE_PER_FACT]]


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
    # The playbook's trigger as written, and the evidence it read; None when it did not hold (a forced symptom).
    trigger: Rule | None = None
    trigger_evidence: list[Evidence] = Field(default_factory=list)

    def best_supported(self) -> HypothesisResult | None:
        """The finding's best confirmed or likely hypothesis, or its refinement.

        A refinement as well supported as the cause it refines says more ("the limit left out the host memory of
        eight ranks" over "the limit is too low"), so it stands in its parent's place and the parent is shown
        beside it as support. A refinement only likely under a confirmed parent does not: the verdict stays on
        what is proven (docs/playbooks.md, "Ranking", rule 7).
        """
        supported = [h for h in self.hypotheses if h.supported]
        if not supported:
            return None
        best = max(supported, key=lambda h: h.score)
        while refined := [h for h in supported if h.parent == best.id and h.status == best.status]:
            best = max(refined, key=lambda h: h.score)
        return best

    def lineage(self, hypothesis: str, siblings: bool = False) -> set[str]:
        """The hypothesis, its ancestors and its descendants: what a lead's support may be (a child refines its
        parent's cause). With `siblings`, also every descendant of its ancestors: the refinements of one cause,
        which may hold together (a rank both unschedulable and started without gang scheduling), so a replay does
        not count a confirmed sibling of the truth as a contradiction."""
        parents = {h.id: h.parent for h in self.hypotheses}
        related = {hypothesis}
        node: str | None = parents.get(hypothesis)
        while node is not None and node not in related:
            related.add(node)
            node = parents.get(node)
        below = set(related) if siblings else {hypothesis}
        changed = True
        while changed:
            changed = False
            for child, parent in parents.items():
                if parent in below and child not in below:
                    below.add(child)
                    changed = True
        return related | below


# Which expression of a playbook used a cited line: its trigger, the predicate that decided a hypothesis, or the
# hypothesis's `cite:` list (context the decision did not rest on).
Expression = Literal["trigger", "confirm", "likely", "rule_out", "cite"]


class Use(BaseModel):
    """One rule that used a cited line."""

    playbook: str
    hypothesis: str | None = None  # None for the playbook's trigger
    expression: Expression
    status: Status | None = None  # the hypothesis's status; None for the trigger
    rule: str = ""  # where the expression is written, playbooks/oom-killed.yaml:20; empty for `cite`


class Traced(Evidence):
    """A cited fact on its line, with what read it, the code that emitted it and every rule that used it."""

    uses: list[Use] = Field(default_factory=list)


@lru_cache(maxsize=1024)
def _reads(cel: str) -> frozenset[str]:
    return frozenset(referenced_names(cel)[0])


def expressions(h: HypothesisResult) -> dict[str, Expression]:
    """Which predicate of `h` used each fact it cites: the one that decided its status, else its `cite:` list."""
    used = _reads(h.rule.cel) if h.rule is not None and h.decided_by is not None else frozenset()
    return {e.fact: (h.decided_by if h.decided_by is not None and e.fact in used else "cite") for e in h.evidence}


def trace_of(findings: list[Finding]) -> list[Traced]:
    """Every cited line once (first cited first), with each rule that used it: the trace all renderers show."""
    out: dict[tuple[str, str, str], Traced] = {}

    def add(e: Evidence, use: Use) -> None:
        key = (e.fact, e.artifact, e.lines)
        found = out.get(key)
        if found is None:
            found = out[key] = Traced(**e.model_dump(), uses=[])
        if use not in found.uses:
            found.uses.append(use)

    for f in findings:
        if f.trigger is not None:
            for e in f.trigger_evidence:
                add(e, Use(playbook=f.playbook, expression="trigger", rule=f"{f.trigger.file}:{f.trigger.line}"))
        for h in f.hypotheses:
            used = expressions(h)
            rule = f"{h.rule.file}:{h.rule.line}" if h.rule is not None else ""
            for e in h.evidence:
                expression = used[e.fact]
                add(e, Use(playbook=f.playbook, hypothesis=h.id, expression=expression, status=h.status,
                           rule="" if expression == "cite" else rule))
    return list(out.values())


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


Layer = Literal["application", "pod", "node", "network", "gpu"]


class Narrowing(BaseModel):
    """The narrowing question (issue #29, point 6): the first layer, in the documents' order, that the evidence
    cannot yet rule in or out, and the one check that would close it (playbooks/data/layers.yaml)."""

    layer: Layer
    question: str
    check: str  # rendered for the report's target, like a hypothesis's next checks
    hypotheses: list[str] = Field(default_factory=list)  # playbook/hypothesis still open in that layer
    open: list[Layer] = Field(default_factory=list)  # every open layer, in the documents' order
    source: list[str] = Field(default_factory=list)


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
    narrowing: Narrowing | None = None  # the layer still open and its closing check; None when none is open

    def leading(self) -> tuple[Finding, HypothesisResult] | None:
        """The best hypothesis evidence supports (confirmed or likely) in the first finding that has one.

        Findings come ranked (a pointer that joined a finding lends it its strength), so the first finding with
        support owns the diagnosis. A hypothesis nothing supports never leads (docs/playbooks.md, "Ranking"), nor
        does a finding set aside as context (`aside`).
        """
        for finding in self.findings:
            if finding.aside:
                continue
            lead = finding.best_supported()
            if lead is not None:
                return finding, lead
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

    @computed_field  # type: ignore[prop-decorator]
    @property
    def trace(self) -> list[Traced]:
        """Every cited line once, with what read it, the code that emitted it and each rule that used it."""
        return trace_of(self.findings)

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)
