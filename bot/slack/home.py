"""The App Home tab: recent incidents, newest first, published through the outbox."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.context import BotContext
from bot.delivery import View, queue
from bot.render.slack_triage import home_blocks, hypothesis_label
from bot.slack.common import wake
from bot.slack.wording import Wording, wording_for
from bot.store import repo
from bot.store.models import TriageRun
from playbooks.report import Report

HOME_LIMIT = 20


def home_view(session: Session, wording: Wording, limit: int = HOME_LIMIT) -> dict[str, Any]:
    """Recent incidents, newest first, with their status and the latest run's leading hypothesis."""
    incidents = repo.recent_incidents(session, limit)
    leaders = _leaders(session, [i.id for i in incidents])
    entries = [wording.render(
        "home_incident", icon=":white_check_mark:" if incident.status == "resolved" else ":red_circle:",
        title=incident.title or incident.key, status=incident.status, source=incident.source,
        namespace=incident.namespace or "", channel=incident.channel or "",
        epoch=int(incident.created_at.timestamp()), when=_when(incident.created_at),
        leader=leaders.get(incident.id, "")) for incident in incidents]
    return home_blocks(entries, wording.render("home_empty"), limit)


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _leaders(session: Session, incident_ids: list[int]) -> dict[int, str]:
    """The leading hypothesis of each incident's latest run."""
    if not incident_ids:
        return {}
    rows = session.execute(select(TriageRun.incident_id, TriageRun.report)
                           .where(TriageRun.incident_id.in_(incident_ids))
                           .order_by(TriageRun.id.desc())).all()
    out: dict[int, str] = {}
    for incident_id, raw in rows:
        if incident_id is None or incident_id in out or not raw:
            continue
        try:
            lead = Report.model_validate(raw).leading()
        except ValidationError:
            continue
        out[incident_id] = (f"{hypothesis_label(lead[0].playbook, lead[1].id)} ({lead[1].status})" if lead
                            else "no hypothesis holds")
    return out


def queue_home(ctx: BotContext, user: str, event_id: str | None) -> None:
    """Publish the Home tab through the outbox; Slack's retries of one event carry its id, so they collapse."""
    with ctx.factory.begin() as session:
        view = home_view(session, wording_for(ctx.settings.templates_dir))
        queue(session, View(key=f"home:{user}:{event_id or uuid.uuid4().hex}", channel=user, view=view))
    wake(ctx)
