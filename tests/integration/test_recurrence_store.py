"""Recurrence on the real store (SQLite and PostgreSQL): incidents spread over simulated weeks, read back by the
store query (bot/memory/recent.py), and a new triage's report followed by its recurrence note in the thread."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from sqlalchemy import select

from bot.cli.main import main
from bot.delivery import Root, queue
from bot.delivery.poster import Poster
from bot.memory.recent import recall_for, recent_incidents
from bot.metrics import Metrics
from bot.runner.jobs import TriageJobs, TriageRequest
from bot.store import repo
from bot.store.models import Incident, OutboxItem, TriageRun
from bot.store.types import utcnow
from collectors.live.collect import LiveAccess
from collectors.models import Target
from playbooks.report import Report
from tests.harness.fixtures import MigratedStore
from tests.standins.slack_api import WORKSPACE_URL, SlackFault, SlackStandIn
from tests.unit.core.test_recurrence import crash_report, nccl_report, xid_report

NOW = utcnow().replace(microsecond=0)


def _no_cluster() -> LiveAccess:
    raise AssertionError("publishing reads no cluster")


def _stored(store: MigratedStore, key: str, days_ago: float, report: dict[str, Any], *, thread: str | None = None,
            status: str = "ok") -> int:
    at = NOW - timedelta(days=days_ago)
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, key, title=key, source="alert", now=at)
        repo.record_triage_run(db, incident_id=incident.id, target=report.get("target") or {}, trigger="alert",
                               status=status, started_at=at, finished_at=at, report=report)
        if thread is not None:
            repo.record_slack_message(db, channel="C0ALERTS", ts=thread, kind="alert", incident_id=incident.id, now=at)
            repo.record_slack_message(db, channel="C0ALERTS", ts=f"{thread}1", thread_ts=thread, kind="report",
                                      incident_id=incident.id, now=at + timedelta(seconds=30))
        return incident.id


def _weeks(store: MigratedStore) -> dict[str, int]:
    """Four weeks of a GPU cluster: node-a's GPU 1 failing in week 1 and again this week, noise in between."""
    ids = {
        "xid-old": _stored(store, "xid-old", 22, xid_report("node-a", [79])),
        "xid-6d": _stored(store, "xid-6d", 6, xid_report("node-a", [48]), thread="1700000001.000100"),
        "xid-2d": _stored(store, "xid-2d", 2, xid_report("node-a", [79]), thread="1700000002.000100"),
        "crash-shop": _stored(store, "crash-shop", 3, crash_report("shop", "api", "reg/api:2.4.1")),
        "crash-ml-old": _stored(store, "crash-ml-old", 15, crash_report("ml", "api", "reg/api:2.4.1")),
        "hang-1": _stored(store, "hang-1", 1, nccl_report("llama", ["gpu-7"])),
        "hang-4": _stored(store, "hang-4", 4, nccl_report("llama", ["gpu-7", "gpu-3"])),
        "failed": _stored(store, "failed", 1, xid_report("node-a", [79]), status="failed"),
    }
    for week in range(4):  # unrelated incidents on other nodes and namespaces, every few days
        for day in (1.5, 4.5):
            name = f"noise-{week}-{day}"
            ids[name] = _stored(store, name, 7 * week + day, crash_report(f"team-{week}", f"svc{week}",
                                                                          f"reg/svc{week}:1"))
    return ids


def test_the_window_holds_each_incident_once_with_its_thread(store: MigratedStore) -> None:
    ids = _weeks(store)
    with store.factory() as db:
        week = {s.incident_id: s for s in recent_incidents(db, NOW - timedelta(days=7), NOW)}
    assert ids["xid-6d"] in week and ids["xid-old"] not in week and ids["crash-ml-old"] not in week
    assert ids["failed"] not in week  # a failed run said nothing to link by
    assert (week[ids["xid-2d"]].channel, week[ids["xid-2d"]].thread_ts) == ("C0ALERTS", "1700000002.000100")
    assert week[ids["hang-1"]].thread_ts is None


