"""Alert groups through real Alertmanager into the bot and the Slack stand-in: order and HA duplicates, firing
episodes, and messages too big for Slack.

Alertmanager (Debian's package) receives alerts on its v2 API, the way Prometheus delivers them, and sends its
webhooks to the bot's real HTTP server; Slack is the stand-in with Slack's limits.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from bot.memory.history import incident_rows
from bot.memory.postmortem import build_postmortem
from bot.render.slack_triage import POSTMORTEM_ACTION
from bot.store.models import Alert, AlertGroup, AuditEntry, Incident, OutboxItem, TriageRun
from collectors.live.collect import LiveAccess
from tests.e2e.test_alertmanager_e2e import all_sent, replies, roots, wait_until
from tests.harness.alertmanager import AlertmanagerServer, start_alertmanager
from tests.harness.bot_server import WEBHOOK_TOKEN, RunningBot, bearer, bot_in_thread, bot_values, settings_from
from tests.harness.webhooks import webhook_body
from tests.standins.slack_api import Message, SlackFault, SlackStandIn

CHANNELS = ("C0OPS",)
PERMISSIONS = {"channels": {"C0OPS": ["*"]}}
LABELS = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-0", "severity": "warning"}
SUMMARY = {"summary": "checkout-0 is crash looping"}


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def firing(starts: datetime, **annotations: str) -> dict[str, Any]:
    return {"labels": LABELS, "annotations": {"summary": "checkout-0 is crash looping", **annotations},
            "startsAt": iso(starts), "generatorURL": "http://127.0.0.1:9090/graph"}


def resolved(starts: datetime, ends: datetime) -> dict[str, Any]:
    return {**firing(starts), "endsAt": iso(ends)}


def count(bot: RunningBot, model: Any, *where: Any) -> int:
    with bot.ctx.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(model).where(*where)) or 0)


def received(bot: RunningBot, status: str) -> float:
    """Alerts of `status` the webhook answered 200 for (stored in the intake), from /metrics."""
    line = f'triagebot_alerts_received_total{{status="{status}"}}'
    return sum(float(x.split()[-1]) for x in bot.ctx.metrics.exposition().decode().splitlines() if x.startswith(line))


@pytest.fixture
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=CHANNELS) as standin:
        yield standin


def start_bot(slack: SlackStandIn, url: str) -> Any:
    return bot_in_thread(settings_from(bot_values(slack_api_url=slack.api_url, database_url=url,
                                                  permissions=PERMISSIONS)))


def first_root(am: AlertmanagerServer, slack: SlackStandIn, starts: datetime, what: str) -> Message:
    """Fire the alert (started at `starts`) and return the root the bot posts for it."""
    am.post_alerts([firing(starts)])
    wait_until(lambda: len(roots(slack, "C0OPS")) == 1, 20, what)
    return roots(slack, "C0OPS")[0]


@contextmanager
def bot_and_alertmanager(tmp_path: Path, slack: SlackStandIn,
                         url: str) -> Iterator[tuple[RunningBot, AlertmanagerServer]]:
    """The bot, and one Alertmanager sending it webhooks."""
    with start_bot(slack, url) as bot, start_alertmanager(tmp_path, f"{bot.url}/alertmanager", WEBHOOK_TOKEN) as am:
        yield bot, am


def post_all(managers: list[AlertmanagerServer], alerts: list[dict[str, Any]]) -> None:
    for am in managers:
        am.post_alerts(alerts)


def test_an_ha_pair_posts_once_and_a_late_firing_never_reopens_the_resolved_group(
        tmp_path: Path, slack: SlackStandIn, postgres_url: str) -> None:
    """Two Alertmanagers (an HA pair whose gossip is down) send every notification; a delayed firing arrives
    after the resolution. One root, one triage, and the group stays resolved."""
    with start_bot(slack, postgres_url) as bot, \
            start_alertmanager(tmp_path / "a", f"{bot.url}/alertmanager", WEBHOOK_TOKEN) as am_a, \
            start_alertmanager(tmp_path / "b", f"{bot.url}/alertmanager", WEBHOOK_TOKEN) as am_b:
        started = datetime.now(UTC) - timedelta(seconds=30)
        post_all([am_a, am_b], [firing(started)])
        wait_until(lambda: received(bot, "firing") >= 2, 20, "both Alertmanagers' notifications")
        assert bot.ctx.ingester.settled()
        wait_until(lambda: len(roots(slack, "C0OPS")) == 1 and all_sent(bot.ctx.engine), 20, "the root")
        with bot.ctx.engine.connect() as conn:
            late_firing = conn.execute(select(AlertGroup.last_payload)).scalar_one()
        assert late_firing["status"] == "firing"
        # The twin differs only in its externalURL: applied one after the other, the second is a repeat of the
        # first and is skipped (bot/webhook/repeat.py), stored once.
        assert count(bot, Alert) == 1

        post_all([am_a, am_b], [resolved(started, datetime.now(UTC))])
        root = roots(slack, "C0OPS")[0]
        wait_until(lambda: "RESOLVED" in root.text, 20, "the root edited to RESOLVED")
        wait_until(lambda: received(bot, "resolved") >= 2, 20, "both resolutions")
        assert bot.ctx.ingester.settled()
        assert count(bot, Alert, Alert.status == "resolved") == 1
        wait_until(lambda: all_sent(bot.ctx.engine), 20, "the outbox to drain")
        edits = len(root.edits)

        # The firing notification, delivered late (a retry through a slow proxy): stored, changes nothing.
        with httpx.Client(base_url=bot.url, timeout=10) as client:
            assert client.post("/alertmanager", json=late_firing, headers=bearer()).status_code == 200
        assert bot.ctx.ingester.settled()
        assert count(bot, Alert) == 3
        assert count(bot, AuditEntry, AuditEntry.action == "alert.duplicate") == 1  # the late firing, absorbed
        with bot.ctx.engine.connect() as conn:
            assert conn.execute(select(AlertGroup.status, AlertGroup.episode)).one() == ("resolved", 1)
            assert conn.scalar(select(Incident.status)) == "resolved"
        assert all_sent(bot.ctx.engine)
        assert [m.ts for m in roots(slack, "C0OPS")] == [root.ts] and "RESOLVED" in root.text
        assert len(root.edits) == edits
        assert len(slack.calls_to("chat.postMessage")) == sum(  # root, its note, and the report: nothing twice
            1 for c in slack.calls_to("chat.postMessage") if c.response.get("ok"))
        assert sum("Resolved" in m.text for m in replies(slack, root)) == 1
        assert count(bot, TriageRun) == 1


def test_a_group_that_fires_again_opens_a_new_episode_that_links_the_old_one(
        tmp_path: Path, slack: SlackStandIn, sqlite_url: str) -> None:
    with bot_and_alertmanager(tmp_path, slack, sqlite_url) as (bot, am):
        first = datetime.now(UTC) - timedelta(minutes=5)
        old = first_root(am, slack, first, "the first root")
        am.post_alerts([resolved(first, datetime.now(UTC) - timedelta(seconds=1))])
        wait_until(lambda: "RESOLVED" in old.text and all_sent(bot.ctx.engine), 20, "the first episode resolved")
        old_text, old_edits = old.text, len(old.edits)

        again = datetime.now(UTC)
        am.post_alerts([firing(again)])
        wait_until(lambda: len(roots(slack, "C0OPS")) == 2, 20, "a new root for the new episode")
        new = roots(slack, "C0OPS")[1]
        assert "FIRING" in new.text and "KubePodCrashLooping" in new.text
        # The new root links the old thread; the old thread keeps its resolved state.
        assert f"archives/C0OPS/p{old.ts.replace('.', '')}" in new.text and "episode 2" in new.text
        assert new.extra["metadata"]["event_type"] == "triagebot_alert_episode"
        assert new.extra["metadata"]["event_payload"]["episode"] == 2
        wait_until(lambda: any(m.blocks for m in replies(slack, new)), 30, "the new episode's triage report")
        wait_until(lambda: all_sent(bot.ctx.engine), 20, "the outbox to drain")
        assert (old.text, len(old.edits)) == (old_text, old_edits)
        assert sum(1 for m in replies(slack, old) if m.blocks) == 1  # the old report stays in the old thread
        # The old thread says, once, that the group fired again, and links the new root.
        assert [m.text for m in fired_again(slack, old)] == [
            m.text for m in fired_again(slack, old) if permalink_of(new) in m.text], replies(slack, old)
        assert len(fired_again(slack, old)) == 1, [m.text for m in replies(slack, old)]

        am.post_alerts([resolved(again, datetime.now(UTC))])
        wait_until(lambda: "RESOLVED" in new.text, 20, "the second episode resolved")
        wait_until(lambda: all_sent(bot.ctx.engine), 20, "the outbox to drain")
        assert "previous episode" in new.text  # the link survives the edit
        assert (old.text, len(old.edits)) == (old_text, old_edits)
        assert len(fired_again(slack, old)) == 1
        with bot.ctx.engine.connect() as conn:
            assert conn.execute(select(AlertGroup.status, AlertGroup.episode)).one() == ("resolved", 2)
            incidents = conn.execute(select(Incident.key, Incident.status).order_by(Incident.id)).all()
        assert [status for _, status in incidents] == ["resolved", "resolved"] and len({k for k, _ in incidents}) == 2
        assert count(bot, TriageRun) == 2  # one triage per episode
        # Each resolved root offers its own episode's postmortem, and each postmortem has its own episode's alerts.
        with bot.ctx.factory() as session:
            episodes = list(session.scalars(select(Incident).order_by(Incident.id)))
            assert [_postmortem_value(old), _postmortem_value(new)] == [str(i.id) for i in episodes]
            timelines = [build_postmortem(incident_rows(session, i)).timeline for i in episodes]
        for timeline in timelines:
            said = [e.what.split(":")[0] for e in timeline if e.what.startswith("Alert")]
            assert said == ["Alert fired", "Alert resolved"], [(e.at, e.what) for e in timeline]


def test_a_new_episode_is_posted_without_the_link_while_slack_refuses_permalinks(
        tmp_path: Path, sqlite_url: str) -> None:
    """The link to the previous episode is a nicety: a rate-limited chat.getPermalink neither holds the new root
    back nor makes the poster ask again for every retry (one call, then the budget waits out Retry-After)."""
    refuse = SlackFault("chat.getPermalink", error="ratelimited", retry_after=60)
    with SlackStandIn(channels=CHANNELS, faults=[refuse]) as slack, \
            bot_and_alertmanager(tmp_path, slack, sqlite_url) as (bot, am):
        first = datetime.now(UTC) - timedelta(minutes=5)
        old = first_root(am, slack, first, "the first root")
        am.post_alerts([resolved(first, datetime.now(UTC) - timedelta(seconds=1))])
        wait_until(lambda: "RESOLVED" in old.text and all_sent(bot.ctx.engine), 20, "the first episode resolved")
        am.post_alerts([firing(datetime.now(UTC))])
        wait_until(lambda: len(roots(slack, "C0OPS")) == 2, 20, "a new root for the new episode")
        new = roots(slack, "C0OPS")[1]
        assert "FIRING" in new.text and "previous episode" not in new.text
        assert new.extra["metadata"]["event_payload"]["episode"] == 2
        assert len(slack.calls_to("chat.getPermalink")) == 1


def _postmortem_value(root: Message) -> str:
    return next(e["value"] for b in root.blocks if b.get("type") == "actions" for e in b["elements"]
                if e["action_id"] == POSTMORTEM_ACTION)


def fired_again(slack: SlackStandIn, root: Message) -> list[Message]:
    """The notes in a root's thread saying that its group fired again."""
    return [m for m in replies(slack, root) if "Fired again" in m.text]


