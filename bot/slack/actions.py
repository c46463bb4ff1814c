"""What the buttons on a report do (Show evidence, Re-run, Mark resolved, Wrong diagnosis, Save as drill), and the
cause form both Mark resolved and Wrong diagnosis open.

Each action loads the run, checks permission, changes state, queues what Slack is told and audits, in one
transaction (run_action). The modal is returned to the handler, which opens it (its trigger_id expires in seconds).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.orm import Session

from bot.context import BotContext
from bot.delivery import Reply, find, queue
from bot.delivery.roots import queue_note
from bot.keys import incident_root_key
from bot.policy import is_node
from bot.render.slack_triage import (
    NOTE_BLOCK,
    NOTE_INPUT,
    OTHER_VALUE,
    WRONG_BLOCK,
    WRONG_SELECT,
    cause_modal,
    evidence_listing,
    hypothesis_label,
    resolved_blocks,
    wrong_modal,
)
from bot.runner.drill_save import (
    SaveError,
    check_drill_folder,
    drills_dir,
    ground_truth,
    started_by,
    write_run_as_drill,
)
from bot.runner.jobs import TriageRequest
from bot.runner.runs import ActionError, Run, load_run
from bot.slack.common import Click, audit, wake
from bot.slack.wording import Wording, wording_for
from bot.store import repo
from bot.store.models import OutboxItem
from bot.store.types import utcnow
from collectors.models import Artifact
from collectors.redact import redact_text
from collectors.validate import duration
from drills.recorded.catalog import CatalogError
from drills.recorded.record import RecordError
from playbooks.pipeline import default_playbooks


def _authorise(ctx: BotContext, run: Run, click: Click) -> None:
    node = is_node(run.target)
    if not node and run.namespace is None:
        return  # pasted evidence: the buttons act on what is already in the channel, nothing in the cluster
    checked = None if node else run.namespace  # a node's run needs "*" (bot.policy.scope)
    perms = ctx.settings.permissions
    if not perms.allowed_scope(checked, channel=click.channel, user=click.user):
        raise ActionError(perms.refusal(checked, channel=click.channel, user=click.user), outcome="refused")


def root_key(incident_key: str) -> str:
    """The outbox key of an incident's first message, which its thread hangs off."""
    return incident_root_key(incident_key)


def _root(session: Session, run: Run) -> OutboxItem | None:
    return find(session, root_key(run.incident.key)) if run.incident is not None else None


def _reply(session: Session, run: Run, click: Click, *, key: str, text: str, kind: str,
           blocks: list[dict[str, Any]] | None = None) -> None:
    """A post in the run's thread: under the incident's root post, or else in the thread that was clicked."""
    root = _root(session, run)
    channel = root.channel if root is not None else click.channel
    queue(session, Reply(key=key, channel=channel, kind=kind, text=text, blocks=blocks or None,
                         incident_id=run.row.incident_id, parent=root,
                         thread_ts=None if root is not None else click.thread_ts))


Work = Callable[[Session, Run], tuple[str | None, dict[str, Any]]]


def run_action(ctx: BotContext, action: str, value: str, click: Click, work: Work) -> str | None:
    """Load the run, check permission, do `work(session, run)` and audit it, all in one transaction.

    Returns what to tell the clicker (ephemeral), or None. A refusal or a bad button is audited too.
    """
    try:
        with ctx.factory.begin() as session:
            run = load_run(session, value)
            _authorise(ctx, run, click)
            message, detail = work(session, run)
            repo.audit(session, actor=click.user, channel=click.channel, action=f"button.{action}",
                       target=f"run:{run.row.id}", detail=detail)
    except ActionError as err:
        audit(ctx, user=click.user, channel=click.channel, action=f"button.{action}", target=f"run:{value}",
              detail={"error": str(err)}, outcome=err.outcome)
        return str(err)
    wake(ctx)
    return message


def show_evidence(ctx: BotContext, value: str, click: Click) -> str | None:
    def work(session: Session, run: Run) -> tuple[None, dict[str, Any]]:
        if run.report is None:
            raise ActionError(f"Triage run {run.row.id} has no stored report to list evidence from.")
        text, blocks = evidence_listing(run.row.id, run.report)
        # One listing per run: a second click does not post it again.
        _reply(session, run, click, key=f"run:{run.row.id}:evidence", text=text, kind="evidence-list",
               blocks=blocks)
        return None, {}

    return run_action(ctx, "show_evidence", value, click, work)


