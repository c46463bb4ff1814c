"""Two bot replicas (separate OS processes) sharing one real PostgreSQL and one Slack: every webhook is delivered
to both, as an Alertmanager HA pair does, and Slack still sees each post exactly once, also across an outage.

Each replica runs the whole server (`bot.server.create_app(build_context(...))` under uvicorn): webhook handler,
triage pool and outbox poster. They share nothing but the database, which is the point.
"""

from __future__ import annotations

import functools
import itertools
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, func, select

from bot.store.db import make_engine
from bot.store.models import Alert, AlertGroup, Incident, OutboxItem, TriageRun
from tests.harness.bot_server import (
    BotProcess,
    bearer,
    bot_processes,
    bot_values,
    start_bot_process,
    stop_bot_process,
    stopped_after,
)
from tests.harness.processes import wait_until
from tests.standins.slack_api import Call, Message, SlackFault, SlackStandIn

CHANNELS = ("C0OPS", "C0GPU")
ROUTES = [{"match": {"alertname": "~GPU.*"}, "channel": "C0GPU"}]
PERMISSIONS = {"channels": {c: ["*"] for c in CHANNELS}}
GROUPS = {"CheckoutDown": "C0OPS", "GPUXidError": "C0GPU"}
# The outbox paces each channel at one post per second; allow the jitter between claiming and Slack's clock.
MIN_GAP = 0.75
# A short Slack timeout lets a short lease run out soon after a kill or a 5xx; the answers the tests hold back
# (2.5 s) stay within it.
SLACK_TIMEOUT = 4
LEASE = 5.0


def payload(alertname: str, status: str) -> dict[str, Any]:
    labels = {"alertname": alertname, "namespace": "shop", "pod": "checkout-0", "node": "gpu-node-2",
              "severity": "critical"}
    alert = {"status": status, "labels": labels, "annotations": {"summary": f"{alertname} in shop"},
             "startsAt": "2026-11-22T06:05:46.501Z",
             "endsAt": "2026-11-22T06:09:46.501Z" if status == "resolved" else "0001-01-01T00:00:00Z",
             "generatorURL": "http://127.0.0.1:9090/graph", "fingerprint": f"fp-{alertname.lower()}"}
    return {"receiver": "bot", "status": status, "alerts": [alert], "groupLabels": {"alertname": alertname},
            "commonLabels": labels, "commonAnnotations": alert["annotations"], "externalURL": "http://am:9093",
            "version": "4", "groupKey": f'{{}}:{{alertname="{alertname}"}}', "truncatedAlerts": 0}


def deliver(bots: Sequence[BotProcess], body: dict[str, Any]) -> None:
    """The same body to every replica at the same moment; each must store it (200)."""
    start = threading.Barrier(len(bots))

    def post(bot: BotProcess) -> int:
        with httpx.Client(base_url=bot.url, timeout=10.0) as client:
            start.wait()
            return client.post("/alertmanager", json=body, headers=bearer()).status_code

    with ThreadPoolExecutor(len(bots)) as pool:
        codes = list(pool.map(post, bots))
    assert codes == [200] * len(bots), codes


def outbox(engine: Engine) -> list[tuple[str, str, int]]:
    with engine.connect() as conn:
        rows = conn.execute(select(OutboxItem.idempotency_key, OutboxItem.status, OutboxItem.attempts))
        return [(key, status, attempts) for key, status, attempts in rows]


def all_sent(engine: Engine) -> bool:
    rows = outbox(engine)
    assert not [r for r in rows if r[1] == "dead"], rows
    return bool(rows) and all(status == "sent" for _, status, _ in rows)


def posted(slack: SlackStandIn, channel: str, count: int) -> bool:
    return len(slack.messages[channel]) >= count


def ok_calls(slack: SlackStandIn, method: str, channel: str) -> list[Call]:
    return [c for c in slack.calls_to(method) if c.response.get("ok") and c.params.get("channel") == channel]