def test_a_new_xid_on_the_same_gpu_recalls_this_weeks_two_and_the_pattern(store: MigratedStore) -> None:
    ids = _weeks(store)
    with store.factory() as db:
        rec = recall_for(db, incident_id=None, report=xid_report("node-a", [79]), at=NOW)
    gpu = rec.links[0]
    assert (gpu.kind, gpu.subject, gpu.count) == ("gpu", "GPU 1 on node-a", 3)
    assert [s.incident_id for s in gpu.earlier] == [ids["xid-2d"], ids["xid-6d"]]
    (pattern,) = rec.patterns
    assert pattern.kind == "gpu-hardware-xids" and "Xid 48, 79 in 3 incidents" in pattern.claim


def test_a_month_back_finds_the_image_in_another_namespace(store: MigratedStore) -> None:
    ids = _weeks(store)
    with store.factory() as db:
        week = recall_for(db, incident_id=None, report=crash_report("billing", "api", "reg/api:2.4.1"), at=NOW)
        month = recall_for(db, incident_id=None, report=crash_report("billing", "api", "reg/api:2.4.1"), at=NOW,
                           window=timedelta(days=30))
    assert [p.kind for p in week.patterns] == ["image-crash-loop"]  # shop this week, billing now
    assert "2 namespaces (billing, shop)" in week.patterns[0].claim
    assert "3 namespaces (billing, ml, shop)" in month.patterns[0].claim
    assert ids["crash-ml-old"] in month.patterns[0].incidents


def test_an_incident_that_shares_nothing_recalls_nothing(store: MigratedStore) -> None:
    _weeks(store)
    lonely = {"target": {"namespace": "elsewhere", "service": "deployment/solo"},
              "facts": {"container.image": "reg/solo:1", "pod.node": "node-z"},
              "lead": {"playbook": "oom-killed", "hypothesis": "limit-too-low"}}
    with store.factory() as db:
        assert not recall_for(db, incident_id=None, report=lonely, at=NOW)


def _publish(store: MigratedStore, key: str) -> int:
    """A new Xid 79 on node-a's GPU 1, published as a live triage's report: the run's id."""
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, key, title=key, source="alert")
    jobs = TriageJobs(store.factory, _no_cluster, Metrics())
    doc = xid_report("node-a", [79])
    report = Report(target=Target(node="node-a", service="node/node-a"), symptoms=["gpu-xid"], findings=[],
                    facts=doc["facts"], artifacts=[])
    request = TriageRequest(target=report.target, since=timedelta(hours=1), trigger="alert", channel="C0ALERTS",
                            key=f"alert:{key}", parent_key=None, incident_id=incident.id)
    try:
        return jobs.publish(request, report, [], datetime.now(NOW.tzinfo))
    finally:
        jobs.shutdown()


def _thread_in_slack(store: MigratedStore, client: WebClient, incident_id: int) -> str:
    """Give a stored incident a thread that exists in the Slack stand-in; its ts."""
    ts = str(client.chat_postMessage(channel="C0ALERTS", text="an earlier alert")["ts"])
    with store.factory.begin() as db:
        incident = db.get(Incident, incident_id)
        assert incident is not None
        incident.channel, incident.thread_ts = "C0ALERTS", ts
    return ts


def _deliver(store: MigratedStore, client: WebClient) -> None:
    """Post what is queued, on a clock that steps past every channel's pace (the report, then the note under it)."""
    now = [datetime.now(NOW.tzinfo)]
    poster = Poster(store.factory, client, Metrics(), worker_id="poster-test", clock=lambda: now[0])
    for _ in range(8):
        poster.run_once()
        now[0] += timedelta(seconds=5)


def _note(slack: SlackStandIn) -> str:
    notes = [m.text for m in slack.messages["C0ALERTS"] if m.text.startswith(":repeat:")]
    assert len(notes) == 1, notes
    return notes[0]


