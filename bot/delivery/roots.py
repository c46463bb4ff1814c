"""The one editor of a thread's root message, for an alert group's root and a `/triage` placeholder alike.

A root changes when its triage ends (a verdict, or why there is none) and when someone resolves its incident.
Every change goes through the outbox's latest-state lane (`Edit` without a key): a storm of changes is one edit,
and each change starts from what the root shows now or will once its queued edits are sent (`latest_shown`), so
no edit undoes another.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.delivery.posts import PRIORITY_ROOT, Edit
from bot.delivery.queue import find, queue
from bot.delivery.words import CUT_MARK, TEXT_LIMIT, fitted_text
from bot.render.alert_root import AlertRoot, root_blocks
from bot.render.common import no_verdict_reason, verdict_line
from bot.render.slack import mrkdwn_escape
from bot.render.slack_triage import resolved_blocks, with_note
from bot.store.models import AlertGroup, OutboxItem
from playbooks.report import Report


def latest_shown(session: Session, root: OutboxItem) -> dict[str, Any]:
    """What the root shows now, or will once its queued edits are sent: the newest of its state versions
    (bot.store.outbox.set_latest), else the root post itself. An edit built from anything older would undo a
    status change."""
    versions = OutboxItem.collapse_key == f"{root.idempotency_key}:state"
    newest = session.scalars(select(OutboxItem.payload).where(versions).order_by(OutboxItem.id.desc()).limit(1)).first()
    return {**root.payload, **(newest or {})}


def queue_verdict(session: Session, parent: OutboxItem, report: Report,
                  done_text: str | None = None) -> OutboxItem | None:
    """Edit the message a report replied under so it carries the verdict: an alert root is re-rendered with it;
    a `/triage` placeholder gets its "done" wording and the verdict instead of "Triaging…"."""
    if (why := no_verdict_reason(report)) is not None:
        return queue_outcome(session, parent, why)  # e.g. the alert's instance is no node's address
    line = verdict_line(report)
    if parent.payload.get("kind") == "triage-root":
        head = str(parent.payload.get("done_text") or done_text or parent.payload.get("text", ""))
        return _edit(session, parent, {"text": f"{head}\n*Verdict:* {mrkdwn_escape(line)}"})
    return _edit_alert_root(session, parent, verdict=line, outcome="")


def queue_outcome(session: Session, parent: OutboxItem, reason: str) -> OutboxItem | None:
    """Edit the message a triage replied under when the triage ended without a report (its target was not found,
    it failed): the message must stop saying that a triage is running, and say why there is no verdict."""
    if parent.payload.get("kind") == "triage-root":
        head = str(parent.payload.get("ended_text") or parent.payload.get("text", ""))
        return _edit(session, parent, {"text": f"{head}\n*No verdict:* {mrkdwn_escape(reason)}"})
    return _edit_alert_root(session, parent, verdict=None, outcome=reason)


def queue_note(session: Session, root: OutboxItem, note: str, resolved: int | None = None) -> OutboxItem:
    """Add a line under the root as it shows now: to its text, and as a block when it has blocks, since the text
    is then only the notification fallback. `resolved`: the incident resolved, whose postmortem button goes under
    the note (the root gets blocks for it if it had none)."""
    shown = latest_shown(session, root)
    fields: dict[str, Any] = {"text": f"{shown.get('text', '')}\n{note}".strip()}
    if resolved is not None:
        fields["blocks"] = resolved_blocks(str(shown.get("text", "")), note, resolved, shown.get("blocks"))
    elif shown.get("blocks"):
        fields["blocks"] = with_note(shown["blocks"], note)
    return _edit(session, root, fields)


def root_outcome(session: Session, root_key: str) -> str:
    """Why the episode's triage ended without a verdict, as its root says now; "" when it did not (or runs)."""
    root = find(session, root_key)
    if root is None:
        return ""
    shown = latest_shown(session, root).get("root")
    return str(shown.get("outcome") or "") if isinstance(shown, dict) else ""


def text_with_verdict(text: str, line: str | None) -> str:
    """The root's notification text (what the webhook flow wrote) with the verdict under it, as the blocks show it.

    The verdict must fit under Slack's limit too; a text already cut (its full text went into the thread as a
    file) keeps its one cut mark."""
    if not line:
        return text
    verdict = f"\nVerdict: {mrkdwn_escape(line)}"
    body = text.removesuffix(CUT_MARK)
    room = TEXT_LIMIT - len(verdict)
    if body != text:
        body = fitted_text(body, room - len(CUT_MARK))[0].removesuffix(CUT_MARK) + CUT_MARK
    else:
        body = fitted_text(body, room)[0]
    return body + verdict


def verdict_text(verdict: str | None, outcome: str) -> str | None:
    """The notification text's verdict line: the verdict, or why there is none."""
    return verdict or (f"none, {outcome}" if outcome else None)


def _edit_alert_root(session: Session, parent: OutboxItem, *, verdict: str | None,
                     outcome: str) -> OutboxItem | None:
    if not isinstance(parent.payload.get("root"), dict):
        return None
    _lock_group_of(session, parent.payload.get("incident_id"))
    shown = latest_shown(session, parent)
    root = AlertRoot.model_validate(shown["root"]).model_copy(update={"verdict": verdict, "outcome": outcome})
    # The notification text keeps what the webhook flow wrote (stored beside it), with the verdict under it.
    base = str(shown.get("base_text") or str(shown.get("text", "")).split("\nVerdict: ", 1)[0])
    return _edit(session, parent, {"text": text_with_verdict(base, verdict_text(verdict, outcome)),
                                   "base_text": base, "blocks": root_blocks(root),
                                   "root": root.model_dump(mode="json")})


def _lock_group_of(session: Session, incident_id: Any) -> None:
    """Take the alert group's row lock, which every webhook for the group takes first: a verdict and a status change
    are then applied one after the other, each to what the other wrote (PostgreSQL; SQLite serialises writers)."""
    if isinstance(incident_id, int):
        session.execute(select(AlertGroup.id).where(AlertGroup.incident_id == incident_id).with_for_update())


def _edit(session: Session, root: OutboxItem, fields: dict[str, Any]) -> OutboxItem:
    # A root's change is a status change: it goes before reports and refreshes in its channel.
    return queue(session, Edit(target=root, fields=fields, priority=PRIORITY_ROOT))