def test_two_replicas_post_once_per_group_through_a_slack_outage(tmp_path: Path, postgres_url: str) -> None:
    engine = make_engine(postgres_url)
    # Slack is down from the start: 503 pages from a load balancer, for every method.
    with SlackStandIn(channels=CHANNELS, faults=[SlackFault("*", status=503)]) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=postgres_url, routes=ROUTES,
                            permissions=PERMISSIONS, outbox_lease=LEASE, slack_timeout=SLACK_TIMEOUT)
        with bot_processes(values, tmp_path, ["replica-a", "replica-b"]) as bots:
            try:
                for name in GROUPS:
                    deliver(bots, payload(name, "firing"))
                    deliver(bots, payload(name, "firing"))  # a repeat, again to both
                # Everything is stored and queued; the posters keep failing and back off.
                wait_until(lambda: sum(c.status == 503 for c in slack.calls) >= 4, 10, "posters retrying")
                assert all(not slack.messages[c] for c in CHANNELS)
                assert all(status in ("failed", "sending") for key, status, _ in outbox(engine)
                           if key.endswith(":root"))

                # Slack comes back rate-limiting: two 429s with Retry-After, then it answers. The posters may be
                # deep in their backoff by then (longer on a loaded machine): the deadlines allow for it.
                slack.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=1, times=2)])
                for channel in GROUPS.values():
                    wait_until(functools.partial(posted, slack, channel, 2), 60, f"root and report in {channel}")
                wait_until(lambda: all_sent(engine), 45, "the outbox to drain")

                # Resolve, with one more failure (a 500) on the update.
                slack.set_faults([SlackFault("chat.update", status=500, times=1)])
                for name in GROUPS:
                    deliver(bots, payload(name, "resolved"))
                wait_until(lambda: len(slack.calls_to("chat.update")) >= 5, 60,
                           "both verdicts and both resolutions (one failed once)")
                wait_until(lambda: all_sent(engine), 45, "the outbox to drain after the resolution")
            except AssertionError:
                for bot in bots:
                    print(f"--- {bot.log}\n{bot.log_text()}")
                raise

    for name, channel in GROUPS.items():
        top: list[Message] = slack.top_level(channel)
        assert len(top) == 1, [m.text for m in top]  # one root per group
        root = top[0]
        assert name in root.text and "RESOLVED" in root.text
        # Two updates, of that root: the triage's verdict, then the resolution (which keeps the verdict).
        assert len(root.edits) == 2 and all("FIRING" in e["text"] for e in root.edits)
        assert "Verdict:" in root.edits[1]["text"] and "*Verdict:*" in json.dumps(root.blocks)
        thread = [m for m in slack.thread(channel, root.ts) if m.ts != root.ts]
        reports = [m for m in thread if m.blocks]
        notes = [m for m in thread if not m.blocks]
        assert len(reports) == 1, [m.text for m in thread]  # one triage report
        assert [m.text.split()[0] for m in notes] == ["Resolved:"], [m.text for m in notes]
        assert name in notes[0].text and "RESOLVED" in notes[0].text
        posts = ok_calls(slack, "chat.postMessage", channel)
        assert len(posts) == 3  # root, report, resolved reply: nothing twice
        assert len(ok_calls(slack, "chat.update", channel)) == 2  # the verdict, then the resolution
        # Posts are paced per channel across both replicas (edits are not posts: their budget is the workspace's).
        times = sorted(c.time for c in posts)
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= MIN_GAP, gaps

    assert sum(c.status == 429 for c in slack.calls) == 2  # only the injected ones: pacing never tripped Slack
    assert sum(c.status == 500 for c in slack.calls) == 1
    with engine.connect() as conn:
        # Each notification was stored (2 groups x 2 notifications, by one replica or both when they raced);
        # the repeat changed nothing and was answered with one read by both (bot.webhook.repeat).
        instances = conn.execute(select(Alert.receiver_instance, func.count()).group_by(Alert.receiver_instance))
        assert 4 <= sum(dict(instances.all()).values()) <= 8
        assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 2
        assert conn.scalar(select(func.count()).select_from(Incident)) == 2
        # A triage per group, maybe one per replica when both received the first payload at once; never more.
        assert 2 <= (conn.scalar(select(func.count()).select_from(TriageRun)) or 0) <= 4
    rows = outbox(engine)
    # Per group: root, report, verdict, status update, resolved note.
    assert len(rows) == 10 and {status for _, status, _ in rows} == {"sent"}
    roots = [attempts for key, _, attempts in rows if key.endswith(":root")]
    assert all(a >= 2 for a in roots), rows  # the 503s were retried, not dropped
    engine.dispose()