def test_a_published_report_is_followed_by_its_recurrence_note(store: MigratedStore) -> None:
    ids = _weeks(store)
    run_id = _publish(store, "xid-now")
    with store.factory() as db:
        note = db.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "alert:xid-now:recurrence")).one()
        posted = db.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "alert:xid-now:report")).one()
        stored = db.get(TriageRun, run_id)
    assert note.depends_on == posted.id and note.payload["kind"] == "recurrence"
    assert "GPU 1 on node-a: 3rd incident in 7 days" in note.payload["text"]
    assert "in <#C0ALERTS>" in note.payload["text"] and "<https://" not in note.payload["text"]  # links come later
    assert note.payload["recurrence"]["links"][0]["earlier"][0]["incident"] == ids["xid-2d"]
    assert "`kubectl cordon node-a`" in note.payload["text"]
    assert stored is not None and stored.report is not None
    assert stored.report["recurrence"]["links"][0]["earlier"][0]["incident"] == ids["xid-2d"]


def test_the_note_links_earlier_threads_by_slacks_permalink_fetched_once(store: MigratedStore) -> None:
    ids = _weeks(store)
    with SlackStandIn(burst=100, post_rate_per_channel=100.0) as slack:
        client = WebClient(token=slack.token, base_url=slack.api_url, timeout=5)
        ts = _thread_in_slack(store, client, ids["xid-2d"])  # xid-6d's thread is not in Slack: message_not_found
        _publish(store, "xid-now")
        _deliver(store, client)
        text = _note(slack)
        link = f"{WORKSPACE_URL}archives/C0ALERTS/p{ts.replace('.', '')}"
        assert f"<{link}|#{ids['xid-2d']} xid-2d> (" in text
        assert f"#{ids['xid-6d']} xid-6d in <#C0ALERTS> (" in text  # Slack refused: named, not linked
        asked = [c.params.get("message_ts") for c in slack.calls_to("chat.getPermalink")]
        assert sorted(asked) == sorted([ts, "1700000001.000100"])
        with store.factory() as db:
            assert db.get(Incident, ids["xid-2d"]).permalink == link  # type: ignore[union-attr]
            assert db.get(Incident, ids["xid-6d"]).permalink is None  # type: ignore[union-attr]
        slack.messages["C0ALERTS"].clear()
        _publish(store, "xid-again")  # the kept permalink serves the next note: Slack is asked for 6d's only
        _deliver(store, client)
        assert f"<{link}|#{ids['xid-2d']} xid-2d>" in _note(slack)
        assert [c.params.get("message_ts") for c in slack.calls_to("chat.getPermalink")][2:] == ["1700000001.000100"]


@pytest.mark.parametrize("fault", [SlackFault("chat.getPermalink", error="ratelimited", retry_after=30),
                                   SlackFault("chat.getPermalink", status=503)], ids=["ratelimited", "down"])
def test_without_permalinks_the_note_names_the_threads_and_is_posted(store: MigratedStore, fault: SlackFault) -> None:
    ids = _weeks(store)
    with SlackStandIn(burst=100, post_rate_per_channel=100.0, faults=[fault]) as slack:
        client = WebClient(token=slack.token, base_url=slack.api_url, timeout=5, retry_handlers=[])
        _thread_in_slack(store, client, ids["xid-2d"])
        _publish(store, "xid-now")
        _deliver(store, client)
        text = _note(slack)
        assert f"#{ids['xid-2d']} xid-2d in <#C0ALERTS> (" in text and "<https://" not in text
        # A 429 holds the budget for its Retry-After: one call, not one per earlier incident.
        assert len(slack.calls_to("chat.getPermalink")) == (1 if fault.error == "ratelimited" else 2)
    with store.factory() as db:
        assert db.get(Incident, ids["xid-2d"]).permalink is None  # type: ignore[union-attr]