def rerun(ctx: BotContext, value: str, click: Click) -> str | None:
    """A live run is triaged again (same target, default window); pasted evidence is analysed again."""
    started: list[tuple[TriageRequest, list[Artifact] | None]] = []
    wording = wording_for(ctx.settings.templates_dir)

    def work(session: Session, run: Run) -> tuple[None, dict[str, Any]]:
        key = f"rerun:{uuid.uuid4().hex}"
        root = _root(session, run)
        since_text = ctx.settings.default_since
        _reply(session, run, click, key=f"{key}:start", kind="note", text=wording.render(
            "rerun", user=click.user, run_id=run.row.id, live=run.live, since=since_text))
        request = TriageRequest(target=run.target, since=duration(since_text) if run.live else timedelta(0),
                                trigger="rerun", channel=root.channel if root else click.channel, key=key,
                                parent_key=root.idempotency_key if root else f"{key}:start",
                                requested_by=click.user, incident_id=run.row.incident_id)
        started.append((request, None if run.live else run.artifacts()))
        return None, {"key": key, "live": run.live}

    message = run_action(ctx, "rerun", value, click, work)
    for request, artifacts in started:
        if artifacts is None:
            ctx.jobs.submit(request)
        else:
            ctx.jobs.publish_paste(request, artifacts)
    return message


def _resolve(session: Session, run: Run, click: Click, wording: Wording) -> tuple[str | None, dict[str, Any]]:
    """Mark the run's incident resolved, say so on its root message and in its thread."""
    incident = run.incident
    if incident is None:
        raise ActionError(f"Triage run {run.row.id} belongs to no incident, so there is nothing to resolve.")
    if incident.status == "resolved":
        return f"Incident {incident.title!r} is already resolved.", {"already": True}
    incident.status = "resolved"
    incident.updated_at = utcnow()
    note = wording.render("resolved", user=click.user)
    key = f"incident:{incident.id}:resolved:{uuid.uuid4().hex[:12]}"
    root = _root(session, run)
    if root is not None:
        queue_note(session, root, note, resolved=incident.id)
    _reply(session, run, click, key=f"{key}:note", text=note, kind="status",
           blocks=resolved_blocks(note, "", incident.id, None))
    return None, {"incident": incident.key}


def resolve_view(ctx: BotContext, value: str, click: Click) -> tuple[dict[str, Any] | None, str | None]:
    """Mark resolved asks for the cause first (the verdict's chosen); an incident resolved already says so."""
    views: list[dict[str, Any]] = []

    def work(session: Session, run: Run) -> tuple[str | None, dict[str, Any]]:
        if run.incident is not None and run.incident.status == "resolved":
            return f"Incident {run.incident.title!r} is already resolved.", {"already": True}
        meta = {"run": run.row.id, "channel": click.channel, "thread_ts": click.thread_ts}
        views.append(cause_modal(run.report, json.dumps(meta), default_playbooks(), resolving=True))
        return None, {"opened": "modal"}

    message = run_action(ctx, "resolve", value, click, work)
    return (views[0] if views else None), message


def wrong_diagnosis_view(ctx: BotContext, value: str, click: Click) -> tuple[dict[str, Any] | None, str | None]:
    """The modal asking which hypothesis was right, or the reason there is none."""
    views: list[dict[str, Any]] = []

    def work(session: Session, run: Run) -> tuple[None, dict[str, Any]]:
        meta = {"run": run.row.id, "channel": click.channel, "thread_ts": click.thread_ts}
        views.append(wrong_modal(run.report, json.dumps(meta), default_playbooks()))
        return None, {"opened": "modal"}

    message = run_action(ctx, "wrong", value, click, work)
    return (views[0] if views else None), message


@dataclass(frozen=True)
class CauseAnswer:
    run_id: int
    channel: str
    thread_ts: str | None
    playbook: str | None
    hypothesis: str | None
    note: str | None


def read_cause_submission(view: dict[str, Any]) -> CauseAnswer | dict[str, str]:
    """The answer in a submitted modal, or errors per block (Slack shows them under the fields)."""
    values = (view.get("state") or {}).get("values") or {}
    chosen = ((values.get(WRONG_BLOCK) or {}).get(WRONG_SELECT) or {}).get("selected_option") or {}
    note = ((values.get(NOTE_BLOCK) or {}).get(NOTE_INPUT) or {}).get("value") or None
    note = redact_text(str(note)) if note else None  # stored and posted in the thread: redacted at the door
    choice = str(chosen.get("value") or "")
    if not choice:
        return {WRONG_BLOCK: "Choose the hypothesis that was right, or 'None of these'."}
    if choice == OTHER_VALUE and not note:
        return {NOTE_BLOCK: "Say in a few words what it was, since none of the hypotheses fits."}
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
        run_id = int(meta["run"])
    except (ValueError, KeyError, TypeError):
        return {WRONG_BLOCK: "This form lost track of its triage run; close it and click Wrong diagnosis again."}
    playbook, _, hypothesis = choice.partition(":") if choice != OTHER_VALUE else (None, "", None)
    return CauseAnswer(run_id=run_id, channel=str(meta.get("channel") or ""), thread_ts=meta.get("thread_ts"),
                       playbook=playbook or None, hypothesis=hypothesis or None, note=note)


