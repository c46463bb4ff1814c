"""What the bot says for a report, an alert group and a storm: the words, before bot/delivery/ queues them.

Outbox keys depend only on what caused the post (a group key, a fingerprint, a run id), so two replicas
that handle the same alert queue the same keys and Slack sees one post.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.delivery.posts import Report, Upload
from bot.render.alert_root import target_words
from bot.render.slack import actions_block, cut_within, mrkdwn_escape, renderer
from bot.store.models import AlertGroup, OutboxItem
from collectors.alert_target import ALERT_SOURCE, target_for
from collectors.models import Artifact
from playbooks.report import Report as TriageReport

EVIDENCE_FILE_LIMIT = 1_000_000  # bytes; Slack previews get unwieldy beyond this


def evidence_text(artifacts: list[Artifact], limit: int = EVIDENCE_FILE_LIMIT) -> str:
    """Every artifact, already redacted, as one text file a person can read or grep."""
    parts: list[str] = []
    size = 0
    for artifact in artifacts:
        head = f"===== {artifact.id} ({artifact.kind}) {artifact.subject}\n"
        head += f"# {artifact.command}\n" if artifact.command else ""
        body = f"# unavailable: {artifact.unavailable}\n" if artifact.unavailable else artifact.content.rstrip() + "\n"
        chunk = head + body + "\n"
        if size + len(chunk) > limit:
            parts.append(f"===== … {len(artifacts) - len(parts)} more artifacts cut at {limit} bytes\n")
            break
        parts.append(chunk)
        size += len(chunk)
    return "".join(parts)


@dataclass(frozen=True)
class PreparedReport:
    """A report's posts rendered and encoded ahead of the transaction that queues them (on SQLite that
    transaction holds the one write lock every webhook waits for), all but the run id its buttons carry."""

    text: str
    body: list[dict[str, Any]]
    chart_b64: str | None
    evidence: str | None


def prepare_report(report: TriageReport, artifacts: list[Artifact], templates_dir: Path | None = None,
                   chart: bytes | None = None) -> PreparedReport:
    """Render the report's blocks and fallback text, encode its chart and write its evidence file."""
    slack = renderer(templates_dir)
    # The notification that started an alert's triage is evidence for the engine, but the thread's root already
    # shows it: the file holds what the triage collected, and there is no file when it collected nothing.
    collected = [a for a in artifacts if a.source != ALERT_SOURCE]
    return PreparedReport(text=slack.fallback_text(report),
                          body=[b.to_dict() for b in slack.body_blocks(report)],
                          chart_b64=base64.b64encode(chart).decode("ascii") if chart is not None else None,
                          evidence=evidence_text(collected) if collected else None)


def report_post(prepared: PreparedReport, *, key: str, channel: str, run_id: int | str, incident_id: int | None,
                parent: OutboxItem | None) -> Report:
    """The report as a thread reply under `parent` (or a top-level post), with its chart, its evidence file and
    the buttons that act on run `run_id`."""
    return Report(key=key, channel=channel, incident_id=incident_id, parent=parent, text=prepared.text,
                  blocks=[*prepared.body, actions_block(str(run_id)).to_dict()], chart_b64=prepared.chart_b64,
                  evidence=prepared.evidence)


def alert_summary(payload: dict[str, Any]) -> str:
    """The root message of an alert group: status, names, and the summary annotation."""
    status = str(payload.get("status", "firing"))
    labels = payload.get("commonLabels") or (payload.get("alerts") or [{}])[0].get("labels") or {}
    names = sorted({str(a.get("labels", {}).get("alertname", "")) for a in payload.get("alerts", [])})
    summary = (payload.get("commonAnnotations") or {}).get("summary") or \
        (payload.get("alerts") or [{}])[0].get("annotations", {}).get("summary", "")
    icon = ":rotating_light:" if status == "firing" else ":white_check_mark:"
    # The target as the triage sees it: a node alert's `pod` label is the exporter's pod, not the subject.
    where = target_words(target_for(labels).target.model_dump())
    count = len(payload.get("alerts", []))
    text = f"{icon} *[{status.upper()}:{count}] {', '.join(names)}*{f' on {where}' if where else ''}\n{summary}".strip()
    # Alert text is untrusted: escape Slack's control characters so it cannot mention or link anyone.
    return mrkdwn_escape(text)


