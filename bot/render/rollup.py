"""The roll-up thread's one message about triages that ended without a verdict: each reason once, with the groups
it ended, instead of one identical note per group (bot/alerts/rollup_outcomes.py keeps it current)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from bot.render.slack import mrkdwn_escape

GROUPS_SHOWN = 25  # per reason; the rest are counted (each group's own message in the thread says it too)


def group_name(alertnames: Sequence[str], group_labels: Mapping[str, str]) -> str:
    """A group as people tell groups apart: its alert names and the labels Alertmanager grouped it by."""
    names = "/".join(alertnames) or "alert"
    rest = ", ".join(f"{k}={v}" for k, v in sorted(group_labels.items()) if k != "alertname")
    return f"{names} ({rest})" if rest else names


def outcomes_text(by_reason: Mapping[str, Sequence[str]]) -> str:
    """"namespace "ml" not found — 3 groups: A, B, C", one line per reason, the most common first."""
    total = sum(len(groups) for groups in by_reason.values())
    lines = [f":mag: *{total} triage{'s' if total != 1 else ''} in this storm ended without a verdict*, by reason:"]
    for reason, groups in sorted(by_reason.items(), key=lambda item: (-len(item[1]), item[0])):
        shown = ", ".join(mrkdwn_escape(g) for g in sorted(groups)[:GROUPS_SHOWN])
        more = f" and {len(groups) - GROUPS_SHOWN} more" if len(groups) > GROUPS_SHOWN else ""
        count = f"{len(groups)} group{'s' if len(groups) != 1 else ''}"
        lines.append(f"• {mrkdwn_escape(reason)} — {count}: {shown}{more}")
    return "\n".join(lines)