def permalink_of(message: Message) -> str:
    """The part of a message's permalink the stand-in and Slack share: archives/<channel>/p<ts digits>."""
    return f"archives/{message.channel}/p{message.ts.replace('.', '')}"


def test_a_60k_character_annotation_is_cut_and_sent_whole_as_a_file(
        tmp_path: Path, slack: SlackStandIn, sqlite_url: str) -> None:
    """Nothing is dropped for its size: the root is cut with a mark and the whole text is a file in its thread."""
    summary = "".join(f"line {n:05d}: container checkout restarted; " for n in range(1500))[:60_000]
    assert len(summary) == 60_000
    with bot_and_alertmanager(tmp_path, slack, sqlite_url) as (bot, am):
        am.post_alerts([{**firing(datetime.now(UTC)), "annotations": {"summary": summary}}])
        wait_until(lambda: len(roots(slack, "C0OPS")) == 1, 20, "the root")
        root = roots(slack, "C0OPS")[0]
        assert len(root.text) <= 3000 and "the full text is in the thread as a file" in root.text
        wait_until(lambda: any(f.name == "alert.txt" for f in slack.files), 20, "the full text as a file")
        whole = next(f for f in slack.files if f.name == "alert.txt")
        assert whole.thread_ts == root.ts and summary in whole.bytes.decode()
        wait_until(lambda: all_sent(bot.ctx.engine), 30, "the outbox to drain")
        assert count(bot, OutboxItem, OutboxItem.status == "dead") == 0


