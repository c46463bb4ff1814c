"""Block Kit for what the optional model writes: report and debrief narratives, and /ask answers.

Generated text is untrusted like anything a user typed: it is escaped (no mentions, no links) and always carries a
context block saying who wrote it. Wording comes from templates in bot/templates/slack/, overridable through
`templates_dir` like the report's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2.sandbox import SandboxedEnvironment
from slack_sdk.models.blocks import Block, ContextBlock, DividerBlock, MarkdownTextObject, SectionBlock

from bot.assist.narrate import Narrative

if TYPE_CHECKING:  # only named in annotations: search pulls in langchain, which the bot's start should not pay
    from bot.assist.ask import Answer
    from bot.assist.corpus import Hit
from bot.render.ask import EXCERPT_CHARS, excerpt
from bot.render.slack import mrkdwn_escape, renderer
from collectors.redact import redact_text

TEXT_LIMIT = 3000  # per text object
FALLBACK_LIMIT = 300
_BOLD = re.compile(r"\*\*(.+?)\*\*")  # models write Markdown bold; Slack's mrkdwn bold is one asterisk


def environment(templates_dir: Path | None) -> SandboxedEnvironment:
    """The report's template environment (the operator's folder first, then bot/templates/slack), kept."""
    return renderer(templates_dir).env


def render(templates_dir: Path | None, name: str, **variables: Any) -> str:
    return fit(environment(templates_dir).get_template(f"{name}.md.j2").render(**variables))


def fit(text: str, limit: int = TEXT_LIMIT) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 2].rstrip()
    if cut.count("```") % 2 == 1:  # keep a code fence balanced, or the rest renders as code
        cut = cut[: limit - 6].rstrip() + "\n```"
    return cut + " …"


def slack_markdown(text: str) -> str:
    """Model text as Slack mrkdwn: `**bold**` becomes `*bold*`. Escaping is the template's `mrkdwn` filter."""
    return _BOLD.sub(r"*\1*", text)


def narrative_blocks(narrative: Narrative, templates_dir: Path | None = None,
                     template: str = "narrative") -> list[Block]:
    """The narrative as a section, and who wrote it (the model, or the rules and why) as a context block."""
    # The fallback (and so the label) can carry a provider's error message: redacted like anything leaving.
    values = {"text": slack_markdown(narrative.text), "generated": narrative.generated,
              "model": narrative.model or "", "fallback": redact_text(narrative.fallback or ""),
              "label": redact_text(narrative.label)}
    blocks: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=render(templates_dir, template, **values))),
        ContextBlock(elements=[MarkdownTextObject(text=render(templates_dir, "narrative_label", **values))]),
    ]
    for block in blocks:
        block.validate_json()
    return blocks


def narrative_payload(narrative: Narrative, templates_dir: Path | None = None,
                      template: str = "narrative") -> dict[str, Any]:
    """chat.postMessage fields: the blocks, and the notification text a lock screen shows."""
    blocks = narrative_blocks(narrative, templates_dir, template)
    first = narrative.text.strip().splitlines()[0] if narrative.text.strip() else ""
    return {"text": mrkdwn_escape(first[:FALLBACK_LIMIT]), "blocks": [b.to_dict() for b in blocks]}


# --------------------------------------------------------------------------------------------------------------
# /ask
# --------------------------------------------------------------------------------------------------------------

BLOCKS_JSON_BUDGET = 11_000  # Slack refuses a message whose blocks pass ~13k characters of JSON


def answer_blocks(answer: Answer, templates_dir: Path | None = None) -> list[Block]:
    """The answer (or why there is none) with who wrote it, then each passage: title, where to read it, an
    excerpt and its score. Passages are numbered as the generated answer cites them ([1], [2], ...)."""
    values = {"question": answer.question, "text": slack_markdown(answer.text or ""), "generated": answer.generated,
              "model": answer.model or "", "fallback": redact_text(answer.fallback or ""), "matched": answer.matched}
    top: list[Block] = [
        SectionBlock(text=MarkdownTextObject(text=render(templates_dir, "ask_answer", **values))),
        ContextBlock(elements=[MarkdownTextObject(text=render(templates_dir, "ask_label", **values))]),
    ]
    notes = [ContextBlock(elements=[MarkdownTextObject(text=fit(f"Note: {mrkdwn_escape(n)}"))])
             for n in answer.notes[:3]]

    def passage(n: int, hit: Hit, chars: int) -> Block:
        return SectionBlock(text=MarkdownTextObject(text=render(
            templates_dir, "ask_passage", n=n, title=hit.passage.title, kind=hit.passage.kind, cite=hit.passage.cite,
            excerpt=excerpt(hit.passage.text, chars), score=hit.score)))

    def size(blocks: list[Block]) -> int:
        return len(json.dumps([b.to_dict() for b in blocks]))

    # Excerpts shrink until every passage fits in one message; past that, the last passages are left out.
    passages: list[Block] = []
    for chars in (EXCERPT_CHARS, 160, 80):
        passages = [passage(n, hit, chars) for n, hit in enumerate(answer.hits, start=1)]
        if size([*top, *passages, *notes]) <= BLOCKS_JSON_BUDGET:
            break
    while len(passages) > 1 and size([*top, *passages, *notes]) > BLOCKS_JSON_BUDGET:
        passages.pop()
    if len(passages) < len(answer.hits):
        notes.insert(0, ContextBlock(elements=[MarkdownTextObject(
            text=f"Passages [{len(passages) + 1}]-[{len(answer.hits)}] are left out: Slack limits a message's size.")]))
    blocks = [*top, *([DividerBlock()] if passages else []), *passages, *notes]
    for block in blocks:
        block.validate_json()
    return blocks


def answer_payload(answer: Answer, templates_dir: Path | None = None) -> dict[str, Any]:
    """response_url fields: the blocks, and the notification text."""
    return {"text": mrkdwn_escape(f"Answer to: {answer.question}"[:FALLBACK_LIMIT]),
            "blocks": [b.to_dict() for b in answer_blocks(answer, templates_dir)]}