# --------------------------------------------------------------------------------------------------------------
# kill -9 during a storm
# --------------------------------------------------------------------------------------------------------------

KILL_GROUPS = 12
KILLS = 4


def storm_plan(started: datetime) -> list[dict[str, Any]]:
    """Each group fires with one alert, then two, then (even groups) both resolve: 36 notifications, interleaved."""
    def body(group: int, alerts: list[dict[str, Any]], status: str) -> dict[str, Any]:
        name = f"StormAlert{group:02d}"
        common = {"alertname": name, "namespace": "shop", "severity": "warning"}
        return {"receiver": "bot", "status": status, "alerts": alerts, "groupLabels": {"alertname": name},
                "commonLabels": common, "commonAnnotations": {}, "externalURL": "http://am:9093", "version": "4",
                "groupKey": f'{{}}:{{alertname="{name}"}}', "truncatedAlerts": 0}

    def alert(group: int, n: int, status: str) -> dict[str, Any]:
        starts = started + timedelta(seconds=n)
        return {"status": status, "labels": {"alertname": f"StormAlert{group:02d}", "namespace": "shop",
                                             "pod": f"web-{group}-{n}", "severity": "warning"},
                "annotations": {"summary": f"web-{group}-{n} is down"}, "startsAt": starts.isoformat(),
                "endsAt": (starts + timedelta(minutes=5)).isoformat() if status == "resolved"
                else "0001-01-01T00:00:00Z", "generatorURL": "http://prom/graph",
                "fingerprint": f"{group:04x}{n:04x}00000000"}

    steps: list[list[dict[str, Any]]] = [[], [], []]
    for g in range(KILL_GROUPS):
        steps[0].append(body(g, [alert(g, 0, "firing")], "firing"))
        steps[1].append(body(g, [alert(g, 0, "firing"), alert(g, 1, "firing")], "firing"))
        if g % 2 == 0:
            steps[2].append(body(g, [alert(g, 0, "resolved"), alert(g, 1, "resolved")], "resolved"))
    return [b for step in steps for b in step]


class Sender:
    """Alertmanager's side: every notification is retried until some bot process answers 200."""

    def __init__(self, bodies: list[dict[str, Any]]) -> None:
        self.bodies = bodies
        self.url = ""
        self.delivered = 0
        self.retries = 0
        self.done = threading.Event()

    def run(self) -> None:
        with httpx.Client(timeout=5.0) as client:
            for body in self.bodies:
                while True:
                    try:
                        if client.post(f"{self.url}/alertmanager", json=body, headers=bearer()).status_code == 200:
                            break
                    except httpx.TransportError:
                        pass
                    self.retries += 1
                    time.sleep(0.1)
                self.delivered += 1
                time.sleep(random.uniform(0.05, 0.3))
        self.done.set()


