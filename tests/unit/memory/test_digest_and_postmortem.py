"""The pure halves of incident memory: the digest's tallies and its Block Kit within Slack's limits, and the
postmortem's reading of alert states (state changes kept, Alertmanager's repeats left out)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from bot.memory.digest import IncidentSummary, build_digest
from bot.memory.history import IncidentRows
from bot.memory.postmortem import alert_events, build_postmortem
from bot.memory.production import Label
from bot.render.alert_root import AlertRoot, root_blocks
from bot.render.memory.digest import SECTION_LIMIT, digest_blocks, digest_chart, digest_text
from bot.render.slack_triage import POSTMORTEM_ACTION, POSTMORTEM_BLOCK, resolved_blocks
from bot.store.models import Alert, Incident, TriageRun

SINCE = datetime(2026, 11, 16, tzinfo=UTC)
UNTIL = SINCE + timedelta(days=7)


def _incident(n: int, lead: str | None, where: str | None, days: float, status: str = "open") -> IncidentSummary:
    return IncidentSummary(id=n, title=f"i{n}", created_at=SINCE + timedelta(days=days), status=status, lead=lead,
                           where=where)


def test_the_digest_keeps_the_week_and_counts_what_came_back() -> None:
    incidents = [_incident(1, "gpu-xid/hardware-fault", "node/gpu-3", 0.5, "resolved"),
                 _incident(2, "gpu-xid/hardware-fault", "node/gpu-3", 3),
                 _incident(3, "gpu-xid/hardware-fault", "node/gpu-4", 3),  # another node: no repeat
                 _incident(4, None, None, 4),
                 _incident(5, "gpu-xid/hardware-fault", "node/gpu-3", 7.5)]  # after the week
    labels = [Label(run_id=1, said="gpu-xid/hardware-fault", right=True, was=None, by="U1", at=SINCE),
              Label(run_id=9, said="oom-killed/limit-too-low", right=False, was=None, by="U1",
                    at=SINCE - timedelta(days=1))]  # before the week
    d = build_digest(incidents, labels, SINCE, UNTIL)
    assert (d.incidents, d.resolved) == (4, 1)
    assert d.by_symptom == [("gpu-xid", 3), ("(no verdict)", 1)]
    assert [(r.where, r.times, r.last) for r in d.repeats] == [("node/gpu-3", 2, SINCE + timedelta(days=3))]
    assert (d.production.labelled, d.production.right) == (1, 1)


def test_the_digest_message_stays_within_slacks_limits_however_long_the_names() -> None:
    long = "p" * 900
    incidents = [_incident(n, f"{long}{n}/{'h' * 900}", f"node/{'n' * 900}", n / 10) for n in range(40)]
    incidents += [_incident(100 + n, f"{long}{n}/{'h' * 900}", f"node/{'n' * 900}", n / 10) for n in range(40)]
    text, blocks = digest_blocks(build_digest(incidents, [], SINCE, UNTIL))
    assert len(blocks) <= 50 and len(json.dumps(blocks)) < 13_000 and len(text) < 4_000
    assert all(len(b["text"]["text"]) <= SECTION_LIMIT for b in blocks if b["type"] == "section")


def test_an_empty_week_says_so_and_has_no_chart() -> None:
    d = build_digest([], [], SINCE, UNTIL)
    out = digest_text(d)
    assert "0 incidents, 0 resolved." in out and "No verdict was labelled this week" in out
    assert digest_chart(d) is None
    assert "chart" not in json.dumps(digest_blocks(d)[1])


def _alert(status: str, minute: int, fingerprint: str = "fp") -> Alert:
    return Alert(group_key="g", fingerprint=fingerprint, status=status, labels={"alertname": "GpuXid", "node": "gpu-3"},
                 payload={}, received_at=SINCE + timedelta(minutes=minute))


def test_alert_events_keep_changes_of_state_only() -> None:
    alerts = [_alert("firing", 0), _alert("firing", 5), _alert("firing", 5, "other"), _alert("resolved", 9),
              _alert("firing", 30), _alert("resolved", 40, "other")]
    assert [(e.at.minute, e.what) for e in alert_events(alerts)] == [
        (0, "Alert fired: GpuXid (node=gpu-3)"), (5, "Alert fired: GpuXid (node=gpu-3)"),
        (9, "Alert resolved: GpuXid (node=gpu-3)"), (30, "Alert fired again: GpuXid (node=gpu-3)"),
        (40, "Alert resolved: GpuXid (node=gpu-3)")]


def test_a_resolved_alert_root_offers_the_postmortem_of_its_incident() -> None:
    def buttons(status: str, incident_id: int | None) -> list[tuple[str, str]]:
        blocks = root_blocks(AlertRoot(status=status, count=1, alertnames=["GpuXid"], incident_id=incident_id))
        return [(e["action_id"], e["value"]) for b in blocks if b["type"] == "actions" for e in b["elements"]]

    assert buttons("resolved", 7) == [(POSTMORTEM_ACTION, "7")]
    assert buttons("firing", 7) == [] and buttons("resolved", None) == []


def test_resolving_a_root_that_has_the_button_keeps_one() -> None:
    resolved = root_blocks(AlertRoot(status="resolved", count=1, alertnames=["GpuXid"], incident_id=7))
    blocks = resolved_blocks("GpuXid resolved", "Marked resolved by <@U1>.", 7, resolved)
    assert [b.get("block_id") for b in blocks].count(POSTMORTEM_BLOCK) == 1 and blocks[-1]["block_id"] == \
        POSTMORTEM_BLOCK
    assert blocks[-2]["type"] == "context"  # the note, under what the root showed
    text_only = resolved_blocks("Triaged checkout", "Marked resolved by <@U1>.", 7, None)
    assert [b["type"] for b in text_only] == ["section", "context", "actions"]


def test_a_postmortem_of_runs_that_failed_or_cannot_be_read_says_why_there_is_no_verdict() -> None:
    incident = Incident(id=3, key="slash:x", title="checkout", source="slash", status="open", created_at=SINCE,
                        updated_at=SINCE)

    def run(n: int, status: str, report: dict[str, object] | None, error: str | None = None) -> TriageRun:
        return TriageRun(id=n, incident_id=3, trigger="slash", status=status, report=report, error=error,
                         started_at=SINCE + timedelta(minutes=n), finished_at=None, requested_by="U1")

    failed = build_postmortem(IncidentRows(incident, runs=[run(1, "failed", None, "kube API timed out")]))
    assert failed.no_verdict == "triage run 1 failed: kube API timed out" and failed.verdict is None
    unreadable = build_postmortem(IncidentRows(incident, runs=[run(2, "ok", {"findings": "not a list"})]))
    assert unreadable.no_verdict == "triage run 2 left no report this version can read"
    assert [e.what for e in unreadable.timeline] == ["Incident opened (slash)",
                                                     "Triage run 2 (from /triage): no readable report"]
