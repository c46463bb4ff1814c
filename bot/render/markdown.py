"""The report as GitHub-flavoured markdown, for tickets and post-mortems."""

from __future__ import annotations

from bot.render.common import ANSWER_MARK, STATUS_MARK, cache_line, headline, others, scope_line, target_line
from playbooks.report import Report


def _esc(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    lead = report.leading()
    out = [f"# Triage: {target_line(report)}", "", f"**{_esc(headline(report))}**", ""]
    if report.symptoms:
        out += [f"Symptoms: {', '.join(report.symptoms)}", ""]
    if lead is not None:
        _, h = lead
        out += ["## Why", ""] + [f"- `{b}`" for b in h.because] + [""]
        out += ["## What would falsify it", "", h.falsified_by, ""]
        if h.next_checks:
            out += ["## Next checks", ""] + [f"- `{c}`" for c in h.next_checks] + [""]
        if h.mitigations:
            out += ["## Mitigations", ""] + [f"- {m}" for m in h.mitigations] + [""]
    out += ["## Scope", "", _esc(scope_line(report)), "", "| layer | question | answer | evidence |",
            "|---|---|---|---|"]
    for a in report.scope.answers:
        evidence = "; ".join(a.because) or ("needs " + ", ".join(a.needs) if a.needs else "")
        out.append(f"| {a.level} | {_esc(a.question)} | {ANSWER_MARK[a.answer]} | {_esc(evidence)} |")
    out.append("")
    rest = others(report, lead[1] if lead else None)
    if rest:
        out += ["## All hypotheses", "", "| playbook | hypothesis | status | score | evidence |",
                "|---|---|---|---|---|"]
        for playbook, h in rest:
            evidence = "; ".join(h.because) or ("needs " + ", ".join(h.needs) if h.needs else "")
            out.append(f"| {playbook} | {h.id} | {STATUS_MARK[h.status]} | {h.score:.2f} | {_esc(evidence)} |")
        out.append("")
    if report.missing:
        out += ["## Missing evidence", ""] + [f"- {m.source}: {m.reason}" for m in report.missing] + [""]
    out += [f"_{_esc(note)}_" for note in report.notes] + ([""] if report.notes else [])
    if (cached := cache_line(report)) is not None:
        out += [f"_{_esc(cached)}_", ""]
    if report.problems:
        out += ["## Could not read", ""] + [f"- {_esc(p)}" for p in report.problems[:20]] + [""]
    out += ["## Artifacts", ""] + [f"- `{a.id}` ({a.kind}) {a.command}".rstrip() for a in report.artifacts]
    return "\n".join(out) + "\n"
