"""The report's trace in words, the same in every renderer: for each cited line, what read it, the line of code
that emitted the fact, and each rule that used it (playbooks/report.py, `Report.trace`)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from bot.render.common import SEP
from bot.render.evidence import Quote, quote, sentence
from playbooks.report import Report, Traced, Use

# What each use weighs when rows are ordered: a line a supported status rests on first, context last.
_DECIDED_SUPPORTED, _TRIGGER, _DECIDED_OTHER, _CITED = range(4)


@dataclass(frozen=True)
class TraceRow:
    place: str  # artifact:lines
    fact: str
    value: str  # the value as JSON text (a string bare), for a reader to compare with the line
    said: str  # the fact said as a sentence, for renderers that keep fact names out of their prose (markdown)
    quote: Quote | None  # the cited line as the other renderers quote it; None when no text was kept
    read_by: str  # the parser or line signal, and the line of code that emitted the fact
    uses: tuple[str, ...]  # each rule that used the line, with where it is written


def _weight(use: Use) -> int:
    if use.expression == "trigger":
        return _TRIGGER
    if use.expression == "cite":
        return _CITED
    return _DECIDED_SUPPORTED if use.status in ("confirmed", "likely") else _DECIDED_OTHER


def use_text(use: Use) -> str:
    """One rule that used a line: "gpu-xid trigger at playbooks/gpu-xid.yaml:9", "gpu-xid > ecc confirm ->
    confirmed at playbooks/gpu-xid.yaml:55", or a hypothesis that only cites it, with its status."""
    if use.hypothesis is None:
        return f"{use.playbook} trigger at {use.rule}"
    who = f"{use.playbook} {SEP} {use.hypothesis}"
    if use.expression == "cite":
        return f"{who} cited ({use.status})"
    return f"{who} {use.expression} → {use.status} at {use.rule}"


def read_by(parser: str, origin: str) -> str:
    return f"{parser or '?'}, emitted at {origin}" if origin else parser or "?"


def _row(t: Traced) -> TraceRow:
    value = t.value if isinstance(t.value, str) else json.dumps(t.value)
    return TraceRow(t.place, t.fact, value, sentence(t.fact, t.value), quote(t) if t.excerpt else None,
                    read_by(t.parser, t.origin), tuple(use_text(u) for u in sorted(t.uses, key=_weight)))


def trace_rows(report: Report) -> list[TraceRow]:
    """Every cited line once: those a supported status rests on first, then triggers, then the rest."""
    ranked = sorted(report.trace, key=lambda t: min((_weight(u) for u in t.uses), default=_CITED))
    return [_row(t) for t in ranked]
