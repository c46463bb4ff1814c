"""Incident memory on SQLite and PostgreSQL: the postmortem draft of a stored incident and the weekly digest over
incidents spread across simulated weeks, with the clock that sends it (issue 30 points 3 and 4)."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient
from sqlalchemy import delete, select

from bot.cli.evaluate import analyse_text
from bot.cli.main import main
from bot.delivery.poster import Poster
from bot.memory.digest import build_digest
from bot.memory.history import NoIncident, find_incident, incident_rows
from bot.memory.postmortem import build_postmortem
from bot.memory.weekly import incidents_between, labels_between
from bot.metrics import Metrics
from bot.render.memory.postmortem import postmortem_markdown
from bot.runner.digests import digest_enabled, last_complete_week, send_due, set_digest
from bot.store import repo
from bot.store.models import DigestChannel, OutboxItem
from playbooks.report import Report
from tests.harness.fixtures import MigratedStore
from tests.standins.slack_api import Message, SlackFault, SlackStandIn

FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"
# A Wednesday: the latest complete week is Mon 16 to Mon 23 November 2026 (2026-W47).
NOW = datetime(2026, 11, 25, 10, 0, tzinfo=UTC)
LABELS = {"alertname": "KubePodOOMKilled", "namespace": "ml-team", "pod": "training-job-xyz-0"}


@cache
def oom_report() -> dict[str, Any]:
    """A real report: the describe-pod fixture of an OOM-killed trainer (oom-killed > limit-too-low leads)."""
    report = analyse_text((FIXTURES / "describe_pod" / "oomkilled.txt").read_text(), "describe.txt", None)
    return report.model_dump(mode="json")


def _payload(status: str, at: datetime) -> dict[str, Any]:
    alert = {"status": status, "labels": LABELS, "annotations": {"summary": "trainer OOM killed"},
             "startsAt": at.isoformat(), "fingerprint": "fp-oom"}
    return {"version": "4", "groupKey": "{}:{alertname=\"KubePodOOMKilled\"}", "status": status,
            "receiver": "triagebot", "commonLabels": LABELS, "alerts": [alert]}


def _alert_incident(store: MigratedStore) -> int:
    """An alert that fired, was triaged, silenced, labelled right, resolved by on-call, then by Alertmanager."""
    t0 = NOW - timedelta(hours=3)
    with store.factory.begin() as db:
        group, _, _ = repo.store_alert_payload(db, _payload("firing", t0), "bot-0", now=t0)
        incident, _ = repo.open_incident_for_group(db, group, title="KubePodOOMKilled training-job-xyz-0",
                                                   namespace="ml-team", channel="C0OPS", now=t0)
        repo.store_alert_payload(db, _payload("firing", t0 + timedelta(minutes=5)), "bot-0",
                                 now=t0 + timedelta(minutes=5))  # a repeat: not a new line in the timeline
        run = repo.record_triage_run(db, incident_id=incident.id, target={"namespace": "ml-team",
                                                                          "pod": "training-job-xyz-0"},
                                     trigger="alert", status="ok", started_at=t0 + timedelta(seconds=2),
                                     finished_at=t0 + timedelta(seconds=9), report=oom_report())
        repo.audit(db, actor="U0BOB", channel="C0OPS", action="button.silence", target="ml-team",
                   detail={"silence": "s-1", "matchers": {"alertname": "KubePodOOMKilled"}},
                   now=t0 + timedelta(minutes=10))
        # Another alert's silence in the same channel is not this incident's.
        repo.audit(db, actor="U0BOB", channel="C0OPS", action="button.silence", target="web",
                   detail={"silence": "s-2", "matchers": {"alertname": "HighLatency"}},
                   now=t0 + timedelta(minutes=11))
        repo.audit(db, actor="U0ALICE", channel="C0OPS", action="button.show_evidence", target=f"run:{run.id}",
                   now=t0 + timedelta(minutes=12))
        repo.add_feedback(db, incident_id=incident.id, triage_run_id=run.id, user_id="U0ALICE",
                          verdict="correct", note="raised the limit; token xoxb-123456789012-1234567890123-"
                                                  "AbCdEfGhIjKlMnOpQrStUvWx was in the pod spec",
                          now=t0 + timedelta(minutes=40))
        repo.audit(db, actor="U0ALICE", channel="C0OPS", action="button.resolve_submit", target=f"run:{run.id}",
                   now=t0 + timedelta(minutes=40))
        repo.store_alert_payload(db, _payload("resolved", t0 + timedelta(minutes=45)), "bot-0",
                                 now=t0 + timedelta(minutes=45))
        return incident.id


def test_the_postmortem_has_the_timeline_verdict_evidence_label_and_follow_ups(store: MigratedStore) -> None:
    incident_id = _alert_incident(store)
    with store.factory.begin() as db:
        rows = incident_rows(db, find_incident(db, str(incident_id)))
        pm = build_postmortem(rows)
        run = rows.runs[0].id
    said = [(e.what, e.by) for e in pm.timeline]
    assert said == [
        ("Incident opened (alert)", None),
        ("Alert fired: KubePodOOMKilled (pod=training-job-xyz-0)", None),
        (f"Triage run {run} (from the alert): oom-killed/limit-too-low (likely)", None),
        ("Silenced the alert for 1h (silence s-1)", "U0BOB"),
        ("Listed the evidence", "U0ALICE"),
        (f"Labelled triage run {run} right", "U0ALICE"),
        ("Marked the incident resolved", "U0ALICE"),
        ("Alert resolved: KubePodOOMKilled (pod=training-job-xyz-0)", None),
    ]
    assert pm.status == "resolved" and pm.resolved_at == NOW - timedelta(hours=3) + timedelta(minutes=45)
    assert pm.verdict is not None and (pm.verdict.playbook, pm.verdict.hypothesis) == ("oom-killed", "limit-too-low")
    assert pm.verdict.falsifier.startswith("The container's working set stayed well under its limit")
    reason = next(q for q in pm.evidence if q.fact == "container.last_terminated.reason")
    assert (reason.value, reason.source, reason.excerpt) == ("OOMKilled", "describe.txt:31 (describe-pod paste)",
                                                            "Reason:       OOMKilled")
    assert pm.label is not None and pm.label.right and pm.label.by == "U0ALICE"
    assert pm.follow_ups and any("max_over_time(container_memory_working_set_bytes" in f for f in pm.follow_ups)
    markdown = postmortem_markdown(pm)
    assert "**Would be falsified by:**" in markdown and "- [ ] `kubectl get pod training-job-xyz-0" in markdown
    # Commands stay whole in code spans, pipes unescaped, so they copy and run as they are.
    assert "--no-pager | grep -iE 'oom-kill|memory cgroup out of memory|killed process'`" in markdown
    assert "xoxb-" not in markdown and "<redacted>" in markdown  # the note's token, masked on the way out
    assert "| 2026-11-25 07:10:00 UTC | Silenced the alert for 1h (silence s-1) by U0BOB |" in markdown
    assert "by <@U0BOB>" in postmortem_markdown(pm, slack_names=True)


def test_an_incident_without_a_triage_says_why_there_is_no_verdict(store: MigratedStore) -> None:
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, "slash:quiet", title="checkout in shop", source="slash", now=NOW)
        pm = build_postmortem(incident_rows(db, incident))
    assert pm.verdict is None and pm.no_verdict == "no triage ran on this incident"
    assert pm.evidence == [] and pm.follow_ups == [] and pm.label is None and pm.resolved_at is None
    assert "None: no triage ran on this incident." in postmortem_markdown(pm)
    with store.factory.begin() as db, pytest.raises(NoIncident, match="no stored incident 'slash:absent'"):
        find_incident(db, "slash:absent")


def test_the_cli_prints_the_postmortem(store: MigratedStore, monkeypatch: pytest.MonkeyPatch,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    incident_id = _alert_incident(store)
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", store.url)
    assert main(["postmortem", str(incident_id)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Postmortem draft: KubePodOOMKilled training-job-xyz-0")
    assert "oom-killed \u203a limit-too-low" in out and "xoxb-" not in out
    assert main(["postmortem", "999"]) == 2
    assert "no stored incident '999'" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------------------------
# The weekly digest over simulated weeks
# ------------------------------------------------------------------------------------------------------------

def _triaged(store: MigratedStore, key: str, at: datetime, lead: str | None, *, node: str | None = None,
             channel: str = "C0OPS", label: tuple[str, str | None] | None = None, resolved: bool = False) -> None:
    report: dict[str, Any] = {"lead": None}
    if lead:
        playbook, hypothesis = lead.split("/")
        report = {"lead": {"playbook": playbook, "hypothesis": hypothesis, "status": "likely"}}
    target = {"namespace": "ml", "node": node} if node else {"namespace": "ml", "service": "trainer"}
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, key, title=key, source="slash", channel=channel, target=target, now=at)
        if resolved:
            incident.status = "resolved"
        run = repo.record_triage_run(db, incident_id=incident.id, target=target, trigger="slash", status="ok",
                                     started_at=at, finished_at=at, report=report)
        if label is not None:
            verdict, instead = label
            playbook, hypothesis = instead.split("/") if instead else (None, None)
            repo.add_feedback(db, incident_id=incident.id, triage_run_id=run.id, user_id="U1", verdict=verdict,
                              right_playbook=playbook, right_hypothesis=hypothesis, now=at + timedelta(hours=1))


@pytest.fixture
def weeks(store: MigratedStore) -> MigratedStore:
    """Three weeks of incidents in C0OPS (and one elsewhere): the Xid on gpu-3 keeps coming back in W47."""
    since, _, _ = last_complete_week(NOW)  # Monday 16 November
    for day in (0, 2, 4):
        _triaged(store, f"xid-{day}", since + timedelta(days=day, hours=9), "gpu-xid/hardware-fault", node="gpu-3",
                 label=("correct", None), resolved=True)
    _triaged(store, "oom", since + timedelta(days=1), "oom-killed/limit-too-low",
             label=("wrong", "oom-killed/host-memory-underestimated"))
    _triaged(store, "none", since + timedelta(days=3), None)
    _triaged(store, "other-channel", since + timedelta(days=3), "gpu-xid/hardware-fault", node="gpu-3",
             channel="C0ELSE")
    _triaged(store, "week-before", since - timedelta(days=3), "gpu-xid/hardware-fault", node="gpu-3")
    _triaged(store, "this-week", NOW - timedelta(hours=5), "gpu-xid/hardware-fault", node="gpu-3")
    return store


def test_the_digest_of_a_week_counts_symptoms_verdicts_repeats_and_accuracy(weeks: MigratedStore) -> None:
    since, until, week = last_complete_week(NOW)
    assert (since, until, week) == (datetime(2026, 11, 16, tzinfo=UTC), datetime(2026, 11, 23, tzinfo=UTC),
                                    "2026-W47")
    with weeks.factory.begin() as db:
        d = build_digest(incidents_between(db, since, until, "C0OPS"), labels_between(db, since, until, "C0OPS"),
                         since, until)
    assert (d.incidents, d.resolved) == (5, 3)
    assert d.by_symptom == [("gpu-xid", 3), ("(no verdict)", 1), ("oom-killed", 1)]
    assert d.by_verdict == [("gpu-xid/hardware-fault", 3), ("oom-killed/limit-too-low", 1)]
    assert [(r.where, r.lead, r.times) for r in d.repeats] == [("node/gpu-3", "gpu-xid/hardware-fault", 3)]
    assert (d.production.labelled, d.production.right) == (4, 3)
    assert d.production.confusions == [("oom-killed/limit-too-low", "oom-killed/host-memory-underestimated", 1)]


def test_the_clock_sends_each_week_once_across_restarts_and_never_skips(weeks: MigratedStore) -> None:
    with weeks.factory.begin() as db:
        set_digest(db, "C0OPS", True, "U0ALICE", now=NOW - timedelta(days=14))  # opted in two weeks ago
        set_digest(db, "C0OFF", True, "U0ALICE", now=NOW - timedelta(days=14))
        set_digest(db, "C0OFF", False, "U0BOB", now=NOW - timedelta(days=13))
        assert digest_enabled(db, "C0OPS", []) and not digest_enabled(db, "C0OFF", ["C0OFF"])
    # The bot was down on Monday: on Wednesday it sends the week it missed, and a restart sends nothing again.
    assert send_due(weeks.factory, [], now=NOW) == ["C0OPS"]
    assert send_due(weeks.factory, [], now=NOW + timedelta(hours=1)) == []
    with weeks.factory.begin() as db:
        posts = list(db.scalars(select(OutboxItem).where(OutboxItem.idempotency_key.like("digest:%"))
                                .order_by(OutboxItem.id)))
        row = db.get(DigestChannel, "C0OPS")
        assert row is not None and row.last_week == "2026-W47"
    assert [p.idempotency_key for p in posts] == ["digest:C0OPS:2026-W47"]  # one message, its chart inside
    message = posts[0]
    assert message.payload["kind"] == "digest" and "5 incidents, 3 resolved" in message.payload["text"]
    shown = str(message.payload["blocks"])
    assert "3 x gpu-xid \u203a hardware-fault on node/gpu-3" in shown and "3 of 4 labelled verdicts right" in shown
    image = message.payload["image"]
    assert base64.b64decode(image["content_b64"]).startswith(b"\x89PNG")
    assert image["alt_text"].endswith(": gpu-xid 3, (no verdict) 1, oom-killed 1.")
    assert message.payload["blocks"][image["at"] - 1]["text"]["text"].startswith("*By symptom*")
    # The next Monday brings the next week, once.
    assert send_due(weeks.factory, [], now=NOW + timedelta(days=5)) == ["C0OPS"]


def _deliver_digest(weeks: MigratedStore, slack: SlackStandIn) -> Message:
    assert send_due(weeks.factory, ["C0OPS"], now=NOW) == ["C0OPS"]
    client = WebClient(token=slack.token, base_url=slack.api_url, timeout=5)
    clock = [datetime.now(UTC)]  # the outbox row is due from when it was queued
    poster = Poster(weeks.factory, client, Metrics(), worker_id="poster-test", clock=lambda: clock[0])
    for _ in range(4):
        poster.run_once()
        clock[0] += timedelta(seconds=5)
    [digest] = [m for m in slack.top_level("C0OPS") if m.text.startswith("Weekly triage digest")]
    return digest


def test_the_digest_shows_its_chart_in_the_message_from_an_unshared_upload(weeks: MigratedStore) -> None:
    with SlackStandIn(channels=("C0OPS",), burst=100, post_rate_per_channel=100.0) as slack:
        digest = _deliver_digest(weeks, slack)
        [image] = [b for b in digest.blocks if b["type"] == "image"]
        [chart] = slack.files
        assert image["slack_file"] == {"id": chart.id} and chart.channel is None  # shared nowhere but here
        assert image["alt_text"].startswith("Bar chart of incidents by symptom") and chart.alt_txt
        assert chart.bytes.startswith(b"\x89PNG") and not slack.thread("C0OPS", digest.ts)[1:]
        assert digest.blocks[digest.blocks.index(image) - 1]["text"]["text"].startswith("*By symptom*")


def test_a_refused_picture_goes_in_the_thread_and_refused_files_cost_only_the_picture(weeks: MigratedStore) -> None:
    with SlackStandIn(channels=("C0OPS",), burst=100, post_rate_per_channel=100.0) as slack:
        slack.slack_files_shown = False  # Slack still processing the file: "invalid slack file"
        digest = _deliver_digest(weeks, slack)
        assert all(b["type"] != "image" for b in digest.blocks) and "By symptom" in str(digest.blocks)
        assert [f.thread_ts for f in slack.files if f.channel == "C0OPS"] == [digest.ts]
    with weeks.factory.begin() as db:
        db.get(DigestChannel, "C0OPS").last_week = "2026-W46"  # type: ignore[union-attr]  # send it again
        db.execute(delete(OutboxItem))
    with SlackStandIn(channels=("C0OPS",), burst=100, post_rate_per_channel=100.0,
                      faults=[SlackFault("files.getUploadURLExternal", error="missing_scope")]) as slack:
        digest = _deliver_digest(weeks, slack)
        assert all(b["type"] != "image" for b in digest.blocks) and not slack.files


def test_a_channel_named_in_the_setting_gets_it_until_someone_turns_it_off(weeks: MigratedStore) -> None:
    assert send_due(weeks.factory, ["C0ELSE"], now=NOW) == ["C0ELSE"]
    with weeks.factory.begin() as db:
        set_digest(db, "C0ELSE", False, "U0BOB", now=NOW)
    assert send_due(weeks.factory, ["C0ELSE"], now=NOW + timedelta(days=7)) == []
    with weeks.factory.begin() as db:
        set_digest(db, "C0ELSE", True, "U0BOB", now=NOW + timedelta(days=8))
    # Turned on again: the week that ended before is not sent late; the next one is.
    assert send_due(weeks.factory, [], now=NOW + timedelta(days=8)) == []
    assert send_due(weeks.factory, [], now=NOW + timedelta(days=12)) == ["C0ELSE"]


def test_the_cli_prints_the_digest(weeks: MigratedStore, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", weeks.url)
    assert main(["digest", "--since", "30d", "--channel", "C0OPS"]) == 0
    out = capsys.readouterr().out
    # Relative to the real clock: the simulated weeks are in 2026-11, so only what is within 30 days shows.
    assert out.startswith("Triage digest,") and "What keeps coming back:" in out
    assert main(["digest", "--since", "7 days"]) == 2
    assert "expected a number of hours, days or weeks" in capsys.readouterr().err


def test_report_round_trip_is_what_the_postmortem_reads() -> None:
    assert Report.model_validate(oom_report()).lead is not None


def test_each_episode_of_a_group_has_its_own_alerts(store: MigratedStore) -> None:
    """A group that fired three times: the first, a middle and the current episode each keep their own alerts."""
    starts = [NOW - timedelta(hours=h) for h in (3, 2, 1)]
    with store.factory.begin() as db:
        group, _, _ = repo.store_alert_payload(db, _payload("firing", starts[0]), "bot-0", now=starts[0])
        group.channel = "C0OPS"
        ids = []
        for n, start in enumerate(starts, 1):
            if n > 1:
                repo.store_alert_payload(db, _payload("firing", start), "bot-0", now=start)
            group.episode, group.episode_started_at = n, start
            incident, _ = repo.open_incident_for_group(db, group, title=f"episode {n}", channel="C0OPS", now=start)
            ids.append(incident.id)
            if n < 3:
                end = start + timedelta(minutes=20)
                repo.store_alert_payload(db, _payload("resolved", end), "bot-0", now=end)
    with store.factory.begin() as db:
        timelines = [build_postmortem(incident_rows(db, find_incident(db, str(i)))).timeline for i in ids]
    alerts = [[(e.at, e.what.split(":")[0]) for e in t if e.what.startswith("Alert")] for t in timelines]
    assert alerts == [[(starts[0], "Alert fired"), (starts[0] + timedelta(minutes=20), "Alert resolved")],
                      [(starts[1], "Alert fired"), (starts[1] + timedelta(minutes=20), "Alert resolved")],
                      [(starts[2], "Alert fired")]]
