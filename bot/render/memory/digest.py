"""The weekly digest drawn three ways: Block Kit for the channel, plain text for `triagebot digest`, and a bar
chart of incidents by symptom (a picture reads faster than a table of counts), shown in the message under the
counts it draws (bot/delivery/inline_image.py), with its alt text."""

from __future__ import annotations

import io
from datetime import timedelta
from typing import Any

from slack_sdk.models.blocks import Block, ContextBlock, HeaderBlock, MarkdownTextObject, SectionBlock

from bot.memory.digest import Digest
from bot.render.chart import pyplot
from bot.render.slack import mrkdwn_escape
from bot.render.slack_triage import hypothesis_label

SECTION_LIMIT = 3000  # Slack's limit on a section's text


def _title(d: Digest) -> str:
    return "Weekly triage digest" if d.until - d.since == timedelta(days=7) else "Triage digest"


def _span(d: Digest) -> str:
    return f"{d.since:%a %d %b} to {d.until:%a %d %b %Y} (UTC)"


def _pretty(key: str) -> str:
    playbook, _, hypothesis = key.partition("/")
    return hypothesis_label(playbook, hypothesis) if hypothesis else key


def _lines(d: Digest) -> dict[str, list[str]]:
    """The digest's parts as plain lines, shared by Slack and the terminal."""
    acc = d.production
    parts: dict[str, list[str]] = {
        "Incidents": [f"{d.incidents} incident{'s' if d.incidents != 1 else ''}, {d.resolved} resolved."],
        "By symptom": [f"{n} x {s}" for s, n in d.by_symptom],
        "By verdict": [f"{n} x {_pretty(v)}" for v, n in d.by_verdict],
        "What keeps coming back": [f"{r.times} x {_pretty(r.lead)} on {r.where} (last {r.last:%a %d %b %H:%M})"
                                   for r in d.repeats] or ["Nothing came back twice with the same verdict."],
        "Accuracy from feedback": [f"{acc.right} of {acc.labelled} labelled verdicts right ({acc.percent} %)."
                                   if acc.labelled else "No verdict was labelled this week (Mark resolved and Wrong "
                                   "diagnosis under a report label it)."],
    }
    worst = [t for t in acc.by_hypothesis if t.right < t.labelled][:3]
    parts["Accuracy from feedback"] += [f"{t.right} of {t.labelled} right: {_pretty(t.key)}" for t in worst]
    parts["Accuracy from feedback"] += [f"said {_pretty(s)}, was {_pretty(w)} ({n}x)" for s, w, n in acc.confusions[:3]]
    return {k: v for k, v in parts.items() if v}


def digest_text(d: Digest) -> str:
    out = [f"{_title(d)}, {_span(d)}"]
    for title, lines in _lines(d).items():
        out += ["", f"{title}:"] + [f"  {line}" for line in lines]
    return "\n".join(out) + "\n"


def digest_blocks(d: Digest) -> tuple[str, list[dict[str, Any]]]:
    """The notification text and the blocks: one message, every section under Slack's 3,000 characters."""
    blocks: list[Block] = [HeaderBlock(text=_title(d)),
                           ContextBlock(elements=[MarkdownTextObject(text=_span(d))])]
    for title, lines in _lines(d).items():
        body = f"*{title}*\n" + "\n".join(f"• {mrkdwn_escape(line)}" for line in lines)
        blocks.append(SectionBlock(text=MarkdownTextObject(text=body[:SECTION_LIMIT])))
    for block in blocks:
        block.validate_json()
    text = f"{_title(d)}, {_span(d)}: {d.incidents} incidents, {d.resolved} resolved"
    return text, [b.to_dict() for b in blocks]


def chart_at(blocks: list[dict[str, Any]]) -> int:
    """Where the chart goes among the digest's blocks: under the counts by symptom it draws."""
    for i, block in enumerate(blocks):
        if str((block.get("text") or {}).get("text", "")).startswith("*By symptom*"):
            return i + 1
    return len(blocks)


def chart_alt(d: Digest) -> str:
    """The chart in words, for whoever cannot see it (a screen reader, a notification)."""
    counts = ", ".join(f"{s} {n}" for s, n in d.by_symptom)
    return f"Bar chart of incidents by symptom, {_span(d)}: {counts}."


def digest_chart(d: Digest) -> bytes | None:
    """PNG of incidents by symptom, resolved or not; None for a week without incidents."""
    if not d.by_symptom:
        return None
    plt = pyplot()
    names = [s for s, _ in d.by_symptom][::-1]
    counts = [n for _, n in d.by_symptom][::-1]
    fig, ax = plt.subplots(figsize=(7, 1.6 + 0.35 * len(names)), dpi=100)
    try:
        ax.barh(names, counts, color="#2e86c1")
        ax.set_xlabel("incidents", fontsize=8)
        ax.set_title(f"Incidents by symptom, {_span(d)}", fontsize=9)
        ax.xaxis.get_major_locator().set_params(integer=True)
        ax.grid(axis="x", alpha=0.3)
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata={"Title": "Incidents by symptom", "Software": "triagebot"})
        return buffer.getvalue()
    finally:
        plt.close(fig)
