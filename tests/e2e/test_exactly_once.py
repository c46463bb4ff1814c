"""Two bot replicas (separate OS processes) sharing one real PostgreSQL and one Slack: every webhook is delivered
to both, as an Alertmanager HA pair does, and Slack still sees each post exactly once, also across an outage.

Each replica runs the whole server (`bot.server.create_app(build_context(...))` under uvicorn): webhook handler,
triage pool and outbox poster. They share nothing but the database, which is the point.
"""

from __future__ import annotations

import functools
import itertools
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine, func, select

from bot.store.db import make_engine
from bot.store.models import Alert, AlertGroup, Incident, OutboxItem, TriageRun
from tests.harness.bot_server import BotProcess, bearer, bot_processes, bot_values
from tests.harness.fixtures import postgres_server, postgres_url
from tests.standins.slack_api import Call, Message, SlackFault, SlackStandIn

__all__ = ["postgres_server", "postgres_url"]  # fixtures, re-exported for pytest

CHANNELS = ("C0OPS", "C0GPU")
ROUTES = [{"match": {"alertname": "~GPU.*"}, "channel": "C0GPU"}]
PERMISSIONS = {"channels": {c: ["*"] for c in CHANNELS}}
GROUPS = {"CheckoutDown": "C0OPS", "GPUXidError": "C0GPU"}
# The outbox paces each channel at one post per second; allow the jitter between claiming and Slack's clock.
MIN_GAP = 0.75


def wait_until(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.05)


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
                            permissions=PERMISSIONS)
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

                # Slack comes back rate-limiting: two 429s with Retry-After, then it answers.
                slack.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=1, times=2)])
                for channel in GROUPS.values():
                    wait_until(functools.partial(posted, slack, channel, 2), 20, f"root and report in {channel}")
                wait_until(lambda: all_sent(engine), 15, "the outbox to drain")

                # Resolve, with one more failure (a 500) on the update.
                slack.set_faults([SlackFault("chat.update", status=500, times=1)])
                for name in GROUPS:
                    deliver(bots, payload(name, "resolved"))
                wait_until(lambda: len(slack.calls_to("chat.update")) >= 3, 20, "both updates (one failed)")
                wait_until(lambda: all_sent(engine), 15, "the outbox to drain after the resolution")
            except AssertionError:
                for bot in bots:
                    print(f"--- {bot.log}\n{bot.log_text()}")
                raise

    for name, channel in GROUPS.items():
        top: list[Message] = slack.top_level(channel)
        assert len(top) == 1, [m.text for m in top]  # one root per group
        root = top[0]
        assert name in root.text and "RESOLVED" in root.text
        assert len(root.edits) == 1 and "FIRING" in root.edits[0]["text"]  # one update, of that root
        thread = [m for m in slack.thread(channel, root.ts) if m.ts != root.ts]
        reports = [m for m in thread if m.blocks]
        notes = [m for m in thread if not m.blocks]
        assert len(reports) == 1, [m.text for m in thread]  # one triage report
        assert [m.text.split()[1] for m in notes] == ["Resolved:"], [m.text for m in notes]
        posts = ok_calls(slack, "chat.postMessage", channel)
        assert len(posts) == 3  # root, report, resolved reply: nothing twice
        assert len(ok_calls(slack, "chat.update", channel)) == 1
        times = sorted(c.time for c in posts + ok_calls(slack, "chat.update", channel))
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= MIN_GAP, gaps  # paced per channel across both replicas

    assert sum(c.status == 429 for c in slack.calls) == 2  # only the injected ones: pacing never tripped Slack
    assert sum(c.status == 500 for c in slack.calls) == 1
    with engine.connect() as conn:
        # Both replicas stored every delivery (2 groups x 3 deliveries x 2 replicas), in one group row each.
        instances = conn.execute(select(Alert.receiver_instance, func.count()).group_by(Alert.receiver_instance))
        assert dict(instances.all()) == {"replica-a": 6, "replica-b": 6}
        assert conn.scalar(select(func.count()).select_from(AlertGroup)) == 2
        assert conn.scalar(select(func.count()).select_from(Incident)) == 2
        # A triage per group, maybe one per replica when both received the first payload at once; never more.
        assert 2 <= (conn.scalar(select(func.count()).select_from(TriageRun)) or 0) <= 4
    rows = outbox(engine)
    assert len(rows) == 8 and {status for _, status, _ in rows} == {"sent"}
    roots = [attempts for key, _, attempts in rows if key.endswith(":root")]
    assert all(a >= 2 for a in roots), rows  # the 503s were retried, not dropped
    engine.dispose()
