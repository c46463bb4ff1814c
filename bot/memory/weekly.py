"""The store queries behind the weekly digest: the window's incidents with their latest verdict, and its labels."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.memory.digest import IncidentSummary
from bot.memory.labels import labels_since
from bot.memory.production import Label
from bot.store.models import Incident, TriageRun


def _lead(report: Any) -> str | None:
    lead = report.get("lead") if isinstance(report, dict) else None
    if isinstance(lead, dict) and lead.get("playbook") and lead.get("hypothesis"):
        return f"{lead['playbook']}/{lead['hypothesis']}"
    return None


def _where(*targets: Any) -> str | None:
    """The node when a triage named one, else the workload: where a repeat would be noticed."""
    for target in targets:
        if isinstance(target, dict) and target.get("node"):
            return f"node/{target['node']}"
    for target in targets:
        if isinstance(target, dict) and (name := target.get("service") or target.get("pod")):
            return f"{target.get('namespace') or '?'}/{name}"
    return None


def incidents_between(session: Session, since: datetime, until: datetime,
                      channel: str | None = None) -> list[IncidentSummary]:
    query = select(Incident).where(Incident.created_at >= since, Incident.created_at < until)
    if channel is not None:
        query = query.where(Incident.channel == channel)
    incidents = list(session.scalars(query.order_by(Incident.created_at, Incident.id)))
    latest: dict[int, TriageRun] = {}
    if incidents:
        runs = session.scalars(select(TriageRun).where(TriageRun.incident_id.in_([i.id for i in incidents]))
                               .order_by(TriageRun.id))
        latest = {run.incident_id: run for run in runs if run.incident_id is not None}
    out: list[IncidentSummary] = []
    for i in incidents:
        run = latest.get(i.id)
        out.append(IncidentSummary(id=i.id, title=i.title or i.key, created_at=i.created_at, status=i.status,
                                   lead=_lead(run.report) if run is not None else None,
                                   where=_where(i.target, run.target if run is not None else None)))
    return out


def labels_between(session: Session, since: datetime, until: datetime, channel: str | None = None) -> list[Label]:
    labels = [lb for lb in labels_since(session, since) if lb.at < until]
    if channel is None or not labels:
        return labels
    runs = {lb.run_id for lb in labels}
    here = set(session.scalars(select(TriageRun.id).join(Incident, Incident.id == TriageRun.incident_id)
                               .where(TriageRun.id.in_(runs), Incident.channel == channel)))
    return [lb for lb in labels if lb.run_id in here]