def test_no_note_when_nothing_came_back_or_recurrence_is_off(store: MigratedStore) -> None:
    _weeks(store)
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, "quiet", title="quiet", source="alert")
    report = Report(target=Target(node="node-a", service="node/node-a"), symptoms=[], findings=[],
                    facts=xid_report("node-a", [79])["facts"], artifacts=[])
    for key, window in (("alert:off", timedelta(0)), ("alert:on", timedelta(days=7))):
        jobs = TriageJobs(store.factory, _no_cluster, Metrics(), recurrence=window)
        request = TriageRequest(target=report.target, since=timedelta(hours=1), trigger="alert", channel="C0ALERTS",
                                key=key, parent_key=None, incident_id=incident.id)
        try:
            jobs.publish(request, report, [], NOW)
        finally:
            jobs.shutdown()
    with store.factory() as db:
        keys = set(db.scalars(select(OutboxItem.idempotency_key)))
    assert "alert:off:report" in keys and "alert:off:recurrence" not in keys
    assert "alert:on:recurrence" in keys


XID_79 = "tests/realworld/gpu-xid/akash-support-209-xid-79-recurred-after-reboot/evidence.txt"


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_analyze_recall_says_what_came_back_in_json_markdown_and_text(
        store: MigratedStore, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    same = {"target": {"namespace": "ml"}, "facts": {"xid.codes": [79]},
            "lead": {"playbook": "gpu-xid", "hypothesis": "gpu-fallen-off-bus", "status": "likely"}}
    earlier = _stored(store, "xid-in-ml", 3, same)
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", store.url)
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["analyze", XID_79, "-n", "ml", "--recall", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["lead"]["hypothesis"] == "gpu-fallen-off-bus"
    (link,) = doc["recurrence"]["links"]
    assert (link["kind"], link["count"], link["earlier"][0]["incident"]) == ("verdict", 2, earlier)
    assert main(["analyze", XID_79, "-n", "ml", "--recall", "--format", "markdown"]) == 0
    assert "- **gpu-xid/gpu-fallen-off-bus in ml: 2nd incident in 7 days" in capsys.readouterr().out
    assert main(["analyze", XID_79, "-n", "other", "--recall"]) == 0
    out = capsys.readouterr().out
    assert "This came back" not in out and "Nothing came back: no incident of the 7 days before" in out


def test_recall_from_a_missing_database_is_one_line_and_creates_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.sqlite"
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{path}")
    assert main(["analyze", XID_79, "--recall"]) == 2
    assert "no bot database at" in capsys.readouterr().err and not path.exists()


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_in_an_alert_storm_the_report_keeps_the_recurrence_and_the_thread_gets_no_note(store: MigratedStore) -> None:
    _weeks(store)
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, "storm-group", title="storm-group", source="alert")
        rollup = queue(db, Root(key="rollup:C0ALERTS:1", channel="C0ALERTS", kind="rollup", text="storm"))
        queue(db, Root(key="alert:storm-group:root", channel="C0ALERTS", kind="alert", text="Xid", under=rollup,
                       incident_id=incident.id))
    jobs = TriageJobs(store.factory, _no_cluster, Metrics())
    report = Report(target=Target(node="node-a", service="node/node-a"), symptoms=[], findings=[],
                    facts=xid_report("node-a", [79])["facts"], artifacts=[])
    request = TriageRequest(target=report.target, since=timedelta(hours=1), trigger="alert", channel="C0ALERTS",
                            key="alert:storm-group", parent_key="alert:storm-group:root", incident_id=incident.id)
    try:
        run_id = jobs.publish(request, report, [], NOW)
    finally:
        jobs.shutdown()
    with store.factory() as db:
        keys = set(db.scalars(select(OutboxItem.idempotency_key)))
        stored = db.get(TriageRun, run_id)
    assert "alert:storm-group:report" in keys and "alert:storm-group:recurrence" not in keys
    assert stored is not None and stored.report is not None and stored.report["recurrence"]["links"]