def test_kill_9_during_a_storm_posts_every_root_once_and_loses_nothing(tmp_path: Path, postgres_url: str) -> None:
    """The bot process is killed (SIGKILL) several times while a storm comes in, once for sure in the window
    between Slack taking a post and the outbox recording it; a fresh process takes over each time."""
    rng = random.Random()
    started = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    bodies = storm_plan(started)
    engine = make_engine(postgres_url)
    # Every post is answered 0.4 s after Slack stored it: a wide window to die in.
    with SlackStandIn(channels=("C0OPS",), faults=[SlackFault("chat.postMessage", delay_after=0.4)]) as slack:
        values = bot_values(slack_api_url=slack.api_url, database_url=postgres_url, permissions={"channels": {
            "C0OPS": ["*"]}}, outbox_lease=LEASE, slack_timeout=SLACK_TIMEOUT)
        bot = start_bot_process(values, tmp_path, "bot-0")
        sender = Sender(bodies)
        sender.url = bot.url
        feeder = threading.Thread(target=sender.run, daemon=True)
        feeder.start()
        windows = set(rng.sample(range(KILLS), 2))  # these kills wait for a post in flight; the others are random
        with stopped_after(lambda: bot):
            for n in range(KILLS):
                if n in windows:
                    wait_until(lambda: slack.answering > 0, 60, "a post Slack took but has not answered")
                else:
                    time.sleep(rng.uniform(0.2, 2.5))
                bot.process.kill()  # SIGKILL: no clean-up of any kind
                bot.process.wait()
                bot = start_bot_process(values, tmp_path, f"bot-{n + 1}")
                sender.url = bot.url
            assert sender.done.wait(120), f"delivered {sender.delivered} of {len(bodies)}"
            wait_until(lambda: drained(engine), 150, "the outbox to drain")

        posts = [m for c in slack.messages.values() for m in c if m.extra.get("metadata")]
        by_key = Counter(m.extra["metadata"]["event_payload"]["outbox_key"] for m in posts)
        assert [k for k, n in by_key.items() if n > 1] == []  # no message posted twice
        roots = [m for m in posts if m.extra["metadata"]["event_type"] == "triagebot_alert_episode"]
        groups = Counter(m.extra["metadata"]["event_payload"]["group"] for m in roots)
        assert len(groups) == KILL_GROUPS and set(groups.values()) == {1}  # one root per group, 0 duplicates
        with engine.connect() as conn:
            fingerprints = set(conn.scalars(select(Alert.fingerprint)))
            states = dict(conn.execute(select(AlertGroup.group_key, AlertGroup.status)).all())
            recovered = [r for r in conn.scalars(select(OutboxItem.result)) if r and r.get("recovered")]
        sent = {a["fingerprint"] for b in bodies for a in b["alerts"]}
        assert sent <= fingerprints  # 0 lost alerts
        for m in roots:  # every root shows its group's final state
            name = next(n for n in (f"StormAlert{g:02d}" for g in range(KILL_GROUPS)) if n in m.text)
            final = states[f'{{}}:{{alertname="{name}"}}']
            assert final == ("resolved" if int(name[-2:]) % 2 == 0 else "firing")
            assert (f"{final.upper()}:2" in m.text), (name, m.text)
        # The kills in the window left posts that Slack had taken: found by their metadata, not posted again.
        assert recovered, "no post was recovered from Slack's history"
        assert slack.calls_to("conversations.history") or slack.calls_to("conversations.replies")
    engine.dispose()


def drained(engine: Engine) -> bool:
    rows = outbox(engine)
    assert not [r for r in rows if r[1] == "dead"], rows
    return bool(rows) and all(status == "sent" for _, status, _ in rows)


# --------------------------------------------------------------------------------------------------------------
# kill -9 while a thread note is in flight
# --------------------------------------------------------------------------------------------------------------


def killed_and_restarted(bot: BotProcess, values: dict[str, Any], tmp_path: Path, slack: SlackStandIn,
                         engine: Engine) -> BotProcess:
    """kill -9 the bot (Slack holding an answer back), lift Slack's faults, start the next bot, wait for the
    outbox to drain; the next bot, to stop in the caller's `finally`."""
    bot.process.kill()
    bot.process.wait()
    slack.set_faults([])
    bot = start_bot_process(values, tmp_path, "bot-1")
    try:
        wait_until(lambda: drained(engine), 90, "the outbox to drain after the restart")
    except AssertionError:
        print(f"--- {bot.log}\n{bot.log_text()}")
        stop_bot_process(bot)
        raise
    return bot


def episode_body(status: str, starts: datetime, ends: datetime | None = None) -> dict[str, Any]:
    """CheckoutDown (one alert) starting at `starts`: a later `starts` is a new firing episode."""
    body = payload("CheckoutDown", status)
    alert = {**body["alerts"][0], "startsAt": starts.isoformat(),
             "endsAt": ends.isoformat() if ends else "0001-01-01T00:00:00Z"}
    return {**body, "alerts": [alert]}


