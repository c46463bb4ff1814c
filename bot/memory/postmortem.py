"""The postmortem draft of one incident: pure, the stored rows in (bot/memory/history.py), a Postmortem out.

What it holds (issue 30 point 3): the timeline (alerts fired and resolved, triage verdicts, silences, buttons
pressed, by whom), the evidence behind the verdict quoted with where it was read, the verdict with what would
falsify it, the on-call's label, and follow-ups from the next checks the triage could not run itself.
bot/render/memory/postmortem.py writes it as markdown; redaction happens there, on the way out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from bot.memory.history import IncidentRows
from bot.store.models import Alert, AuditEntry, Feedback, TriageRun
from playbooks.report import Evidence, HypothesisResult, Report

MAX_EVIDENCE = 12
MAX_FOLLOW_UPS = 10
# What a button or command was, in the timeline's words; an action not listed here is left out (e.g. a modal opened).
ACTION_WORDS = {
    "button.show_evidence": "listed the evidence",
    "button.rerun": "asked for a re-run",
    "button.resolve_submit": "marked the incident resolved",
    "button.wrong_submit": "said the diagnosis was wrong",
    "button.save_drill": "saved the run as a drill",
    "button.silence": "silenced the alert for 1h",
    "button.postmortem": "asked for this postmortem",
    "slash.postmortem": "asked for this postmortem",
    "cli.drill_save": "saved the incident as a drill (CLI)",
}


@dataclass(frozen=True)
class Event:
    at: datetime
    what: str
    by: str | None = None  # a Slack user id, "cli:<user>" or None for the bot and Alertmanager


@dataclass(frozen=True)
class Quoted:
    hypothesis: str
    fact: str
    value: str
    source: str  # the artifact and its lines, and how it was captured
    excerpt: str  # the line as read; "" when no text was kept


@dataclass(frozen=True)
class Verdict:
    run_id: int
    playbook: str
    hypothesis: str
    status: str
    claim: str
    falsifier: str
    because: list[str]


@dataclass(frozen=True)
class OnCallLabel:
    by: str
    at: datetime
    right: bool
    instead: str | None  # "playbook/hypothesis" the person chose when the verdict was wrong
    note: str | None


@dataclass(frozen=True)
class Postmortem:
    incident_id: int
    key: str
    title: str
    source: str
    status: str
    namespace: str | None
    opened_at: datetime
    resolved_at: datetime | None
    timeline: list[Event]
    verdict: Verdict | None
    no_verdict: str | None  # why there is no verdict: no triage ran, it failed, nothing held
    evidence: list[Quoted]
    label: OnCallLabel | None
    follow_ups: list[str]  # commands and queries, to run as they are
    missing: list[str]  # the sources the triage could not read, and why


def _report(run: TriageRun) -> Report | None:
    try:
        return Report.model_validate(run.report) if run.report else None
    except ValidationError:
        return None  # stored by an older version


def _alert_name(alert: Alert) -> str:
    labels = alert.labels or {}
    name = str(labels.get("alertname") or "alert")
    where = next((f"{k}={labels[k]}" for k in ("node", "Hostname", "pod", "instance") if labels.get(k)), "")
    return f"{name} ({where})" if where else name


def alert_events(alerts: Iterable[Alert]) -> list[Event]:
    """Each alert's changes of state, not every repeat: Alertmanager resends a firing group every few minutes."""
    last: dict[str, str] = {}
    out: list[Event] = []
    for alert in alerts:
        who = alert.fingerprint or _alert_name(alert)
        before = last.get(who)
        if before == alert.status:
            continue
        last[who] = alert.status
        verb = "resolved" if alert.status == "resolved" else ("fired again" if before else "fired")
        out.append(Event(alert.received_at, f"Alert {verb}: {_alert_name(alert)}"))
    return out


def _run_event(run: TriageRun) -> Event:
    report = _report(run)
    asked = {"alert": "the alert", "slash": "/triage", "paste": "a paste", "rerun": "a re-run"}.get(run.trigger,
                                                                                                 run.trigger)
    if run.status != "ok":
        said = f"failed ({run.error or 'no reason stored'})"
    elif report is None:
        said = "no readable report"
    elif report.lead is None:
        said = "no hypothesis held"
    else:
        lead = report.lead
        said = f"{lead.playbook}/{lead.hypothesis} ({lead.status})"
    return Event(run.finished_at or run.started_at, f"Triage run {run.id} (from {asked}): {said}",
                 run.requested_by if run.trigger != "alert" else None)


def _silence_is_mine(entry: AuditEntry, alerts: list[Alert]) -> bool:
    matchers = (entry.detail or {}).get("matchers")
    if not isinstance(matchers, Mapping) or not matchers:
        return False
    return any(all((alert.labels or {}).get(k) == v for k, v in matchers.items()) for alert in alerts)


