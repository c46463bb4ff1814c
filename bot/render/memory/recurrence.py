"""What came back, in words: the recurrence note for Slack, the terminal, markdown and the report JSON.

One sentence per link ("node-a: 3rd incident in 7 days — Xid 79 on GPU 1 twice"), the earlier incidents it names,
then each pattern with its next checks (suggested commands: the bot runs none of them).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.text import Text

from bot.memory.recurrence import Echo, Link, Recurrence, Seen
from bot.render.slack import TEXT_LIMIT, mrkdwn_escape

MAX_LINKS = 5
MAX_EARLIER = 3
# An https URL without the characters that end or split a mrkdwn link (`|`, `>`), quotes or spaces.
_PERMALINK = re.compile(r"https://[A-Za-z0-9.-]+/[A-Za-z0-9/_.?=&%-]*")


def ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _times(echo: Echo) -> str:
    return f"{echo.what} twice" if echo.times == 2 else f"{echo.what} {echo.times} times"


def link_sentence(link: Link, days: int) -> str:
    """"node-a: 3rd incident in 7 days — Xid 79 on GPU 1 twice"."""
    said = f"{link.subject}: {ordinal(link.count)} incident in {days} days"
    return said + (" — " + ", ".join(_times(e) for e in link.echoes) if link.echoes else "")


def shown(rec: Recurrence) -> list[Seen]:
    """The earlier incidents the Slack note names, each once: those whose threads it links."""
    seen = {s.incident_id: s for link in rec.links[:MAX_LINKS] for s in link.earlier[:MAX_EARLIER]}
    return list(seen.values())


def _safe_link(url: str | None) -> str | None:
    """A permalink as Slack gave it, kept only when nothing in it could break out of a mrkdwn link."""
    return url if url and _PERMALINK.fullmatch(url) else None


def _when(seen: Seen) -> str:
    return seen.at.strftime("%b %d")


def _slack_ref(seen: Seen, permalinks: Mapping[int, str]) -> str:
    name = f"#{seen.incident_id} {seen.title}".strip() if seen.title else f"#{seen.incident_id}"
    url = _safe_link(permalinks.get(seen.incident_id))
    if url is not None:
        return f"<{url}|{mrkdwn_escape(name)}> ({_when(seen)})"
    where = f" in <#{seen.channel}>" if seen.channel and re.fullmatch(r"[A-Z0-9]+", seen.channel) else ""
    return f"{mrkdwn_escape(name)}{where} ({_when(seen)})"


def _plain_ref(seen: Seen) -> str:
    name = f"#{seen.incident_id} {seen.title}".strip() if seen.title else f"#{seen.incident_id}"
    return f"{name} ({_when(seen)})"


def _more(link: Link) -> str:
    rest = len(link.earlier) - MAX_EARLIER
    return f" and {rest} more" if rest > 0 else ""


def slack_text(rec: Recurrence, permalinks: Mapping[int, str] | None = None) -> str:
    """The thread note in Slack mrkdwn; earlier incidents link their threads where `permalinks` (by incident, as
    Slack's chat.getPermalink gave them) has one, else name the incident, its channel and its date."""
    permalinks = permalinks or {}
    lines = [":repeat: *This came back*"]
    for link in rec.links[:MAX_LINKS]:
        refs = ", ".join(_slack_ref(s, permalinks) for s in link.earlier[:MAX_EARLIER]) + _more(link)
        lines.append(f"• *{mrkdwn_escape(link_sentence(link, rec.days))}*: {refs}")
    for pattern in rec.patterns:
        lines.append(f":mag: {mrkdwn_escape(pattern.claim)}. Next (suggested, not run):")
        lines.extend(f"    `{c}`" if c.startswith("kubectl ") else f"    {mrkdwn_escape(c)}"
                     for c in pattern.next_checks)
    text = "\n".join(lines)
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT - 1] + "…"


def slack_payload(rec: Recurrence, permalinks: Mapping[int, str] | None = None) -> dict[str, Any]:
    """Text and blocks of the thread reply (one section: the note is short by construction)."""
    text = slack_text(rec, permalinks)
    return {"text": text, "blocks": [{"type": "section", "text": {"type": "mrkdwn", "text": text}}]}


def plain_lines(rec: Recurrence) -> list[str]:
    lines = [f"This came back (the {rec.days} days before):"]
    for link in rec.links[:MAX_LINKS]:
        refs = ", ".join(_plain_ref(s) for s in link.earlier[:MAX_EARLIER]) + _more(link)
        lines.append(f"  - {link_sentence(link, rec.days)}: {refs}")
    for pattern in rec.patterns:
        lines.append(f"  * {pattern.claim}. Next (suggested, not run):")
        lines.extend(f"      {c}" for c in pattern.next_checks)
    return lines


def print_recurrence(rec: Recurrence, console: Console | None = None) -> None:
    out = console or Console()
    if not rec:  # asked for (--recall): say that nothing came back rather than nothing at all
        out.print(Text(f"Nothing came back: no incident of the {rec.days} days before shares a node, GPU, image, "
                       "workload or verdict with this one.", style="dim"))
        return
    lines = plain_lines(rec)
    out.print(Text(lines[0], style="bold"))
    for line in lines[1:]:
        out.print(Text(line, style="yellow" if line.lstrip().startswith("*") else ""))


def recurrence_markdown(rec: Recurrence) -> str:
    lines = ["## This came back", "", f"In the {rec.days} days before this incident:", ""]
    for link in rec.links[:MAX_LINKS]:
        refs = ", ".join(_plain_ref(s) for s in link.earlier[:MAX_EARLIER]) + _more(link)
        lines.append(f"- **{link_sentence(link, rec.days)}**: {refs}")
    for pattern in rec.patterns:
        lines += ["", f"**{pattern.claim}.** Next (suggested, not run):", ""]
        lines.extend(f"- `{c}`" if c.startswith("kubectl ") else f"- {c}" for c in pattern.next_checks)
    return "\n".join(lines) + "\n"