def record_wrong(ctx: BotContext, answer: CauseAnswer, user: str) -> str | None:
    """Store the feedback and say so in the run's thread."""
    wording = wording_for(ctx.settings.templates_dir)
    click = Click(user=user, channel=answer.channel, thread_ts=answer.thread_ts)

    def work(session: Session, run: Run) -> tuple[None, dict[str, Any]]:
        if run.row.incident_id is None:
            raise ActionError(f"Triage run {run.row.id} belongs to no incident; feedback needs one.")
        row = repo.add_feedback(session, incident_id=run.row.incident_id, user_id=user, verdict="wrong",
                                triage_run_id=run.row.id, right_playbook=answer.playbook,
                                right_hypothesis=answer.hypothesis, note=answer.note)
        right = hypothesis_label(answer.playbook, answer.hypothesis or "") if answer.playbook else ""
        _reply(session, run, click, key=f"feedback:{row.id}", kind="feedback", text=wording.render(
            "feedback", user=user, run_id=run.row.id, right=right, note=answer.note or ""))
        return None, {"feedback": row.id, "right_playbook": answer.playbook,
                      "right_hypothesis": answer.hypothesis}

    return run_action(ctx, "wrong_submit", str(answer.run_id), click, work)


def record_resolution(ctx: BotContext, answer: CauseAnswer, user: str) -> str | None:
    """The cause someone gave when resolving, as feedback (right when it is the verdict), then the resolution."""
    wording = wording_for(ctx.settings.templates_dir)
    click = Click(user=user, channel=answer.channel, thread_ts=answer.thread_ts)

    def work(session: Session, run: Run) -> tuple[str | None, dict[str, Any]]:
        if run.row.incident_id is None:
            raise ActionError(f"Triage run {run.row.id} belongs to no incident, so there is nothing to resolve.")
        lead = run.report.lead if run.report is not None else None
        right = lead is not None and (lead.playbook, lead.hypothesis) == (answer.playbook, answer.hypothesis)
        row = repo.add_feedback(session, incident_id=run.row.incident_id, user_id=user,
                                verdict="correct" if right else "wrong", triage_run_id=run.row.id,
                                right_playbook=None if right else answer.playbook,
                                right_hypothesis=None if right else answer.hypothesis, note=answer.note)
        message, detail = _resolve(session, run, click, wording)
        return message, {**detail, "feedback": row.id, "verdict": row.verdict}

    return run_action(ctx, "resolve_submit", str(answer.run_id), click, work)


def save_drill(ctx: BotContext, value: str, click: Click) -> str | None:
    """Write the run's (already redacted) artifacts as a recorded incident, and say where in the thread."""
    wording = wording_for(ctx.settings.templates_dir)

    def work(session: Session, run: Run) -> tuple[str | None, dict[str, Any]]:
        folder = drills_dir(ctx.settings) / f"slack-run-{run.row.id}"
        if folder.exists():
            return f"Run {run.row.id} is already saved as a drill in `{folder}`.", {"folder": str(folder)}
        truth = ground_truth(session, run)
        try:
            check_drill_folder(folder)
            write_run_as_drill(folder, run, truth, page=f"Slack: {run.title}", title=f"Saved from Slack: {run.title}",
                               tags=["slack"], alert=started_by(session, run))
        except SaveError as err:  # nothing to save: said to the clicker alone
            raise ActionError(f"Not saved: {err}.", outcome="refused") from None
        except (RecordError, CatalogError, OSError) as err:
            raise ActionError(f"Could not save the drill: {err}", outcome="error") from None
        shown = hypothesis_label(truth.playbook, truth.hypothesis) if truth else ""
        _reply(session, run, click, key=f"run:{run.row.id}:drill", kind="drill", text=wording.render(
            "drill", user=click.user, run_id=run.row.id, folder=str(folder), truth=shown, id=folder.name))
        return None, {"folder": str(folder), "ground_truth": shown or None}

    return run_action(ctx, "save_drill", value, click, work)