def _action_event(entry: AuditEntry, alerts: list[Alert]) -> Event | None:
    words = ACTION_WORDS.get(entry.action)
    if words is None or entry.outcome != "ok":
        return None
    if entry.action == "button.silence" and not _silence_is_mine(entry, alerts):
        return None
    detail = entry.detail or {}
    if entry.action == "button.silence" and detail.get("silence"):
        words += f" (silence {detail['silence']})"
    return Event(entry.at, words[0].upper() + words[1:], entry.actor)


def _feedback_event(fb: Feedback) -> Event:
    if fb.verdict == "correct":
        what = f"Labelled triage run {fb.triage_run_id} right"
    else:
        instead = f"{fb.right_playbook}/{fb.right_hypothesis}" if fb.right_playbook else "something else"
        what = f"Labelled triage run {fb.triage_run_id} wrong: it was {instead}"
    return Event(fb.created_at, what, fb.user_id)


def _source(ev: Evidence, artifacts: Mapping[str, str]) -> str:
    place = f"{ev.artifact}:{ev.lines}" if ev.lines else ev.artifact
    how = artifacts.get(ev.artifact, "")
    return f"{place} ({how})" if how else place


def _value(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _quoted(report: Report, hypotheses: list[HypothesisResult]) -> list[Quoted]:
    artifacts = {a.id: " ".join(p for p in (a.kind, a.command or a.source) if p) for a in report.artifacts}
    seen: set[tuple[str, str, str]] = set()
    out: list[Quoted] = []
    for h in hypotheses:
        for ev in h.evidence:
            key = (ev.fact, ev.artifact, ev.lines)
            if key in seen:
                continue
            seen.add(key)
            out.append(Quoted(h.id, ev.fact, _value(ev.value), _source(ev, artifacts), ev.excerpt.strip()))
    return out[:MAX_EVIDENCE]


def follow_ups(report: Report) -> list[str]:
    """The next checks (commands and queries) the triage named but could not run itself: the leader's, then those of
    the hypotheses left unknown for want of a fact. Deduplicated, in that order."""
    found = report.leading()
    ranked: list[HypothesisResult] = [found[1]] if found else []
    ranked += [h for f in report.findings for h in f.hypotheses if h.status == "unknown" and h.needs]
    return list(dict.fromkeys(check for h in ranked for check in h.next_checks))[:MAX_FOLLOW_UPS]


def _verdict(rows: IncidentRows) -> tuple[Verdict | None, Report | None, str | None]:
    """The latest run that said something: its lead, or why nothing led."""
    if not rows.runs:
        return None, None, "no triage ran on this incident"
    for run in reversed(rows.runs):
        report = _report(run)
        if run.status != "ok" or report is None:
            continue
        found = report.leading()
        if found is None:
            return None, report, f"triage run {run.id} found no hypothesis the evidence supports"
        finding, lead = found
        return (Verdict(run.id, finding.playbook, lead.id, lead.status, lead.claim, lead.falsified_by,
                        list(lead.because)), report, None)
    last = rows.runs[-1]
    if last.status == "ok":
        return None, None, f"triage run {last.id} left no report this version can read"
    return None, None, f"triage run {last.id} failed: {last.error or 'no reason stored'}"


def _label(feedback: list[Feedback]) -> OnCallLabel | None:
    if not feedback:
        return None
    fb = feedback[-1]  # people change their minds: the latest word counts, as in production accuracy
    instead = f"{fb.right_playbook}/{fb.right_hypothesis}" if fb.right_playbook and fb.right_hypothesis else None
    return OnCallLabel(by=fb.user_id, at=fb.created_at, right=fb.verdict == "correct", instead=instead, note=fb.note)


def _resolved_at(rows: IncidentRows, timeline: list[Event]) -> datetime | None:
    if rows.incident.status != "resolved":
        return None
    ends = [e.at for e in timeline if e.what.startswith(("Alert resolved", "Marked the incident resolved"))]
    return max(ends) if ends else rows.incident.updated_at


def build_postmortem(rows: IncidentRows) -> Postmortem:
    incident = rows.incident
    events = [Event(incident.created_at, f"Incident opened ({incident.source})")]
    events += alert_events(rows.alerts)
    events += [_run_event(run) for run in rows.runs]
    # Labels before actions: Mark resolved stores the label and resolves at one instant, and a stable sort keeps
    # this order for equal times.
    events += [_feedback_event(fb) for fb in rows.feedback]
    events += [e for e in (_action_event(a, rows.alerts) for a in rows.actions) if e is not None]
    timeline = sorted(events, key=lambda e: e.at)
    verdict, report, why = _verdict(rows)
    evidence: list[Quoted] = []
    if report is not None and verdict is not None:
        found = report.leading()
        if found is not None:
            evidence = _quoted(report, [found[1], *report.supporting()])
    return Postmortem(
        incident_id=incident.id, key=incident.key, title=incident.title or incident.key, source=incident.source,
        status=incident.status, namespace=incident.namespace, opened_at=incident.created_at,
        resolved_at=_resolved_at(rows, timeline), timeline=timeline, verdict=verdict, no_verdict=why,
        evidence=evidence, label=_label(rows.feedback), follow_ups=follow_ups(report) if report else [],
        missing=[f"{m.source} ({m.reason})" for m in report.missing] if report else [])
