"""Block Kit for /triage's own messages: the evidence listing, the wrong-diagnosis form, the App Home.

Pure: reports and texts in, Block Kit dicts out. The handlers (bot/slack/) register the ids defined here.
"""

from __future__ import annotations

from typing import Any

from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    OptionGroup,
    PlainTextInputElement,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View

from bot.render.common import cut_words
from bot.render.slack import mrkdwn_escape
from bot.render.trace import trace_rows
from playbooks.loader import CompiledPlaybook
from playbooks.report import Report

WRONG_CALLBACK = "triage_wrong_submit"
RESOLVE_CALLBACK = "triage_resolve_submit"  # Mark resolved asks the same question, the verdict's answer chosen
WRONG_BLOCK, WRONG_SELECT = "right_hypothesis", "hypothesis"
NOTE_BLOCK, NOTE_INPUT = "note", "note"
OTHER_VALUE = "other"  # "none of these": the note says what it was
POSTMORTEM_ACTION = "incident_postmortem"  # the button under a resolved incident; its value is the incident's id
POSTMORTEM_BLOCK = "incident_memory"
# Slack limits a select to 100 options per group and 75 characters per option text.
_OPTION_TEXT, _GROUP_OPTIONS = 75, 100
# Evidence listings stay well under Slack's ~13k blocks payload: three sections of this size.
_SECTION_CHARS, _MAX_SECTIONS = 2800, 3


def hypothesis_label(playbook: str, hypothesis: str) -> str:
    """"playbook > hypothesis", with the angle quote the report templates use."""
    return f"{playbook} \N{SINGLE RIGHT-POINTING ANGLE QUOTATION MARK} {hypothesis}"


_USES_SHOWN = 3  # rules named per line in Slack; `--format json` has them all


def evidence_listing(run_id: int, report: Report) -> tuple[str, list[dict[str, Any]]]:
    """Every cited line once (those a supported status rests on first): the fact, the line, what read it and the
    code that emitted it, and the rules that used it; as a few mrkdwn sections."""
    lines: list[str] = []
    for row in trace_rows(report):
        # The line whole, or around the words the fact was read from with the parts left out marked; the value
        # shortened at a word: never cut mid-token (docs/slack.md).
        excerpt = f" _{mrkdwn_escape(row.quote.line)}_" if row.quote else ""
        value = mrkdwn_escape(cut_words(row.value, 120))
        uses = "; ".join(row.uses[:_USES_SHOWN]) + (f"; +{len(row.uses) - _USES_SHOWN} more"
                                                   if len(row.uses) > _USES_SHOWN else "")
        lines.append(f"• `{row.fact}` = {value} ({mrkdwn_escape(row.place)}){excerpt}\n"
                     f"    read by {mrkdwn_escape(row.read_by)}; used by {mrkdwn_escape(uses)}")
    if report.missing:
        lines.append("*Missing:* " + "; ".join(mrkdwn_escape(f"{m.source} ({m.reason})") for m in report.missing))
    if not lines:
        lines.append("No hypothesis cites any evidence.")
    header = f"*Evidence behind triage run {run_id}* (the raw files are in evidence.txt in this thread)"
    sections: list[str] = [header]
    left = 0
    for line in lines:
        if len(sections[-1]) + len(line) + 1 <= _SECTION_CHARS:
            sections[-1] += "\n" + line
        elif len(sections) < _MAX_SECTIONS:
            sections.append(line[:_SECTION_CHARS])
        else:
            left += 1
    blocks: list[Block] = [SectionBlock(text=MarkdownTextObject(text=s)) for s in sections]
    if left:
        blocks.append(ContextBlock(elements=[MarkdownTextObject(
            text=f"…{left} more lines cut; every artifact is in evidence.txt")]))
    return f"Evidence behind triage run {run_id}", [b.to_dict() for b in blocks]


