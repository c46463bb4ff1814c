"""The report for a terminal, with rich: the leader first, then everything else in a table."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.render.common import STATUS_MARK, cache_line, headline, others, scope_answered, scope_line, target_line
from playbooks.report import Report

_STYLE = {"confirmed": "bold green", "likely": "yellow", "unknown": "dim", "ruled-out": "red"}


def _trace(report: Report) -> Text:
    """How each status was decided: the rule that held (file:line and its CEL) and what read each fact."""
    out = Text("How it was decided (--explain)\n", style="bold")
    for finding in report.findings:
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
            for e in h.evidence:
                where = f"{e.artifact}:{e.lines}" if e.lines else e.artifact
                out.append(f"  {e.fact} = {e.value!r}  read by {e.parser or '?'} from {where} ({e.kind or '?'})\n")
    return out


def _scope(report: Report) -> Text:
    """The layer-narrowing line, and under it the evidence behind each answered question."""
    out = Text(scope_line(report), style="bold" if report.scope.level else "dim")
    for a in scope_answered(report):
        out.append(f"\n  {a.level} {a.answer}: ", style="bold")
        out.append("; ".join(a.because))
    return out


def build(report: Report, explain: bool = False) -> Group:
    lead = report.leading()
    parts: list[Table | Panel | Text] = [Text(f"Triage: {target_line(report)}", style="bold")]
    if report.symptoms:
        parts.append(Text(f"Symptoms: {', '.join(report.symptoms)}"))
    parts.append(_scope(report))
    body = Text()
    body.append(headline(report) + "\n", style=_STYLE[lead[1].status] if lead else "bold")
    if lead is not None:
        _, h = lead
        body.append("\nWhy:\n", style="bold")
        for b in h.because or ["(no direct evidence yet)"]:
            body.append(f"  • {b}\n")
        body.append("\nWould be falsified by:\n", style="bold")
        body.append(f"  {h.falsified_by}\n")
        if h.next_checks:
            body.append("\nNext checks:\n", style="bold")
            for c in h.next_checks:
                body.append(f"  > {c}\n")
        if h.mitigations:
            body.append("\nMitigations:\n", style="bold")
            for m in h.mitigations:
                body.append(f"  - {m}\n")
    parts.append(Panel(body, title="Leading hypothesis", expand=True))
    rest = others(report, lead[1] if lead else None)
    if rest:
        table = Table(title="Other hypotheses", expand=True)
        for col in ("playbook", "hypothesis", "status", "score", "evidence / needs"):
            table.add_column(col, overflow="fold")
        for playbook, h in rest:
            evidence = "; ".join(h.because) or ("needs " + ", ".join(h.needs) if h.needs else "")
            # Text, not str: evidence such as "[79, 45]" must not be read as rich markup.
            table.add_row(Text(playbook), Text(h.id), Text(STATUS_MARK[h.status], style=_STYLE[h.status]),
                          f"{h.score:.2f}", Text(evidence))
        parts.append(table)
    for note in report.notes:
        parts.append(Text(note, style="yellow"))
    if (cached := cache_line(report)) is not None:
        parts.append(Text(cached, style="dim"))
    if report.missing:
        parts.append(Text("Missing evidence:\n" + "\n".join(f"  - {m.source}: {m.reason}" for m in report.missing),
                          style="yellow"))
    if explain:
        parts.append(_trace(report))
    if report.problems:
        shown = report.problems[:10]
        more = f"\n  … {len(report.problems) - len(shown)} more" if len(report.problems) > len(shown) else ""
        parts.append(Text("Could not read:\n" + "\n".join(f"  - {p}" for p in shown) + more, style="dim"))
    return Group(*parts)


def render_terminal(report: Report, console: Console | None = None, explain: bool = False) -> None:
    (console or Console()).print(build(report, explain))


def render_text(report: Report, width: int = 100, explain: bool = False) -> str:
    """Plain text (no colour codes), for tests and pipes."""
    console = Console(width=width, record=True, color_system=None, force_terminal=False)
    with console.capture() as capture:
        console.print(build(report, explain))
    return capture.get()
