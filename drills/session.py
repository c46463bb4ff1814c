"""A drill as a value, and the steps that move it on.

The session holds ids and what happened, never artifact text, so a chat surface can store it between thread
replies and the terminal can resume it after a restart. Every step is a pure function
`(session, incident, ...) -> (session, View)`: it returns a new session and a renderer-neutral view, and never
reads input, prints or touches a store. A trainee's mistake raises DrillError with a message to show as is.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from drills import hints as hint_texts
from drills.debrief import Debrief, build_debrief
from drills.errors import DrillError
from drills.hypotheses import resolve
from drills.key import answer_key, ground_truth, separates
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident
from drills.scoring import Score, score
from drills.sources import PROPOSAL_COST_SECONDS, SOURCES, resolve_source
from drills.verdict import ProposalAnswer, answer

__all__ = ["DrillError", "DrillSession", "View", "debrief", "declare", "hint", "page_view", "propose",
           "request_evidence", "start"]

SESSION_VERSION = 1


class TimelineEntry(BaseModel):
    at_seconds: int
    action: Literal["evidence", "propose", "hint", "declare"]
    detail: str


class Proposal(BaseModel):
    asked: str  # what the trainee typed
    answer: ProposalAnswer
    at_seconds: int


class DrillSession(BaseModel):
    version: int = SESSION_VERSION
    id: str
    incident_id: str
    trainee: str
    channel: str
    started_at: datetime
    updated_at: datetime
    clock_seconds: int = 0
    revealed_sources: list[str] = Field(default_factory=list)  # in the order asked
    revealed_artifacts: list[str] = Field(default_factory=list)
    proposals: list[Proposal] = Field(default_factory=list)
    hint_level: int = 0  # the highest hint level used, 0..3
    declared: str | None = None  # playbook/hypothesis
    finished: bool = False
    score: Score | None = None
    timeline: list[TimelineEntry] = Field(default_factory=list)

    def proposed_hypotheses(self) -> set[str]:
        """Every hypothesis the trainee proposed, as playbook/hypothesis."""
        return {p.answer.hypothesis for p in self.proposals}


class RevealedArtifact(BaseModel):
    id: str
    kind: str
    subject: str
    command: str
    captured_at: datetime | None
    content: str
    unavailable: str | None


class Page(BaseModel):
    """What on-call saw when paged: the alert or complaint, when, and about what. Nothing more."""

    text: str
    time: datetime
    target: dict[str, str]


class View(BaseModel):
    """What one step shows. `text` is plain sentences; surfaces add their own markup."""

    kind: Literal["page", "evidence", "proposal", "hint"]
    title: str
    text: list[str] = Field(default_factory=list)
    clock_seconds: int
    cost_seconds: int = 0
    page: Page | None = None
    source: str | None = None
    artifacts: list[RevealedArtifact] = Field(default_factory=list)
    answer: ProposalAnswer | None = None
    hint_level: int | None = None


def _now(now: datetime | None) -> datetime:
    return now if now is not None else datetime.now(UTC)


def _check(session: DrillSession, incident: Incident) -> None:
    if session.incident_id != incident.meta.id:
        raise DrillError(f"session {session.id} drills {session.incident_id}, not {incident.meta.id}")
    if session.finished:
        raise DrillError(f"drill {session.id} is finished; start another")


def start(incident: Incident, trainee: str, channel: str, *, now: datetime | None = None,
          session_id: str | None = None) -> tuple[DrillSession, View]:
    ground_truth(incident)
    when = _now(now)
    session = DrillSession(id=session_id or uuid.uuid4().hex[:12], incident_id=incident.meta.id, trainee=trainee,
                           channel=channel, started_at=when, updated_at=when)
    return session, page_view(session, incident)


def page_view(session: DrillSession, incident: Incident) -> View:
    """The opening view, also shown again on resume."""
    meta = incident.meta
    target = {k: str(v) for k, v in meta.target.model_dump().items() if v}
    return View(kind="page", title="You have been paged", clock_seconds=session.clock_seconds,
                page=Page(text=meta.page.strip(), time=meta.captured_at, target=target))


def request_evidence(session: DrillSession, incident: Incident, source: str, *,
                     now: datetime | None = None) -> tuple[DrillSession, View]:
    _check(session, incident)
    found = resolve_source(source)
    if found is None:
        raise DrillError(f"no evidence source {source.strip()!r}; sources: " + ", ".join(s.id for s in SOURCES))
    evidence = evidence_for(incident)
    artifacts = evidence.artifacts(found.id)
    shown = [RevealedArtifact(id=a.id, kind=str(a.kind), subject=a.subject, command=a.command,
                              captured_at=a.captured_at, content=a.content, unavailable=a.unavailable)
             for a in artifacts]
    again = found.id in session.revealed_sources
    cost = 0 if again else found.cost_seconds
    text = [] if artifacts else [f"Nothing was recorded from {found.label} for this incident."]
    if again:
        text.insert(0, "Already revealed; no time charged.")
    updated = session
    if not again:
        updated = session.model_copy(update={
            "clock_seconds": session.clock_seconds + cost,
            "revealed_sources": [*session.revealed_sources, found.id],
            "revealed_artifacts": [*session.revealed_artifacts, *(a.id for a in artifacts)],
            "timeline": [*session.timeline, TimelineEntry(at_seconds=session.clock_seconds + cost,
                                                          action="evidence", detail=found.id)],
            "updated_at": _now(now),
        })
    return updated, View(kind="evidence", title=found.label, text=text, clock_seconds=updated.clock_seconds,
                         cost_seconds=cost, source=found.id, artifacts=shown)


def propose(session: DrillSession, incident: Incident, hypothesis: str, *,
            now: datetime | None = None) -> tuple[DrillSession, View]:
    """What the revealed evidence says about one hypothesis, from its playbook; it never names the answer."""
    _check(session, incident)
    evidence = evidence_for(incident)
    refs = evidence.refs
    ref = resolve(hypothesis, refs)
    report = evidence.report(session.revealed_sources, force=[ref.playbook])
    reply = answer(ref, report, session.revealed_sources, refs)
    clock = session.clock_seconds + PROPOSAL_COST_SECONDS
    updated = session.model_copy(update={
        "clock_seconds": clock,
        "proposals": [*session.proposals, Proposal(asked=hypothesis, answer=reply, at_seconds=clock)],
        "timeline": [*session.timeline, TimelineEntry(at_seconds=clock, action="propose", detail=ref.key)],
        "updated_at": _now(now),
    })
    return updated, View(kind="proposal", title=ref.key, text=[reply.message], clock_seconds=clock,
                         cost_seconds=PROPOSAL_COST_SECONDS, answer=reply)


def hint(session: DrillSession, incident: Incident, *, now: datetime | None = None) -> tuple[DrillSession, View]:
    _check(session, incident)
    evidence = evidence_for(incident)
    level = min(hint_texts.MAX_LEVEL, session.hint_level + 1)
    text = hint_texts.hint(level, answer_key(evidence), evidence, session.revealed_sources)
    updated = session.model_copy(update={
        "hint_level": level,
        "timeline": [*session.timeline, TimelineEntry(at_seconds=session.clock_seconds, action="hint",
                                                      detail=str(level))],
        "updated_at": _now(now),
    })
    return updated, View(kind="hint", title=f"Hint {level}/{hint_texts.MAX_LEVEL}", text=[text],
                         clock_seconds=session.clock_seconds, hint_level=level)


def declare(session: DrillSession, incident: Incident, playbook: str, hypothesis: str, *,
            now: datetime | None = None) -> tuple[DrillSession, Debrief]:
    """The trainee's root cause: the drill ends, is scored, and the debrief says what the evidence meant."""
    _check(session, incident)
    evidence = evidence_for(incident)
    refs = evidence.refs
    declared = f"{playbook.strip()}/{hypothesis.strip()}"
    if declared not in refs:
        # Declaring is final, so only an exact key or an unambiguous bare id counts, never a fragment.
        ref = resolve(declared if playbook.strip() else hypothesis, refs, exact=True)
        declared = ref.key
    key = answer_key(evidence)
    result = score(declared=declared, truth=key.truth_key, lineage=key.lineage, requested=session.revealed_sources,
                   separated=separates(evidence, session.revealed_sources), discriminating=key.discriminating,
                   ideal_path=key.ideal_path, par_seconds=key.par_seconds, clock_seconds=session.clock_seconds,
                   hint_level=session.hint_level)
    updated = session.model_copy(update={
        "declared": declared,
        "finished": True,
        "score": result,
        "timeline": [*session.timeline, TimelineEntry(at_seconds=session.clock_seconds, action="declare",
                                                      detail=declared)],
        "updated_at": _now(now),
    })
    return updated, build_debrief(updated, evidence, key)


def debrief(session: DrillSession, incident: Incident) -> Debrief:
    """The debrief of a finished drill, rebuilt from the session (it is deterministic, so it is not stored)."""
    if not session.finished or session.score is None:
        raise DrillError(f"drill {session.id} is not finished")
    evidence = evidence_for(incident)
    return build_debrief(session, evidence, answer_key(evidence))