# Slack refuses `text` over 40,000 characters (msg_too_long) and cuts a section at 3,000; a root or note longer than
# this is cut with a mark, and the whole text goes into the thread as a file.
TEXT_LIMIT = 3000
CUT_MARK = "\n… _(cut: the full text is in the thread as a file)_"


def fitted_text(text: str, limit: int = TEXT_LIMIT) -> tuple[str, bool]:
    """`text` within `limit` characters, cut with a mark if needed; and whether it was cut."""
    return cut_within(text, limit, CUT_MARK), len(text) > limit


def full_text_upload(*, key: str, channel: str, text: str, parent: OutboxItem, incident_id: int | None,
                     filename: str = "alert.txt") -> Upload:
    """The whole of a text that was cut, as a file in the parent's thread."""
    return Upload(key=key, channel=channel, incident_id=incident_id, kind="full-text", filename=filename,
                  title="The full text of the message above", content=text, parent=parent)


def counted(status: str, states: dict[str, Any] | None) -> dict[str, Any]:
    """A group as rollup_summary counts it: its status and its alerts' newest states (bot.webhook.ordering)."""
    return {"status": status, "alerts": [
        {"status": s.get("status"), "labels": {"alertname": s.get("alertname") or "alert",
                                               "namespace": s.get("namespace") or ""}}
        for s in (states or {}).values()]}


def rollup_text(session: Session, key: str) -> str:
    """The roll-up `key`'s line as of now, from two small columns of its groups (the poster calls it at send time,
    so a storm's many changes cost one count per edit, not one per webhook)."""
    members = session.execute(select(AlertGroup.status, AlertGroup.alert_states)
                              .where(AlertGroup.rollup_key == key)).all()
    return rollup_summary([counted(status, states) for status, states in members])


def rollup_summary(groups: list[dict[str, Any]]) -> str:
    """One line for a storm: "37 alerts in 12 groups; top KubePodCrashLooping x20 in ml" (payload-shaped groups)."""
    counts: dict[str, int] = {}
    namespaces: dict[str, dict[str, int]] = {}
    firing = 0
    for group in groups:
        for alert in group.get("alerts") or []:
            if alert.get("status") != "firing":
                continue
            firing += 1
            labels = alert.get("labels") or {}
            name = str(labels.get("alertname", "alert"))
            counts[name] = counts.get(name, 0) + 1
            if labels.get("namespace"):
                where = namespaces.setdefault(name, {})
                where[str(labels["namespace"])] = where.get(str(labels["namespace"]), 0) + 1
    resolved = sum(1 for g in groups if g.get("status") == "resolved")
    text = f":rotating_light: *{firing} alerts in {len(groups)} groups*"
    if counts:
        top, n = max(counts.items(), key=lambda kv: (kv[1], kv[0]))
        spread = namespaces.get(top)
        text += f"; top {top} x{n}" + (f" in {max(spread.items(), key=lambda kv: kv[1])[0]}" if spread else "")
    if resolved:
        text += f"; {resolved} of {len(groups)} groups resolved"
    return mrkdwn_escape(text) + "\nEach group has its own message in this thread."


def episode_link_line(permalink: str, episode: int) -> str:
    """Under a root that opens episode `episode` > 1: where the previous episode's thread is."""
    return f":leftwards_arrow_with_hook: Fired again (episode {episode}); <{permalink}|the previous episode>"


def fired_again_line(permalink: str, episode: int) -> str:
    """In the previous episode's thread, once its group fired again: where the new episode's root is."""
    return f":repeat: Fired again: episode {episode} has its own message, <{permalink}|here>."
