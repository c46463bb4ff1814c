"""The feedback the store holds, as labels: each person's verdict joined to the report it judged."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.memory.production import Label
from bot.store.models import Feedback, TriageRun


def _said(report: Any) -> str | None:
    lead = report.get("lead") if isinstance(report, dict) else None
    if isinstance(lead, dict) and lead.get("playbook") and lead.get("hypothesis"):
        return f"{lead['playbook']}/{lead['hypothesis']}"
    return None


def labels_since(session: Session, since: datetime) -> list[Label]:
    """Feedback given at or after `since`. Feedback that names no run judges the incident's latest run before it
    (the buttons always name one; older rows and the CLI may not)."""
    given = list(session.scalars(select(Feedback).where(Feedback.created_at >= since).order_by(Feedback.created_at)))
    named = {fb.triage_run_id for fb in given if fb.triage_run_id is not None}
    runs = {run.id: run for run in session.scalars(select(TriageRun).where(TriageRun.id.in_(named)))} if named else {}
    out: list[Label] = []
    for fb in given:
        run = runs.get(fb.triage_run_id) if fb.triage_run_id is not None else session.scalars(
            select(TriageRun).where(TriageRun.incident_id == fb.incident_id, TriageRun.started_at <= fb.created_at)
            .order_by(TriageRun.started_at.desc()).limit(1)).first()
        if run is None:
            continue  # nothing was said that this could judge
        was = f"{fb.right_playbook}/{fb.right_hypothesis}" if fb.right_playbook and fb.right_hypothesis else None
        out.append(Label(run_id=run.id, said=_said(run.report), right=fb.verdict == "correct", was=was,
                         by=fb.user_id, at=fb.created_at))
    return out
