"""The root message of an alert group as Block Kit: what fired, how bad, on what, the verdict once triage
finishes, and where to act (graph, runbook, dashboard, silence).

Built from an `AlertRoot` (plain data the webhook and the triage both fill), so a status change and a verdict
re-render the same message instead of each writing its own text.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from pydantic import BaseModel, Field
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ConfirmObject,
    ContextBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.render.slack import cut_within, mrkdwn_escape
from bot.render.slack_triage import postmortem_block

SILENCE_ACTION = "alert_silence_1h"
SILENCE_DURATION = timedelta(hours=1)  # what the button creates (bot/slack/silence.py), and its dialog says
_CONFIRM_TEXT_LIMIT = 300  # Slack's limit on a confirm dialog's text
SEVERITY_ICON = {"critical": ":red_circle:", "error": ":red_circle:", "warning": ":large_orange_circle:",
                 "info": ":large_blue_circle:", "none": ":white_circle:"}
SUMMARY_LIMIT = 1500  # characters of the summary annotation in the root; the thread has every alert's own
# Slack's Block Kit limits (docs.slack.dev, "Blocks"): a section's text and a context element's text are at most
# 3,000 characters. A wide group (Alertmanager can send hundreds of alert names in one) or long label values must
# still make a valid root: the names are summarised past NAMES_SHOWN, each part is cut to its share, and links
# that do not fit are left out (the thread gets the whole text as a file: bot/webhook/alert_flow.py).
SECTION_LIMIT = 3000
NAMES_SHOWN = 10
NAME_LIMIT = 120  # characters of one alert name in the headline
TARGET_LIMIT = 300  # characters of the target in words (label values can be 1,024 characters each)
NOTE_LIMIT = 1000  # the note and the outcome lines
CUT = "…"
PENDING_VERDICT = "_Triage running; the verdict lands here._"


class Link(BaseModel):
    label: str
    url: str


class AlertRoot(BaseModel):
    """What the root message shows; stored with the outbox item so later updates can re-render it."""

    status: str  # firing | resolved
    count: int
    alertnames: list[str]
    severity: str = ""
    target: str = ""  # the target in words
    summary: str = ""
    links: list[Link] = Field(default_factory=list)
    verdict: str | None = None  # one line: the leading hypothesis and its status; None while triage runs
    triaged: bool = True  # false: this alert is not triaged (no target, or no playbook); verdict stays None
    note: str = ""  # e.g. "No playbook for KubeJobFailed yet."
    outcome: str = ""  # why the triage ended without a verdict (target not found, failed); "" otherwise
    silence_value: str | None = None  # the button's value (matchers); None: no button
    incident_id: int | None = None  # the episode's incident: once resolved, the root offers its postmortem


def target_words(target: Mapping[str, Any]) -> str:
    """A triage target (collectors.models.Target, dumped) in words: "pod x in namespace shop", "node gpu-1"."""
    service, namespace, node = target.get("service"), target.get("namespace"), target.get("node")
    if not service:
        return ""
    if service.startswith("node/"):  # cluster-scoped: no namespace; say where an address-only node came from
        named, instance = service.removeprefix("node/"), target.get("instance")
        return f"node {named}" + (f" (instance {instance})" if instance and instance != named else "")
    if service.startswith("namespace/"):
        return f"namespace {service.removeprefix('namespace/')}"
    words = service.replace("/", " ", 1) if "/" in service else f"service {service}"
    if namespace:
        words += f" in namespace {namespace}"
    if node:
        words += f" on node {node}"
    return words


def _url(url: str) -> str:
    """A URL inside Slack's <url|label> link syntax: its own '|' and '>' would end the link early."""
    return url.replace("|", "%7C").replace(">", "%3E").replace("<", "%3C").replace(" ", "%20")


def shown_names(alertnames: list[str]) -> str:
    """The group's alert names for a headline: the first NAMES_SHOWN, then how many more."""
    names = ", ".join(_cut(name, NAME_LIMIT) for name in alertnames[:NAMES_SHOWN])
    more = len(alertnames) - NAMES_SHOWN
    return f"{names} and {more} more" if more > 0 else names


def summarised(root: AlertRoot) -> bool:
    """Whether the root leaves something out (names past NAMES_SHOWN, a long summary, target or name), which the
    thread then carries in full."""
    return (len(root.alertnames) > NAMES_SHOWN or len(root.summary) > SUMMARY_LIMIT
            or len(root.target) > TARGET_LIMIT or any(len(n) > NAME_LIMIT for n in root.alertnames))


def headline(root: AlertRoot) -> str:
    icon = ":rotating_light:" if root.status == "firing" else ":white_check_mark:"
    severity = f" {_cut(root.severity, 40)}" if root.severity else ""
    on = f" on {_cut(root.target, TARGET_LIMIT)}" if root.target else ""
    return f"{icon} *[{root.status.upper()}:{root.count}{severity.upper()}] {shown_names(root.alertnames)}*{on}"