def test_a_report_slack_refuses_is_posted_again_as_plain_text(tmp_path: Path, slack: SlackStandIn,
                                                               sqlite_url: str) -> None:
    with bot_and_alertmanager(tmp_path, slack, sqlite_url) as (bot, am):
        am.post_alerts([firing(datetime.now(UTC))])
        wait_until(lambda: len(roots(slack, "C0OPS")) == 1 and all_sent(bot.ctx.engine), 20, "the root")
        root = roots(slack, "C0OPS")[0]
        # Slack refuses the next post's content (a report's blocks): the plain retry goes through.
        slack.set_faults([SlackFault("chat.postMessage", error="msg_blocks_too_long", times=1)])
        bot.ctx.jobs.submit(_request(bot, root.ts))  # the group re-triaged: its report replies in the thread
        wait_until(lambda: any("Triage" in m.text or "triage" in m.text for m in replies(slack, root)
                               if not m.blocks), 30, "the report as plain text")
        wait_until(lambda: all_sent(bot.ctx.engine), 30, "the outbox to drain")
        refused = [c for c in slack.calls_to("chat.postMessage") if c.response.get("error") == "msg_blocks_too_long"]
        assert len(refused) == 1
        assert count(bot, OutboxItem, OutboxItem.status == "dead") == 0
        assert any(f.name == "message.txt" for f in slack.files)  # the whole report, as a file