def test_kill_9_while_the_fired_again_note_is_in_flight_posts_it_once(tmp_path: Path, sqlite_url: str) -> None:
    """A group fires, resolves and fires again: the old thread gets one note linking the new root, also when the
    bot is killed after Slack took that note and before the outbox recorded it."""
    engine = make_engine(sqlite_url)
    first = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    with SlackStandIn(channels=("C0OPS",)) as slack, httpx.Client(timeout=10.0) as client:
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, outbox_lease=LEASE,
                            slack_timeout=SLACK_TIMEOUT,
                            permissions={"channels": {"C0OPS": ["*"]}}, triage_workers=0)
        bot = start_bot_process(values, tmp_path, "bot-0")
        with stopped_after(lambda: bot):
            def deliver_one(body: dict[str, Any]) -> None:
                assert client.post(f"{bot.url}/alertmanager", json=body, headers=bearer()).status_code == 200

            deliver_one(episode_body("firing", first))
            wait_until(lambda: len(slack.top_level("C0OPS")) == 1 and drained(engine), 60, "the first episode")
            old = slack.top_level("C0OPS")[0]
            deliver_one(episode_body("resolved", first, first + timedelta(minutes=5)))
            wait_until(lambda: "RESOLVED" in old.text and drained(engine), 60, "the first episode resolved")

            def note_in_flight() -> bool:
                noted = any("Fired again" in m.text for m in slack.thread("C0OPS", old.ts))
                return noted and slack.answering > 0

            # Every post now answers late; the bot dies once Slack holds the note and has not answered.
            slack.set_faults([SlackFault("chat.postMessage", delay_after=2.5)])
            deliver_one(episode_body("firing", datetime.now(UTC).replace(microsecond=0)))
            wait_until(note_in_flight, 60, "the fired-again note taken by Slack, its answer held back")
            bot = killed_and_restarted(bot, values, tmp_path, slack, engine)

    new = [m for m in slack.top_level("C0OPS") if m.ts != old.ts]
    assert len(new) == 1 and "episode 2" in new[0].text
    notes = [m for m in slack.thread("C0OPS", old.ts) if "Fired again" in m.text]
    assert len(notes) == 1, [m.text for m in notes]
    assert f"archives/C0OPS/p{new[0].ts.replace('.', '')}" in notes[0].text
    with engine.connect() as conn:
        row = conn.execute(select(OutboxItem.result).where(OutboxItem.idempotency_key.endswith(":fired-again")))
        results = [r for (r,) in row]
    assert len(results) == 1 and results[0].get("recovered"), results  # found in the thread, not posted again
    engine.dispose()


def test_kill_9_while_a_file_upload_is_in_flight_uploads_it_once(tmp_path: Path, sqlite_url: str) -> None:
    """A root too long for Slack is cut and its whole text goes into the thread as alert.txt; the bot is killed
    after Slack shared the file and before the outbox recorded it. After the restart the file is found in the
    thread, not uploaded again."""
    engine = make_engine(sqlite_url)
    body = payload("CheckoutDown", "firing")
    summary = "".join(f"line {n:05d}: checkout restarted; " for n in range(400))
    body["commonAnnotations"] = body["alerts"][0]["annotations"] = {"summary": summary}
    # Sharing the file is answered late: the window to die in.
    with SlackStandIn(channels=("C0OPS",), faults=[SlackFault("files.completeUploadExternal", delay_after=2.5)]) \
            as slack, httpx.Client(timeout=10.0) as client:
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, outbox_lease=LEASE,
                            slack_timeout=SLACK_TIMEOUT,
                            permissions={"channels": {"C0OPS": ["*"]}}, triage_workers=0)
        bot = start_bot_process(values, tmp_path, "bot-0")
        with stopped_after(lambda: bot):
            assert client.post(f"{bot.url}/alertmanager", json=body, headers=bearer()).status_code == 200

            def shared_not_answered() -> bool:
                return any(f.name == "alert.txt" for f in slack.files) and slack.answering > 0

            wait_until(shared_not_answered, 60, "alert.txt shared by Slack, its answer held back")
            bot = killed_and_restarted(bot, values, tmp_path, slack, engine)

    (root,) = slack.top_level("C0OPS")
    files = [f for f in slack.files if f.name == "alert.txt"]
    assert len(files) == 1, [(f.id, f.thread_ts) for f in files]  # shared once
    assert files[0].thread_ts == root.ts and summary.strip() in files[0].bytes.decode()
    shares = [m for m in slack.thread("C0OPS", root.ts) if m.file_ids]
    assert [m.file_ids for m in shares].count([files[0].id]) == 1
    with engine.connect() as conn:
        result = conn.scalar(select(OutboxItem.result).where(OutboxItem.idempotency_key.endswith(":root:full")))
    assert result is not None and result.get("recovered") and result["file_id"] == files[0].id, result
    engine.dispose()