def _cut(text: str, limit: int) -> str:
    """`text` within `limit` characters, ending in an ellipsis when cut."""
    return text if len(text) <= limit else text[: limit - len(CUT)].rstrip() + CUT


def root_text(root: AlertRoot) -> str:
    """The notification text (and what a client without blocks shows)."""
    lines = [headline(root)]
    if root.verdict:
        lines.append(f"Verdict: {root.verdict}")
    lines.append(root.summary[:SUMMARY_LIMIT])
    return cut_within(mrkdwn_escape("\n".join(line for line in lines if line).strip()), SECTION_LIMIT, CUT)


def _links(links: list[Link]) -> str:
    """The links as one mrkdwn line, leaving out those that would not fit (a link cannot be cut in half)."""
    shown = ""
    for link in links:
        part = f"<{_url(link.url)}|{mrkdwn_escape(link.label)}>"
        joined = f"{shown}  ·  {part}" if shown else part
        if len(joined) <= SECTION_LIMIT:
            shown = joined
    return shown


def root_blocks(root: AlertRoot) -> list[dict[str, Any]]:
    icon = SEVERITY_ICON.get(root.severity.lower(), "") if root.severity else ""
    first = mrkdwn_escape(headline(root)) + (f"  {icon}" if icon and root.status == "firing" else "")
    if root.summary:
        first += "\n" + mrkdwn_escape(root.summary[:SUMMARY_LIMIT])
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=cut_within(first, SECTION_LIMIT, CUT)))]
    if root.verdict:
        said = [f"*Verdict:* {mrkdwn_escape(root.verdict)}"]
    else:  # why there is no verdict (the triage ended without one), and why this alert may not get one
        said = [line for line in (f"*No verdict:* {mrkdwn_escape(_cut(root.outcome, NOTE_LIMIT))}" if root.outcome
                                  else "",
                                  f"_{mrkdwn_escape(_cut(root.note, NOTE_LIMIT))}_" if root.note else "") if line]
        if not said and root.triaged and root.status == "firing":
            said = [PENDING_VERDICT]
    blocks += [SectionBlock(text=MarkdownTextObject(text=cut_within(line, SECTION_LIMIT, CUT))) for line in said]
    shown = _links(root.links)
    if shown:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(text=shown)]))
    if root.silence_value and root.status == "firing":
        blocks.append(ActionsBlock(block_id="alert_actions", elements=[
            ButtonElement(text="Silence 1h", action_id=SILENCE_ACTION, value=root.silence_value,
                          confirm=silence_confirm(root.silence_value))]))
    if root.status == "resolved" and root.incident_id is not None:
        blocks.append(postmortem_block(root.incident_id))
    for block in blocks:
        block.validate_json()
    return [block.to_dict() for block in blocks]


def _duration_words(duration: timedelta) -> str:
    hours, rest = divmod(int(duration.total_seconds()), 3600)
    return f"{hours} hour{'s' if hours != 1 else ''}" if not rest else f"{int(duration.total_seconds()) // 60} minutes"


def silence_confirm(value: str) -> ConfirmObject:
    """The dialog Slack shows before the button acts: every matcher the silence will have, and for how long.
    Past Slack's 300 characters the last matchers are counted rather than shown (the silence still has them)."""
    try:
        parsed = json.loads(value)
    except ValueError:
        parsed = {}
    pairs = [f"`{mrkdwn_escape(f'{k}={v}')}`" for k, v in sorted(parsed.items())] if isinstance(parsed, dict) else []
    head = f"Alertmanager will silence, for {_duration_words(SILENCE_DURATION)}, every alert matching "
    tail = ". The silence is made in your name and said in the alert's thread."
    shown: list[str] = []
    for i, pair in enumerate(pairs):
        more = len(pairs) - i - 1
        rest = f" and {more} more label{'s' if more != 1 else ''}" if more else ""
        if len(head + ", ".join([*shown, pair]) + rest + tail) > _CONFIRM_TEXT_LIMIT:
            left = len(pairs) - i
            rest = (f" and {left} more label{'s' if left != 1 else ''}" if shown
                    else f"its {left} labels (too long to show here)")
            return ConfirmObject(title="Silence this alert?", text=head + ", ".join(shown) + rest + tail,
                                 confirm="Silence", deny="Cancel")
        shown.append(pair)
    return ConfirmObject(title="Silence this alert?", text=head + (", ".join(shown) or "its labels") + tail,
                         confirm="Silence", deny="Cancel")


def silenced_line(user: str, silence_id: str, until: str, labels: Mapping[str, str]) -> str:
    """The thread's record of a silence: who made it, for how long, which one, and what it matches."""
    matching = ", ".join(f"{k}={v}" for k, v in sorted(labels.items()))
    return (f":no_bell: Silenced for {_duration_words(SILENCE_DURATION)} by <@{user}>, until {until} "
            f"(silence `{mrkdwn_escape(silence_id)}`, matching {mrkdwn_escape(matching)}).")
