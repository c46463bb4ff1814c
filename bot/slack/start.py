"""What /triage and the "Triage this message" shortcut start: a live triage, or the analysis of pasted evidence.

Each opens the incident, audits, and queues the thread's root in one transaction, then starts the work; nothing
here calls Slack's Web API (bot/delivery posts what is queued).
"""

from __future__ import annotations

import uuid
from datetime import timedelta

from bot.context import BotContext
from bot.delivery import Root, queue
from bot.runner.jobs import TriageRequest
from bot.slack.common import wake
from bot.slack.triage_grammar import LiveCommand, PasteCommand
from bot.slack.wording import wording_for
from bot.store import repo
from collectors.models import Target


def start_live(ctx: BotContext, cmd: LiveCommand, *, channel: str, user: str) -> TriageRequest:
    """Open the incident, audit, and queue the "triaging…" root in one transaction; then start the triage."""
    key = f"slash:{uuid.uuid4().hex}"
    target = cmd.target.model_copy(update={"cluster": ctx.settings.cluster_name or ctx.settings.context})
    wording = wording_for(ctx.settings.templates_dir)
    words = {"label": cmd.label, "namespace": cmd.namespace, "since": cmd.since_text, "user": user}
    # What the placeholder says now, once the verdict is in (done), or once the triage ended without one (ended):
    # bot/delivery/roots.py edits it.
    text, done, ended = (wording.render(name, **words) for name in ("triaging", "triaged", "ended"))
    with ctx.factory.begin() as session:
        incident, _ = repo.open_incident(session, key, title=f"{cmd.label} in {cmd.namespace}", source="slash",
                                         namespace=cmd.namespace, target=target, channel=channel)
        repo.audit(session, actor=user, channel=channel, action="slash.triage", target=cmd.label,
                   detail={"namespace": cmd.namespace, "since": cmd.since_text, "incident": key})
        queue(session, Root(key=f"{key}:root", channel=channel, kind="triage-root", text=text,
                            incident_id=incident.id, state={"done_text": done, "ended_text": ended}))
        request = TriageRequest(target=target, since=cmd.since, trigger="slash", channel=channel, key=key,
                                parent_key=f"{key}:root", requested_by=user, incident_id=incident.id)
        # In the same transaction: a crash after the commit cannot leave a root whose triage never runs.
        ctx.jobs.queue_in(session, request)
    # Committed: the root post exists before the triage that replies under it starts.
    ctx.jobs.start_queued(request)
    wake(ctx)
    return request


def start_paste(ctx: BotContext, cmd: PasteCommand, *, channel: str, user: str, origin: str,
                link: str = "") -> int:
    """Like start_live for pasted evidence, which needs no cluster: it is analysed at once. Returns the run id.

    `origin` is "slash" or "shortcut"; `link` points at the message a shortcut was used on.
    """
    key = f"paste:{uuid.uuid4().hex}"
    kinds = sorted({str(a.kind) for a in cmd.artifacts})
    text = wording_for(ctx.settings.templates_dir).render("pasted", link=link, user=user, kinds=kinds)
    with ctx.factory.begin() as session:
        incident, _ = repo.open_incident(session, key, title=f"pasted {', '.join(kinds)}", source="paste",
                                         channel=channel)
        # The paste itself is not copied into the audit log: it is stored once, with the run, redacted.
        repo.audit(session, actor=user, channel=channel, action=f"{origin}.paste", target=", ".join(kinds),
                   detail={"artifacts": len(cmd.artifacts), "bytes": sum(len(a.content) for a in cmd.artifacts),
                           "incident": key})
        done = wording_for(ctx.settings.templates_dir).render("analysed", link=link, user=user, kinds=kinds)
        queue(session, Root(key=f"{key}:root", channel=channel, kind="triage-root", text=text,
                            incident_id=incident.id, state={"done_text": done}))
        request = TriageRequest(target=Target(), since=timedelta(0), trigger="paste", channel=channel, key=key,
                                parent_key=f"{key}:root", requested_by=user, incident_id=incident.id)
    wake(ctx)
    return ctx.jobs.publish_paste(request, cmd.artifacts)

