"""The report as GitHub-flavoured markdown, for tickets and post-mortems: the same note as the terminal's."""

from __future__ import annotations

from bot.render.common import (
    ANSWER_MARK,
    SEP,
    STATUS_MARK,
    cache_line,
    folded_others,
    headline,
    missing_lines,
    narrowing_line,
    notes,
    open_checks,
    scope_line,
    supporting_lines,
)
from bot.render.evidence import plain, target_words, why
from bot.render.sources import markdown_link
from bot.render.trace import trace_rows
from playbooks.report import Report


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    """Inline code that survives backticks in the quoted line."""
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


_TRACE_ROWS = 60  # a ticket stays readable; the JSON report has every row


def _trace(report: Report) -> list[str]:
    """Each cited line: what it says, what read it and the code that emitted it, the rules that used it. Fact names
    stay out, as in the rest of the note: the rules' places lead to them, and the JSON report has them."""
    rows = trace_rows(report)
    if not rows:
        return []
    out = ["## How it was decided", "", "| line | what it says | read by | used by |", "|---|---|---|---|"]
    out += [f"| {_esc(r.place)} | {_esc(r.said)} | {_esc(r.read_by)} | {_esc('; '.join(r.uses))} |"
            for r in rows[:_TRACE_ROWS]]
    if len(rows) > _TRACE_ROWS:
        out.append(f"\n_… {len(rows) - _TRACE_ROWS} more cited lines in the JSON report (`--format json`, `trace`)_")
    return [*out, ""]


def render_markdown(report: Report) -> str:
    lead = report.leading()
    out = [f"# Triage of {target_words(report)}", ""]
    if report.symptoms:
        out += [f"Symptoms: {', '.join(report.symptoms)}", ""]
    if lead is not None:
        finding, h = lead
        title = f"{STATUS_MARK[h.status]}: {finding.playbook} {SEP} {h.id} ({h.score:.2f})"
        out += [f"**{title}**", "", _esc(h.claim), ""]
        if supporting := supporting_lines(report):
            out += [f"- {_esc(line)}" for line in supporting] + [""]
        out += ["## Why", ""]
        said_all = why(h, report.facts)
        for said in said_all:
            out.append(f"- {_esc(said.sentence)}")
            out += [f"  > {_code(q.line)} ({q.place})" for q in said.quotes]
        if not said_all:
            out.append("_No direct evidence yet._")
        out.append("")
        out += ["## What would falsify it", "", h.falsified_by, ""]
        if h.next_checks:
            out += ["## Next checks", "", "```", *h.next_checks, "```", ""]
        if h.mitigations:
            out += ["## Mitigations", ""] + [f"- {m}" for m in h.mitigations] + [""]
        if h.source:
            out += ["## Sources", ""] + [f"- {markdown_link(ref)}" for ref in h.source] + [""]
    else:
        out += [f"**{_esc(headline(report))}**", ""]
        if checks := open_checks(report):
            out += ["## Next checks", "", "```", *checks, "```", ""]
    out += ["## Scope", "", _esc(scope_line(report)), "", "| layer | question | answer | evidence |",
            "|---|---|---|---|"]
    for a in report.scope.answers:
        evidence = "; ".join(plain(b, report.facts) for b in a.because) or (
            "needs " + ", ".join(a.needs) if a.needs else "")
        out.append(f"| {a.level} | {_esc(a.question)} | {ANSWER_MARK[a.answer]} | {_esc(evidence)} |")
    out.append("")
    if (narrow := narrowing_line(report)) is not None and report.narrowing is not None:
        out += ["## Narrowing", "", _esc(narrow), "", "```", report.narrowing.check, "```", ""]
    supported, ruled_out, unknown = folded_others(report, lead[1] if lead else None)
    if supported or ruled_out or unknown:
        out += ["## Other hypotheses", ""]
        out += [f"- {STATUS_MARK[h.status]}: {p} {SEP} {h.id} ({h.score:.2f}): {_esc(h.claim)}" for p, h in supported]
        out += [f"- Ruled out: {', '.join(ruled_out)}."] if ruled_out else []
        out += [f"- {unknown}"] if unknown else []
        out.append("")
    if report.missing:
        out += ["## Missing evidence", "", *[f"- {line}" for line in missing_lines(report)], ""]
    out += [f"_{_esc(note)}_" for note in notes(report)] + ([""] if notes(report) else [])
    if (cached := cache_line(report)) is not None:
        out += [f"_{_esc(cached)}_", ""]
    if report.problems:
        out += ["## Could not read", ""] + [f"- {_esc(p)}" for p in report.problems[:20]] + [""]
    out += _trace(report)
    out += ["## Artifacts", ""] + [f"- `{a.id}` ({a.kind}) {a.command}".rstrip() for a in report.artifacts]
    return "\n".join(out) + "\n"
