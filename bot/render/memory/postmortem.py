"""The postmortem draft as markdown: the file posted in the incident's thread and what `triagebot postmortem`
prints. Everything written passes the redaction door (collectors.redact) on the way out: notes and quoted lines
were redacted when stored, and a second pass costs little against a secret in a shared document."""

from __future__ import annotations

from datetime import datetime

from bot.memory.postmortem import Postmortem
from bot.render.common import SEP
from collectors.redact import redact_text


def _when(at: datetime) -> str:
    return at.strftime("%Y-%m-%d %H:%M:%S UTC")


def _who(by: str | None, slack_names: bool) -> str:
    if not by:
        return ""
    return f" by <@{by}>" if slack_names and not by.startswith("cli:") else f" by {by}"


def _line(text: str) -> str:
    """One markdown line: table pipes escaped, no line breaks."""
    return " ".join(text.split()).replace("|", "\\|")


def _code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence} {text} {fence}" if fence == "``" else f"`{text}`"


def _lasted(pm: Postmortem) -> str:
    if pm.resolved_at is None:
        return "still open"
    minutes = max(0, int((pm.resolved_at - pm.opened_at).total_seconds() // 60))
    hours, rest = divmod(minutes, 60)
    return f"resolved {_when(pm.resolved_at)}, after {hours} h {rest} min" if hours else \
        f"resolved {_when(pm.resolved_at)}, after {rest} min"


def postmortem_markdown(pm: Postmortem, *, slack_names: bool = False) -> str:
    """`slack_names`: write people as <@U123> mentions (the file is read in Slack, which shows names)."""
    out = [f"# Postmortem draft: {_line(pm.title)}", "",
           f"Incident {pm.incident_id} (`{pm.key}`), from {pm.source}"
           + (f", namespace `{pm.namespace}`" if pm.namespace else "")
           + f". Opened {_when(pm.opened_at)}; {_lasted(pm)}.",
           "", "_A draft written by triagebot from the incident's thread and its store; edit it before sharing._",
           "", "## Timeline", "", "| when | what |", "| --- | --- |"]
    out += [f"| {_when(e.at)} | {_line(e.what + _who(e.by, slack_names))} |" for e in pm.timeline]
    out += ["", "## Verdict", ""]
    if pm.verdict is None:
        out.append(f"None: {pm.no_verdict}.")
    else:
        v = pm.verdict
        out += [f"**{v.playbook} {SEP} {v.hypothesis}** ({v.status}, triage run {v.run_id}): {_line(v.claim)}", ""]
        out += [f"- {_line(b)}" for b in v.because]
        out += ["", f"**Would be falsified by:** {_line(v.falsifier)}"]
    out += ["", "## Evidence", ""]
    if not pm.evidence:
        out.append("No evidence was cited for a verdict.")
    for q in pm.evidence:
        out.append(f"- {_code(q.fact)} = {_code(q.value)} for {q.hypothesis}, read from {_line(q.source)}")
        if q.excerpt:
            out.append("  > " + q.excerpt.replace("\n", " "))  # the line as read, its spacing kept
    out += ["", "## What on-call said", ""]
    if pm.label is None:
        out.append("Nobody has labelled the verdict yet (Mark resolved or Wrong diagnosis under the report).")
    else:
        lb = pm.label
        said = "the verdict was right" if lb.right else \
            f"the verdict was wrong; it was {lb.instead or 'something else'}"
        out.append(f"{said[0].upper()}{said[1:]}{_who(lb.by, slack_names)}, {_when(lb.at)}.")
        if lb.note:
            out += ["", f"> {_line(lb.note)}"]
    out += ["", "## Follow-ups", ""]
    # Commands whole, in code: copied and run as they are (no escaping inside a code span).
    out += [f"- [ ] {_code(' '.join(f.split()))}" for f in pm.follow_ups]
    out += [f"- [ ] Collect what the triage could not read: {_line(m)}" for m in pm.missing]
    if not pm.follow_ups and not pm.missing:
        out.append("No open checks were left by the triage.")
    return redact_text("\n".join(out) + "\n")
