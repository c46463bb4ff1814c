"""The report for a terminal, with rich: a note a person reads top to bottom, readable at 80 columns.

No panels or tables: a box border wrapped through a command breaks copy and paste, and a table of every
hypothesis buries the diagnosis. Commands are printed one per line, never wrapped, so they copy whole; prose and
quoted lines wrap at spaces only (bot/render/wrap.py), so a path, an id or a quoted value is never split.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from bot.render.common import (
    SEP,
    STATUS_MARK,
    cache_line,
    folded_others,
    headline,
    missing_lines,
    narrowing_line,
    notes,
    open_checks,
    scope_evidence,
    scope_line,
    supporting_lines,
)
from bot.render.evidence import Quote, target_words, why
from bot.render.sources import with_link
from bot.render.wrap import wrap_text
from playbooks.report import Evidence, Report, expressions

_STYLE = {"confirmed": "bold green", "likely": "yellow", "unknown": "dim", "ruled-out": "red"}

# A line of the report and its indent; prose wraps inside that indent, a command (indent None) never wraps.
Line = tuple[Text, int | None]


def _trace(report: Report) -> Text:
    """How each status was decided: the trigger and the rule that held (file:line and its CEL), which of its
    expressions used each fact, what read the fact and the line of code that emitted it."""
    out = Text("How it was decided (--explain)\n", style="bold")
    for finding in report.findings:
        if finding.trigger is not None:
            out.append(f"\n{finding.playbook}", style="bold")
            out.append(f"  triggered at {finding.trigger.file}:{finding.trigger.line}\n    {finding.trigger.cel}\n")
            _cited(out, finding.trigger_evidence, "trigger")
        for h in finding.hypotheses:
            out.append(f"\n{finding.playbook}/{h.id}", style="bold")
            out.append(f"  {h.status}\n", style=_STYLE[h.status])
            if h.rule is not None:
                out.append(f"  decided by {h.decided_by} at {h.rule.file}:{h.rule.line}\n    {h.rule.cel}\n")
            else:
                out.append("  no rule held" + (f"; needs {', '.join(h.needs)}" if h.needs else "") + "\n")
            for note in (h.note, f"joined the {h.merged_into} finding" if h.merged_into else None):
                if note:
                    out.append(f"  ({note})\n", style="dim")
            used = expressions(h)
            for e in h.evidence:
                _cited(out, [e], used.get(e.fact, "cite"))
    return out


def _cited(out: Text, evidence: list[Evidence], expression: str) -> None:
    for e in evidence:
        emitted = f", emitted at {e.origin}" if e.origin else ""
        out.append(f"  {e.fact} = {e.value!r}  read by {e.parser or '?'} from {e.place} ({e.kind or '?'}){emitted}; "
                   f"used by {expression}\n")


def _prose(text: str, style: str = "") -> Line:
    body = text.lstrip(" ")
    return Text(body, style=style), len(text) - len(body)


def _quote_text(quote: Quote) -> Text:
    """A quoted line in full (wrapped, never cut), the words the fact was read from in bold."""
    body = Text(quote.line, style="dim")
    for start, end in quote.spans:
        body.stylize("bold", start, end)
    return Text.assemble(("“", "dim"), body, ("”", "dim"), (f"  ({quote.place})", "dim"))


def _section(title: str) -> list[Line]:
    return [_prose(""), _prose(title, "bold")]


def lines(report: Report, explain: bool = False) -> list[Line]:
    lead = report.leading()
    out: list[Line] = [_prose(f"Triage of {target_words(report)}", "bold")]
    if report.symptoms:
        out.append(_prose(f"Symptoms: {', '.join(report.symptoms)}"))
    # The layer the evidence confines the failure to, and the evidence behind each answered question.
    out.append(_prose(scope_line(report), "bold" if report.scope.level else "dim"))
    out += [_prose(f"  {a.level} {a.answer}: {'; '.join(said)}") for a, said in scope_evidence(report)]
    if (narrow := narrowing_line(report)) is not None and report.narrowing is not None:
        out += [_prose(narrow, "bold"), (Text(f"  {report.narrowing.check}", style="cyan"), None)]
    out.append(_prose(""))
    if lead is not None:
        finding, h = lead
        title = f"{STATUS_MARK[h.status]}: {finding.playbook} {SEP} {h.id} ({h.score:.2f})"
        out.append(_prose(title, _STYLE[h.status]))
        out.append(_prose(h.claim))
        out += [_prose(f"  {line}", "green") for line in supporting_lines(report)]
        out += _section("Why")
        said_all = why(h, report.facts)
        for said in said_all:
            out.append(_prose(f"  • {said.sentence}"))
            out += [(_quote_text(quote), 6) for quote in said.quotes]
        if not said_all:
            out.append(_prose("  No direct evidence yet."))
        out += _section("Would be falsified by")
        out.append(_prose(f"  {h.falsified_by}"))
        if h.next_checks:
            out += _section("Next checks")
            out += [(Text(f"  {check}", style="cyan"), None) for check in h.next_checks]
        if h.mitigations:
            out += _section("Mitigations")
            out += [_prose(f"  - {m}") for m in h.mitigations]
        if h.source:
            out += _section("Sources")
            out += [_prose(f"  - {with_link(ref)}", "dim") for ref in h.source]
    else:
        out.append(_prose(headline(report), "bold"))
        if checks := open_checks(report):
            out += _section("Next checks")
            out += [(Text(f"  {check}", style="cyan"), None) for check in checks]
    supported, ruled_out, unknown = folded_others(report, lead[1] if lead else None)
    if supported or ruled_out or unknown:
        out += _section("Other hypotheses")
        for playbook, other in supported:
            out.append(_prose(f"  {STATUS_MARK[other.status]}: {playbook} {SEP} {other.id} ({other.score:.2f}): "
                              f"{other.claim}", _STYLE[other.status]))
        if ruled_out:
            out.append(_prose(f"  Ruled out: {', '.join(ruled_out)}.", _STYLE["ruled-out"]))
        if unknown:
            out.append(_prose(f"  {unknown}", _STYLE["unknown"]))
    for note in notes(report):
        out += [_prose(""), _prose(note, "yellow")]
    if (cached := cache_line(report)) is not None:
        out += [_prose(""), _prose(cached, "dim")]
    if report.missing:
        out += _section("Missing evidence")
        out += [_prose(f"  - {line}", "yellow") for line in missing_lines(report)]
    if explain:
        out += [_prose(""), (_trace(report), None)]  # each line whole: a CEL rule is copied as it is
    if report.problems:
        shown = report.problems[:10]
        out += _section("Could not read")
        out += [_prose(f"  - {p}", "dim") for p in shown]
        if len(report.problems) > len(shown):
            out.append(_prose(f"  … {len(report.problems) - len(shown)} more", "dim"))
    return out


def _print(console: Console, report: Report, explain: bool) -> None:
    for text, indent in lines(report, explain):
        if not text.plain:
            console.print()
        elif indent is None:
            # soft_wrap: the line goes out whole, for the terminal to fold; a copied command stays one line.
            console.print(text, soft_wrap=True, highlight=False)
        else:
            # Wrapped here, at spaces only: rich would fold a path or an id mid-token to fit the width.
            # A bullet's continuation lines hang under its text, not under the bullet.
            hang = indent + 2 if text.plain.startswith(("• ", "- ", "↳ ")) else indent
            for number, line in enumerate(wrap_text(text, console.width - hang)):
                console.print(Text(" " * (hang if number else indent)) + line, soft_wrap=True, highlight=False)


def render_terminal(report: Report, console: Console | None = None, explain: bool = False) -> None:
    _print(console or Console(), report, explain)


def render_text(report: Report, width: int = 100, explain: bool = False) -> str:
    """Plain text (no colour codes), for tests and pipes."""
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    with console.capture() as capture:
        _print(console, report, explain)
    # rich pads wrapped lines to the width; a pipe or a test wants the text itself.
    return "\n".join(line.rstrip() for line in capture.get().splitlines()) + "\n"