def _request(bot: RunningBot, root_ts: str) -> Any:
    from bot.keys import alert_root_key
    from bot.runner.jobs import TriageRequest
    from collectors.models import Target

    with bot.ctx.engine.connect() as conn:
        group_key = conn.scalar(select(AlertGroup.group_key))
    assert group_key is not None
    return TriageRequest(target=Target(namespace="shop", pod="checkout-0"), since=timedelta(minutes=30),
                         trigger="rerun", channel="C0OPS", key=f"manual:{root_ts}",
                         parent_key=alert_root_key(group_key, 1))


def verdict_in_blocks(message: Message) -> str | None:
    """The verdict line the root's blocks show, or None."""
    for block in message.blocks:
        text = (block.get("text") or {}).get("text", "")
        if text.startswith("*Verdict:* "):
            return str(text.removeprefix("*Verdict:* "))
    return None


def verdict_in_text(message: Message) -> str | None:
    """The verdict line the root's notification text carries, or None."""
    for line in message.text.splitlines():
        if line.startswith("Verdict: "):
            return line.removeprefix("Verdict: ")
    return None


def test_a_resolved_root_keeps_its_verdict_in_the_notification_text(
        tmp_path: Path, slack: SlackStandIn, sqlite_url: str) -> None:
    """Issue #13: text and blocks say the same thing after a status change (the verdict came first)."""
    with bot_and_alertmanager(tmp_path, slack, sqlite_url) as (bot, am):
        started = datetime.now(UTC) - timedelta(minutes=1)
        root = first_root(am, slack, started, "the root")
        wait_until(lambda: verdict_in_blocks(root) is not None, 30, "the verdict on the root")
        assert verdict_in_text(root) is not None
        am.post_alerts([resolved(started, datetime.now(UTC))])
        wait_until(lambda: "RESOLVED" in root.text and all_sent(bot.ctx.engine), 30, "the root edited to RESOLVED")
        assert "RESOLVED" in json.dumps(root.blocks)
        assert verdict_in_text(root) == verdict_in_blocks(root) is not None, (root.text, root.blocks)


def test_a_verdict_that_lands_after_the_resolution_keeps_the_root_resolved(
        slack: SlackStandIn, sqlite_url: str) -> None:
    """The triage finishes after the group resolved: the verdict is added to the resolved root, which must not
    go back to FIRING in its text or its blocks."""
    gate = threading.Event()

    def held_access() -> LiveAccess:
        assert gate.wait(60), "the test never released the triage"
        return LiveAccess(kube=None)

    with start_bot(slack, sqlite_url) as bot, httpx.Client(base_url=bot.url, timeout=10) as client:
        bot.ctx.jobs.access = held_access  # the triage waits until the resolution is shown
        started = datetime.now(UTC) - timedelta(minutes=1)
        body = webhook_body(LABELS, starts=started, fingerprint="c0ffee", annotations=SUMMARY)
        assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
        wait_until(lambda: len(roots(slack, "C0OPS")) == 1, 20, "the root")
        root = roots(slack, "C0OPS")[0]
        body = webhook_body(LABELS, status="resolved", starts=started, ends=datetime.now(UTC), fingerprint="c0ffee",
                            annotations=SUMMARY)
        assert client.post("/alertmanager", json=body, headers=bearer()).status_code == 200
        wait_until(lambda: "RESOLVED" in root.text and all_sent(bot.ctx.engine), 30, "the root edited to RESOLVED")
        gate.set()
        wait_until(lambda: verdict_in_blocks(root) is not None and all_sent(bot.ctx.engine), 30,
                   "the verdict on the resolved root")
        assert "RESOLVED" in root.text and "FIRING" not in root.text, root.text
        assert "RESOLVED" in json.dumps(root.blocks) and "FIRING" not in json.dumps(root.blocks)
        assert verdict_in_text(root) == verdict_in_blocks(root), (root.text, root.blocks)

