"""What the Slack commands, buttons and the App Home do, apart from Slack's HTTP plumbing (bot/slack/app.py).

Every function takes the BotContext and plain values, so the flows are tested without a server. Whatever makes
Slack say something is queued in the outbox in the same transaction as the state change and the audit line
behind it; nothing here calls Slack's Web API (views.open is the one exception, made by the handler, because its
trigger_id expires within seconds).
"""

from __future__ import annotations

import functools
import json
import logging
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, DictLoader, FileSystemLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.context import BotContext
from bot.delivery import Reply, Root, View, find, queue
from bot.delivery.roots import queue_note
from bot.keys import incident_root_key
from bot.policy import is_node
from bot.render.slack import mrkdwn_escape
from bot.render.slack_triage import (
    NOTE_BLOCK,
    NOTE_INPUT,
    OTHER_VALUE,
    WRONG_BLOCK,
    WRONG_SELECT,
    cause_modal,
    evidence_listing,
    home_blocks,
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
from bot.store import repo
from bot.store.models import OutboxItem, TriageRun
from bot.store.types import utcnow
from collectors.models import Artifact, Target
from collectors.parsers.registry import parse_artifact
from collectors.paste import PasteError, artifacts_from_text, nothing_recognised
from collectors.redact import redact, redact_text
from collectors.validate import InvalidInput, duration, namespace, target_name
from drills.recorded.catalog import CatalogError
from drills.recorded.record import RecordError
from playbooks.pipeline import default_playbooks
from playbooks.report import Report

log = logging.getLogger("triagebot.slack")

USAGE = "/triage <service|pod/NAME|node/NAME|job/NAME> [namespace] [since]"
HOME_LIMIT = 20
_DURATION_LIKE = re.compile(r"^\d+[smhd]$")
_INCIDENT_REF = re.compile(r"^(\d+|[a-z-]+:\S+)$")  # an incident's id, or its key ("slash:...", "alert:...")

# The wording of everything the bot says besides the report. An operator overrides any of these by putting a
# file of the same name into `templates_dir`, next to the report's templates.
DEFAULT_TEMPLATES = {
    "help.md.j2": """\
*/triage*: evidence-first triage of a service, pod, node or job
• `/triage <service> [namespace] [since]`, e.g. `/triage checkout shop 2h`. The namespace defaults to \
`default`, the window to `{{ default_since }}` (at most 7d); `-n NAMESPACE` and `--since 2h` work too.
• `/triage pod/NAME`, `node/NAME` or `job/NAME`: one object directly.
• `/triage` followed by pasted evidence (kubectl describe, events, dmesg, kubelet or NCCL logs, Prometheus \
output): analysed as pasted, without touching the cluster.
• The message shortcut *Triage this message* does the same for evidence someone already posted.
The report arrives in a thread: the leading hypotheses with their evidence, what would falsify the leader, next \
checks, mitigations, what evidence was missing, a chart and the raw evidence as a file. Its buttons: Show \
evidence, Re-run, Mark resolved, Wrong diagnosis, Save as drill.
• `/triage postmortem [INCIDENT]`: a postmortem draft (markdown) of an incident, by default this channel's latest \
resolved one, as a file in its thread; the note that says an incident was resolved has a button for it too.
• `/triage digest on|off`: the weekly digest in this channel, every Monday, for the week before.
{% if namespaces %}Namespaces you may triage here: {{ namespaces|join(", ") }}.\
{% else %}Nothing is granted to this channel or to you yet: ask an admin to add it under `permissions`.{% endif %}""",
    "triaging.md.j2": ":hourglass_flowing_sand: Triaging *{{ label|mrkdwn }}* in `{{ namespace }}` (last "
                      "{{ since }}) for <@{{ user }}>. The report follows in this thread.",
    "triaged.md.j2": ":mag: Triaged *{{ label|mrkdwn }}* in `{{ namespace }}` (last {{ since }}) for <@{{ user }}>. "
                     "The report is in this thread.",
    "ended.md.j2": ":grey_question: The triage of *{{ label|mrkdwn }}* in `{{ namespace }}` (last {{ since }}) for "
                   "<@{{ user }}> ended without a report.",
    "pasted.md.j2": ":hourglass_flowing_sand: Analysing evidence {% if link %}from <{{ link }}|a message>, for"
                    "{% else %}pasted by{% endif %} <@{{ user }}> ({{ kinds|join(', ') }}). The report follows in "
                    "this thread.",
    "analysed.md.j2": ":mag: Analysed evidence {% if link %}from <{{ link }}|a message>, for"
                      "{% else %}pasted by{% endif %} <@{{ user }}> ({{ kinds|join(', ') }}). The report is in "
                      "this thread.",
    "rerun.md.j2": ":repeat: <@{{ user }}> asked for a re-run of triage run {{ run_id }}{% if live %} (live, "
                   "last {{ since }}){% else %} (the same evidence, current playbooks){% endif %}.",
    "resolved.md.j2": ":white_check_mark: Marked resolved by <@{{ user }}>.",
    "feedback.md.j2": ":memo: <@{{ user }}> says the diagnosis of run {{ run_id }} was wrong{% if right %}; the right "
                      "hypothesis: *{{ right|mrkdwn }}*{% endif %}.{% if note %}\n> {{ note|mrkdwn }}{% endif %}",
    "drill.md.j2": ":floppy_disk: <@{{ user }}> saved run {{ run_id }} as a drill: `{{ folder|mrkdwn }}`"
                   "{% if truth %} (ground truth {{ truth|mrkdwn }}). Drill it with `/drill start {{ id }}` or "
                   "`triagebot drill {{ id }}`{% else %} (no ground truth yet: mark a wrong diagnosis first, or "
                   "edit incident.yaml; until then it cannot be drilled){% endif %}. Replay it with "
                   "`triagebot replay {{ folder|mrkdwn }}`.",
    "home_incident.md.j2": "{{ icon }} *{{ title|mrkdwn }}* · {{ status }}\n{{ source }}"
                           "{% if namespace %} · `{{ namespace }}`{% endif %}"
                           "{% if channel %} · <#{{ channel }}>{% endif %}"
                           " · <!date^{{ epoch }}^{date_short_pretty} {time}|{{ when }}>"
                           "{% if leader %}\nLeading: {{ leader|mrkdwn }}{% endif %}",
    "home_empty.md.j2": "No incidents yet. Try `/triage help` in a channel.",
}


class Wording:
    """The message templates: the operator's folder first, then the defaults above."""

    def __init__(self, templates_dir: Path | None = None) -> None:
        loaders: list[Any] = [DictLoader(DEFAULT_TEMPLATES)]
        if templates_dir is not None:
            loaders.insert(0, FileSystemLoader(str(templates_dir)))
        # Sandboxed: templates are operator-supplied files, and the values they see come from Slack users.
        self.env = SandboxedEnvironment(loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False)
        self.env.filters["mrkdwn"] = mrkdwn_escape

    def render(self, name: str, **variables: Any) -> str:
        return self.env.get_template(f"{name}.md.j2").render(**variables).strip()


@functools.lru_cache(maxsize=8)
def wording_for(templates_dir: Path | None) -> Wording:
    """One Wording per templates folder, kept: a new one compiles its templates again, CPU that every command would
    spend in the process that acks Slack. Jinja still reloads a template whose file changed."""
    return Wording(templates_dir)


# --------------------------------------------------------------------------------------------------------------
# Parsing /triage
# --------------------------------------------------------------------------------------------------------------


class CommandError(ValueError):
    """A /triage the bot cannot act on; the message says what was expected."""


@dataclass(frozen=True)
class HelpCommand:
    pass


@dataclass(frozen=True)
class LiveCommand:
    target: Target
    label: str  # what the user named, e.g. "checkout" or "pod/trainer-0"
    namespace: str
    since: timedelta
    since_text: str


@dataclass(frozen=True)
class PasteCommand:
    artifacts: list[Artifact]  # already redacted


@dataclass(frozen=True)
class PostmortemCommand:
    reference: str | None  # an incident id or key; None: the channel's latest resolved incident


@dataclass(frozen=True)
class DigestCommand:
    on: bool


Command = HelpCommand | LiveCommand | PasteCommand | PostmortemCommand | DigestCommand


def slack_unescape(text: str) -> str:
    """Slack sends &, < and > escaped, and pasted logs often sit in a code fence; undo both before parsing."""
    text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    stripped = text.strip()
    if stripped.startswith("```") and stripped.endswith("```") and len(stripped) >= 6:
        text = stripped[3:-3]
    return text


def parse_paste(text: str, name: str) -> PasteCommand:
    """Pasted evidence as redacted artifacts; CommandError says what is understood when nothing is recognised.

    In a channel, a report that only says "nothing recognised" would be noise in everyone's thread, so that
    answer goes to the sender alone (ephemeral), with what was looked for.
    """
    try:
        artifacts = artifacts_from_text(slack_unescape(text), name)
    except PasteError as err:
        raise CommandError(f"{err}. For a live triage type `{USAGE}`; `/triage help` explains more.") from None
    if not any(parse_artifact(a).facts for a in artifacts):
        raise CommandError(f"{nothing_recognised()} For a live triage type `{USAGE}`.")
    # Redacted before anything stores or echoes it: a paste can carry tokens as easily as a live capture.
    return PasteCommand([redact(a) for a in artifacts])


def parse_command(text: str, default_since: str) -> Command:
    """What a /triage text asks for: help, a live triage, or analysis of pasted evidence."""
    stripped = text.strip()
    if stripped.lower() in ("", "help", "-h", "--help", "?"):
        return HelpCommand()
    if "\n" in stripped:
        return parse_paste(text, "paste")
    if (memory := _parse_memory(stripped.split())) is not None:
        return memory
    try:
        return _parse_live(stripped.split(), default_since)
    except CommandError as live_error:
        # One line that is not a target may still be evidence, e.g. a single kernel log line; if nothing in it is
        # recognised, it was a mistyped target, and the target's error is the helpful one.
        try:
            return parse_paste(text, "paste")
        except CommandError:
            raise live_error from None


def _parse_memory(tokens: list[str]) -> PostmortemCommand | DigestCommand | None:
    """`postmortem [INCIDENT]` and `digest on|off`; None for anything else (a service may be called "digest":
    `/triage digest shop` still triages it)."""
    word = tokens[0].lower()
    if word == "postmortem" and (len(tokens) == 1 or (len(tokens) == 2 and _INCIDENT_REF.match(tokens[1]))):
        return PostmortemCommand(tokens[1] if len(tokens) == 2 else None)
    if word == "digest" and len(tokens) == 2 and tokens[1].lower() in ("on", "off"):
        return DigestCommand(tokens[1].lower() == "on")
    return None


def _parse_live(tokens: list[str], default_since: str) -> LiveCommand:
    options, positional = _split_options(tokens)
    # "/triage checkout 2h": a lone duration after the target is the window, not a namespace.
    if len(positional) == 2 and "since" not in options and _DURATION_LIKE.match(positional[1]):
        options["since"] = positional.pop()
    if not 1 <= len(positional) <= 3:
        raise CommandError(f"expected a target and at most a namespace and a window. Usage: `{USAGE}`")
    for slot, name in ((1, "namespace"), (2, "since")):
        if len(positional) > slot:
            if name in options:
                raise CommandError(f"the {name} is given twice. Usage: `{USAGE}`")
            options[name] = positional[slot]
    label, since_text = positional[0], options.get("since", default_since)
    try:
        kind, name = target_name(label)
        ns = namespace(options.get("namespace", "default"))
        since = duration(since_text)
    except InvalidInput as err:
        raise CommandError(f"{err}. Usage: `{USAGE}`") from None
    return LiveCommand(target=_target(kind, name, ns), label=label, namespace=ns, since=since,
                       since_text=since_text)


def _split_options(tokens: list[str]) -> tuple[dict[str, str], list[str]]:
    """`-n NS`, `--namespace[=]NS` and `--since[=]DURATION`, and the words that are not options."""
    options: dict[str, str] = {}
    positional: list[str] = []
    words = iter(tokens)
    for word in words:
        flag, has_value, value = word.partition("=")
        if flag in ("-n", "--namespace", "--since"):
            value = value if has_value else next(words, "")
            if not value:
                raise CommandError(f"`{flag}` needs a value. Usage: `{USAGE}`")
            options["since" if flag == "--since" else "namespace"] = value
        elif word.startswith("-"):
            raise CommandError(f"unknown option `{word}`. Usage: `{USAGE}`")
        else:
            positional.append(word)
    return options, positional


def _target(kind: str, name: str, ns: str) -> Target:
    """The Target the live sources resolve: pod and node by field, anything else by (kind/)name."""
    if kind == "pod":
        return Target(namespace=ns, pod=name, service=f"pod/{name}")
    if kind == "node":
        return Target(namespace=ns, node=name, service=f"node/{name}")
    return Target(namespace=ns, service=name if kind == "service" else f"{kind}/{name}")


def message_link(team_domain: str, channel: str, ts: str) -> str:
    """A link to a message, built the way Slack's permalinks are, without an API call."""
    if not (re.fullmatch(r"[a-z0-9-]+", team_domain) and re.fullmatch(r"[A-Z0-9]+", channel)
            and re.fullmatch(r"\d+\.\d+", ts)):
        return ""  # never put something unexpected into a link
    return f"https://{team_domain}.slack.com/archives/{channel}/p{ts.replace('.', '')}"


def granted_namespaces(ctx: BotContext, *, channel: str, user: str) -> list[str]:
    perms = ctx.settings.permissions
    return sorted(set(perms.channels.get(channel, []) + perms.users.get(user, [])))


def help_text(ctx: BotContext, *, channel: str, user: str) -> str:
    return wording_for(ctx.settings.templates_dir).render(
        "help", default_since=ctx.settings.default_since,
        namespaces=granted_namespaces(ctx, channel=channel, user=user))


# --------------------------------------------------------------------------------------------------------------
# Audit
# --------------------------------------------------------------------------------------------------------------


def audit(ctx: BotContext, *, user: str, channel: str | None, action: str, target: str | None = None,
          detail: dict[str, Any] | None = None, outcome: str = "ok") -> None:
    """An audit line in a transaction of its own, for commands that change nothing else (help, refusals)."""
    with ctx.factory.begin() as session:
        repo.audit(session, actor=user, channel=channel, action=action, target=target, detail=detail,
                   outcome=outcome)


def quoted(text: str, limit: int = 200) -> str:
    """What a user typed, fit for the audit log: the first line, shortened, with secrets masked."""
    first = text.strip().split("\n", 1)[0]
    return redact_text(first[:limit])


def _wake(ctx: BotContext) -> None:
    if ctx.poster is not None:
        ctx.poster.wake()


# --------------------------------------------------------------------------------------------------------------
# Starting triages
# --------------------------------------------------------------------------------------------------------------


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
    _wake(ctx)
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
    _wake(ctx)
    return ctx.jobs.publish_paste(request, cmd.artifacts)


# --------------------------------------------------------------------------------------------------------------
# Buttons on a report
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Click:
    """Who clicked, where: the channel, and the thread the clicked message sits in."""

    user: str
    channel: str
    thread_ts: str | None
    trigger_id: str | None = None


def click_from(body: dict[str, Any]) -> Click:
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    thread = container.get("thread_ts") or message.get("thread_ts") or container.get("message_ts")
    return Click(user=str((body.get("user") or {}).get("id", "")), channel=str(channel),
                 thread_ts=str(thread) if thread else None, trigger_id=body.get("trigger_id"))


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
    _wake(ctx)
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


def drills_root(ctx: BotContext) -> Path:
    return drills_dir(ctx.settings)


def save_drill(ctx: BotContext, value: str, click: Click) -> str | None:
    """Write the run's (already redacted) artifacts as a recorded incident, and say where in the thread."""
    wording = wording_for(ctx.settings.templates_dir)

    def work(session: Session, run: Run) -> tuple[str | None, dict[str, Any]]:
        folder = drills_root(ctx) / f"slack-run-{run.row.id}"
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


# --------------------------------------------------------------------------------------------------------------
# App Home
# --------------------------------------------------------------------------------------------------------------


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
    _wake(ctx)
