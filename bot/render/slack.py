"""The report as Slack Block Kit, built with slack_sdk's models so Slack's limits are checked here.

Wording comes from Jinja templates in bot/templates/slack/; an operator can override any of them by putting a
file of the same name in a folder of their own (`templates_dir`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from jinja2 import ChoiceLoader, FileSystemLoader, PackageLoader, StrictUndefined
from jinja2.sandbox import SandboxedEnvironment
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    DividerBlock,
    HeaderBlock,
    MarkdownTextObject,
    SectionBlock,
)

from bot.render.common import (
    cache_line,
    cut_words,
    folded_others,
    headline,
    missing_lines,
    narrowing_line,
    open_checks,
    scope_answered,
    scope_evidence,
    scope_line,
    supporting_lines,
)
from bot.render.evidence import target_words, why
from playbooks.report import Report

STATUS_EMOJI = {"confirmed": ":large_green_circle:", "likely": ":large_yellow_circle:",
                "unknown": ":white_circle:", "ruled-out": ":red_circle:"}
TEXT_LIMIT = 3000  # per text object
HEADER_LIMIT = 150
# Actions on a report; the value carries the triage run id so a click finds its report.
ACTIONS = (("triage_show_evidence", "Show evidence", None), ("triage_rerun", "Re-run", None),
           ("triage_resolve", "Mark resolved", "primary"), ("triage_wrong", "Wrong diagnosis", "danger"),
           ("triage_save_drill", "Save as drill", None))


def mrkdwn_escape(text: object) -> str:
    """Slack's three control characters; everything else is literal."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def cut_within(text: str, limit: int, mark: str) -> str:
    """`text` within `limit` characters, cut with `mark` if needed: never after half an escape (&amp;) or inside an
    open code fence."""
    if len(text) <= limit:
        return text
    cut = text[: limit - len(mark)]
    amp = cut.rfind("&")
    if amp != -1 and ";" not in cut[amp:]:
        cut = cut[:amp]
    if cut.count("```") % 2 == 1:
        cut = cut[: cut.rfind("```")]
    return cut.rstrip() + mark


def _environment(templates_dir: Path | None) -> SandboxedEnvironment:
    loaders: list[Any] = [PackageLoader("bot", "templates/slack")]
    if templates_dir is not None:
        loaders.insert(0, FileSystemLoader(str(templates_dir)))
    env = SandboxedEnvironment(loader=ChoiceLoader(loaders), undefined=StrictUndefined, autoescape=False,
                               trim_blocks=False, lstrip_blocks=False)
    env.filters["mrkdwn"] = mrkdwn_escape
    return env


def _clip(text: str, limit: int = TEXT_LIMIT) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 40]
    # At the last line break (else the last space) before the limit: a command, a path or a quoted value is
    # either shown whole or not at all, never cut in the middle.
    at = cut.rfind("\n")
    cut = cut[:at] if at > 0 else cut[: max(cut.rfind(" "), 1)]
    cut = cut.rstrip()
    # Keep a code fence balanced, or the rest of the message renders as code.
    if cut.count("```") % 2 == 1:
        cut += "\n```"
    return cut + "\n_…truncated; see the evidence file_"


class SlackRenderer:
    def __init__(self, templates_dir: Path | None = None) -> None:
        self.env = _environment(templates_dir)

    def _text(self, name: str, **variables: Any) -> str:
        return _clip(self.env.get_template(f"{name}.md.j2").render(status_emoji=STATUS_EMOJI, **variables))

    def blocks(self, report: Report, run_id: str = "") -> list[Block]:
        """The thread reply for one report: leader, why, falsifier, checks, mitigations, the rest, buttons."""
        return [*self.body_blocks(report), actions_block(run_id)]

    def body_blocks(self, report: Report) -> list[Block]:
        """The report's blocks without the buttons, which need the stored run's id."""
        lead = report.leading()
        finding, hypothesis = lead if lead else (None, None)
        title = f"Triage of {target_words(report)}"
        blocks: list[Block] = [HeaderBlock(text=cut_words(title, HEADER_LIMIT))]
        blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text(
            "leader", lead=hypothesis, finding=finding, headline=headline(report),
            supporting=supporting_lines(report)))))
        if hypothesis is not None:
            blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text(
                "why", lead=hypothesis, why=why(hypothesis, report.facts)))))
            blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text("falsify", lead=hypothesis))))
            if hypothesis.next_checks:
                blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text("checks", lead=hypothesis))))
            if hypothesis.mitigations:
                blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text("mitigations", lead=hypothesis))))
        elif checks := open_checks(report):  # the headline promises the checks that would settle the open ones
            blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text("checks", lead=None, checks=checks))))
        if scope_answered(report):  # a line that says nothing is not worth a block of the 50
            blocks.append(ContextBlock(elements=[MarkdownTextObject(text=self._text(
                "scope", line=scope_line(report), answered=scope_evidence(report)))]))
        if (narrow := narrowing_line(report)) is not None and report.narrowing is not None:
            blocks.append(SectionBlock(text=MarkdownTextObject(text=self._text(
                "narrowing", line=narrow, check=report.narrowing.check))))
        supported, ruled_out, unknown = folded_others(report, hypothesis)
        if supported or ruled_out or unknown:
            blocks.append(DividerBlock())
            blocks.append(ContextBlock(elements=[MarkdownTextObject(text=self._text(
                "others", supported=supported, ruled_out=ruled_out, unknown=unknown))]))
        if report.missing:
            blocks.append(ContextBlock(elements=[MarkdownTextObject(text=self._text(
                "missing", missing=report.missing, lines=missing_lines(report)))]))
        if (cached := cache_line(report)) is not None:
            blocks.append(ContextBlock(elements=[MarkdownTextObject(text=_clip(cached))]))
        for block in blocks:
            block.validate_json()
        return blocks

    def fallback_text(self, report: Report) -> str:
        """The notification text: what a phone lock screen shows."""
        return cut_words(headline(report), 300)


def actions_block(run_id: str = "") -> ActionsBlock:
    """The feedback buttons under a report; their value is the run they judge."""
    return ActionsBlock(block_id="triage_actions", elements=[
        ButtonElement(text=label, action_id=action_id, value=run_id or "none", style=style)
        for action_id, label, style in ACTIONS])


@functools.lru_cache(maxsize=8)
def renderer(templates_dir: Path | None = None) -> SlackRenderer:
    """One renderer per templates folder, kept: a new one compiles every template again (~40 ms of CPU per report,
    spent holding the GIL of a process that also runs triages or acks). Jinja still reloads a changed file."""
    return SlackRenderer(templates_dir)


def blocks_json(report: Report, run_id: str = "", templates_dir: Path | None = None) -> list[dict[str, Any]]:
    return [block.to_dict() for block in renderer(templates_dir).blocks(report, run_id)]
