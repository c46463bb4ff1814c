"""What the evidence seen so far says about one proposed hypothesis, in a trainee's words.

The answer comes from the playbook run over the revealed artifacts only, and speaks only about the proposed
hypothesis: never about which hypothesis leads, and never about evidence the trainee has not asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from drills.hypotheses import HypothesisRef
from drills.sources import label, sources_for_fact
from playbooks.report import HypothesisResult, Report

Verdict = Literal["supported", "ruled-out", "untestable", "inconclusive"]


class ProposalAnswer(BaseModel):
    hypothesis: str  # playbook/hypothesis
    verdict: Verdict
    direct: bool = False  # supported by evidence that shows it directly (the playbook's `confirm`)
    message: str
    because: list[str] = Field(default_factory=list)  # "fact = value (artifact:line)"
    look_at: list[str] = Field(default_factory=list)  # source ids that could test it
    facts: list[str] = Field(default_factory=list)  # the facts those sources would show


def answer(ref: HypothesisRef, report: Report, revealed: Sequence[str],
           refs: dict[str, HypothesisRef]) -> ProposalAnswer:
    """`report` must come from the revealed artifacts with `ref.playbook` forced, so the tree was evaluated."""
    result = _result(report, ref)
    if result is None:
        return _unexplored(ref, report, revealed, refs)
    because = decisive(ref, result)
    if result.status in ("confirmed", "likely"):
        direct = result.status == "confirmed"
        if direct:
            return ProposalAnswer(hypothesis=ref.key, verdict="supported", direct=True, because=because,
                                  message="Supported: the evidence you have shows it directly: "
                                          + "; ".join(because) + ".")
        missing = _absent(_predicate_facts(ref, "confirm"), report)
        look, facts = _where(missing, revealed)
        text = "Supported, not proven: " + "; ".join(because) + "."
        if look:
            text += " To prove it, " + _look_phrase(facts, revealed) + "."
        return ProposalAnswer(hypothesis=ref.key, verdict="supported", because=because, look_at=look,
                              facts=facts, message=text)
    if result.status == "ruled-out":
        return ProposalAnswer(hypothesis=ref.key, verdict="ruled-out", because=because,
                              message="Ruled out by " + "; ".join(because) + ".")
    return _untested(ref, result, revealed)


_DECIDED_BY = {"confirmed": "confirm", "likely": "likely", "ruled-out": "rule_out"}


def decisive_facts(ref: HypothesisRef, status: str) -> frozenset[str]:
    """The facts of the predicate that gave this status; the playbook's `cite` list adds context, not reasons."""
    key = _DECIDED_BY.get(status)
    return frozenset(_predicate_facts(ref, key)) if key else frozenset()


def decisive(ref: HypothesisRef, result: HypothesisResult) -> list[str]:
    """The citations behind a status ("fact = value (artifact:line)"), without the context-only ones."""
    names = decisive_facts(ref, result.status)
    reasons = [b for b in result.because if b.split(" = ", 1)[0] in names]
    return reasons or list(result.because)


def _result(report: Report, ref: HypothesisRef) -> HypothesisResult | None:
    for finding in report.findings:
        if finding.playbook == ref.playbook:
            return next((h for h in finding.hypotheses if h.id == ref.id), None)
    return None


def _untested(ref: HypothesisRef, result: HypothesisResult, revealed: Sequence[str]) -> ProposalAnswer:
    look, facts = _where(result.needs, revealed)
    if look:
        return ProposalAnswer(hypothesis=ref.key, verdict="untestable", look_at=look, facts=facts,
                              message="Not yet testable: " + _look_phrase(facts, revealed) + ".")
    seen = sorted({s for fact in result.needs for s in sources_for_fact(fact)})
    text = "Inconclusive: the evidence so far neither supports nor rules it out"
    if seen:
        text += f"; the sources that could ({', '.join(label(s) for s in seen)}) have been looked at"
    return ProposalAnswer(hypothesis=ref.key, verdict="inconclusive", facts=list(result.needs), message=text + ".")


def _unexplored(ref: HypothesisRef, report: Report, revealed: Sequence[str],
                refs: dict[str, HypothesisRef]) -> ProposalAnswer:
    """A child is explored only when its parent holds, so it is tested by testing the parent first."""
    parent = refs[f"{ref.playbook}/{ref.parent}"] if ref.parent else None
    if parent is None:  # a root the engine always evaluates; only a forced-playbook bug lands here
        return ProposalAnswer(hypothesis=ref.key, verdict="inconclusive", message="Inconclusive.")
    upstream = answer(parent, report, revealed, refs)
    if upstream.verdict == "ruled-out":
        return ProposalAnswer(hypothesis=ref.key, verdict="ruled-out", because=upstream.because,
                              message=f"Ruled out with {parent.key}, which it refines: "
                                      + "; ".join(upstream.because) + ".")
    text = (f"Not yet testable: it refines {parent.key}, which the evidence so far does not support; "
            f"test that first.")
    if upstream.look_at:
        text += " To test it, " + _look_phrase(upstream.facts, revealed) + "."
    return ProposalAnswer(hypothesis=ref.key, verdict="untestable", look_at=upstream.look_at,
                          facts=upstream.facts, message=text)


def _predicate_facts(ref: HypothesisRef, key: str) -> list[str]:
    predicate = ref.node.predicates.get(key)
    return list(predicate.facts) if predicate else []


def _absent(names: list[str], report: Report) -> list[str]:
    return [n for n in names if n not in report.facts]


def _where(facts: Sequence[str], revealed: Sequence[str]) -> tuple[list[str], list[str]]:
    """Unrevealed sources that could show these facts (most direct first), and the facts they would show."""
    look: list[str] = []
    shown: list[str] = []
    for fact in facts:
        fresh = [s for s in sources_for_fact(fact) if s not in revealed]
        if fresh:
            shown.append(fact)
            look.extend(s for s in fresh if s not in look)
    return look, shown


def _look_phrase(facts: Sequence[str], revealed: Sequence[str]) -> str:
    """"look at kernel log for kernel.oom_memcg; pod status or events for scheduling.reasons"."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for fact in facts:
        fresh = tuple(s for s in sources_for_fact(fact) if s not in revealed)
        groups.setdefault(fresh, []).append(fact)
    parts = [f"{' or '.join(label(s) for s in sources)} for {', '.join(names)}"
             for sources, names in groups.items() if sources]
    return "look at " + "; ".join(parts)