def with_note(blocks: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """A message's blocks with a note under them: with blocks, the text is only the notification fallback."""
    return [*blocks, ContextBlock(elements=[MarkdownTextObject(text=note)]).to_dict()]


def postmortem_block(incident_id: int) -> ActionsBlock:
    """The button that writes the incident's postmortem draft (bot/slack/memory.py)."""
    return ActionsBlock(block_id=POSTMORTEM_BLOCK, elements=[
        ButtonElement(text="Write postmortem", action_id=POSTMORTEM_ACTION, value=str(incident_id))])


def postmortem_actions(incident_id: int) -> dict[str, Any]:
    return postmortem_block(incident_id).to_dict()


def resolved_blocks(text: str, note: str, incident_id: int,
                    blocks: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """A message once its incident is resolved: its blocks (or its text as one) with the note, if any, and the
    postmortem button under them."""
    # One button, last: a root Alertmanager resolved has it already, and Slack refuses a repeated block_id.
    kept = [b for b in blocks or [] if b.get("block_id") != POSTMORTEM_BLOCK]
    shown = kept or [SectionBlock(text=MarkdownTextObject(text=cut_words(text, 3000))).to_dict()]
    return [*(with_note(shown, note) if note else shown), postmortem_actions(incident_id)]


def _option(playbook: str, hypothesis: str, status: str | None = None) -> Option:
    label = hypothesis_label(playbook, hypothesis) + (f" ({status})" if status else "")
    return Option(value=f"{playbook}:{hypothesis}", text=label[:_OPTION_TEXT])


def wrong_modal(report: Report | None, private_metadata: str, playbooks: list[CompiledPlaybook]) -> dict[str, Any]:
    return cause_modal(report, private_metadata, playbooks, resolving=False)


def cause_modal(report: Report | None, private_metadata: str, playbooks: list[CompiledPlaybook], *,
                resolving: bool) -> dict[str, Any]:
    """The one question behind Wrong diagnosis and Mark resolved: what was the cause? This report's hypotheses
    first, then every other hypothesis of every playbook, then "none of these". Resolving, the verdict is chosen
    already: confirming it is one click, and the label says the verdict was right."""
    seen: set[str] = set()
    groups: list[OptionGroup] = []
    if report is not None:
        lead = report.leading()
        # The report's leader first (what on-call is saying was wrong), then the rest by score.
        ranked = sorted(((f.playbook, h) for f in report.findings for h in f.hypotheses),
                        key=lambda ph: (lead is None or ph[1] is not lead[1], -ph[1].score))
        mine = [_option(p, h.id, h.status) for p, h in ranked]
        seen.update(f"{p}:{h.id}" for p, h in ranked)
        if mine:
            groups.append(OptionGroup(label="In this report", options=mine[:_GROUP_OPTIONS]))
    for playbook in playbooks:
        pid = playbook.spec.id
        rest = [_option(pid, h.id) for h, _ in playbook.spec.walk() if f"{pid}:{h.id}" not in seen]
        if rest:
            groups.append(OptionGroup(label=f"Playbook {pid}"[:_OPTION_TEXT], options=rest[:_GROUP_OPTIONS]))
    groups.append(OptionGroup(label="Other", options=[Option(value=OTHER_VALUE,
                                                             text="None of these (say what in the note)")]))
    lead = report.leading() if report is not None else None
    chosen = _option(lead[0].playbook, lead[1].id, lead[1].status) if resolving and lead is not None else None
    intro = ("What was the cause? The verdict is chosen; change it if it was something else. Your answer is "
             "stored as feedback with your name (production accuracy counts it) before the incident is resolved."
             if resolving else
             "Which hypothesis was right? It is stored as feedback, and becomes the ground truth if this run is "
             "saved as a drill.")
    view = View(
        type="modal", callback_id=RESOLVE_CALLBACK if resolving else WRONG_CALLBACK,
        title="Mark resolved" if resolving else "Wrong diagnosis", submit="Resolve" if resolving else "Save",
        close="Cancel", private_metadata=private_metadata,
        blocks=[
            SectionBlock(text=MarkdownTextObject(text=intro)),
            InputBlock(block_id=WRONG_BLOCK, label="The cause" if resolving else "The right hypothesis",
                       element=StaticSelectElement(action_id=WRONG_SELECT, placeholder="Choose a hypothesis",
                                                   option_groups=groups, initial_option=chosen)),
            InputBlock(block_id=NOTE_BLOCK, label="Note", optional=True,
                       element=PlainTextInputElement(action_id=NOTE_INPUT, multiline=True, max_length=2000,
                                                     placeholder="What showed it? (optional)")),
        ])
    view.validate_json()
    return view.to_dict()


def home_blocks(entries: list[str], empty: str, limit: int) -> dict[str, Any]:
    """The App Home: one section per incident (already worded), newest first."""
    blocks: list[Block] = [HeaderBlock(text="Recent incidents")]
    if not entries:
        blocks.append(SectionBlock(text=MarkdownTextObject(text=empty)))
    blocks += [SectionBlock(text=MarkdownTextObject(text=text[:3000])) for text in entries]
    blocks.append(ContextBlock(elements=[MarkdownTextObject(
        text=f"The {limit} most recently updated incidents. `/triage help` in a channel explains the commands.")]))
    view = View(type="home", blocks=blocks)
    view.validate_json()
    return view.to_dict()
