"""An alert storm against Slack's real rate limits. Usage: python -m benchmarks.bench_alert_storm [--backend ...]

1,000 alerts in 60 s over 50 groups routed to 3 channels (the load of bench_webhook: each webhook carries its
group's alerts so far plus a new one), then every group resolves (one webhook each, spread over 5 s). The bot is
its own process (the real server, triage pool and outbox poster); Slack is the stand-in, enforcing Slack's limits:
chat.postMessage 1 per second per channel (burst 3), chat.update 50 a minute per workspace (Tier 3), files 100 a
minute (Tier 4), 429 with Retry-After beyond them. No time is compressed.

Measured per group, on one clock: from its first webhook to its root message in Slack (found by the root's message
metadata), and from its resolving webhook to the first Slack call that shows it RESOLVED (the root's edit, or the
root itself if it was still queued). Budget (docs/architecture.md): roots p95 < 60 s, every resolve < 60 s.
Writes its part of docs/benchmarks.md ("Slack and webhooks").
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from benchmarks import doc
from benchmarks.bench_webhook import CHANNELS, TEAMS, Group, database, quantile, write_part
from bot.keys import group_id
from bot.store.db import make_engine
from bot.store.models import OutboxItem
from tests.harness.bot_server import bearer, bot_process, bot_values
from tests.standins.slack_api import Call, SlackStandIn

RESOLVE_SPREAD = 5.0  # seconds over which the 50 resolutions arrive

LOAD = [0.0]  # the 1-minute load average before the run (set by main)


@dataclass
class StormResult:
    backend: str
    root_latency: list[float]
    resolve_latency: list[float]
    missing_roots: int
    missing_resolves: int
    calls: dict[str, int]
    ratelimited: dict[str, int]
    top_level: dict[str, int]
    dead: int
    left: int


def resolved_body(group: Group) -> dict[str, Any]:
    ends = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    alerts = [{**a, "status": "resolved", "endsAt": ends} for a in group.alerts]
    body = group.add_alert(datetime.now(UTC))  # the shape of the group's webhook (labels, key)
    group.alerts.pop()
    return {**body, "status": "resolved", "alerts": alerts}


def send(url: str, alerts: int, seconds: float, groups: list[Group], workers: int) -> dict[str, float]:
    """Open loop like bench_webhook; returns when each group's first webhook left (epoch seconds)."""
    started = datetime.now(UTC).replace(microsecond=0)
    bodies = [(g, groups[g].add_alert(started)) for g in (i % len(groups) for i in range(alerts))]
    first: dict[str, float] = {}
    lock = threading.Lock()
    local = threading.local()
    t0 = time.perf_counter() + 0.5

    def one(i: int) -> None:
        client: httpx.Client | None = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=url, timeout=30.0, headers=bearer())
        delay = t0 + i * seconds / alerts - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        g, body = bodies[i]
        with lock:
            first.setdefault(groups[g].key, time.time())
        response = client.post("/alertmanager", json=body)
        if response.status_code != 200:
            raise RuntimeError(f"webhook answered {response.status_code}: {response.text[:200]}")

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(alerts)))
    return first


def resolve_all(url: str, groups: list[Group]) -> dict[str, float]:
    sent: dict[str, float] = {}
    with httpx.Client(base_url=url, timeout=30.0, headers=bearer()) as client:
        for group in groups:
            body = resolved_body(group)
            sent[group.key] = time.time()
            response = client.post("/alertmanager", json=body)
            if response.status_code != 200:
                raise RuntimeError(f"webhook answered {response.status_code}")
            time.sleep(RESOLVE_SPREAD / len(groups))
    return sent


def _metadata(call: Call) -> dict[str, Any]:
    meta = call.params.get("metadata")
    return meta if isinstance(meta, dict) else {}


def measure(slack: SlackStandIn, first: dict[str, float], resolved_at: dict[str, float]) -> tuple[
        list[float], list[float], int, int]:
    roots: dict[str, Call] = {}
    ts_of: dict[str, str] = {}
    for call in slack.calls_to("chat.postMessage"):
        meta = _metadata(call)
        if call.response.get("ok") and meta.get("event_type") == "triagebot_alert_episode":
            gid = str(meta["event_payload"]["group"])
            roots.setdefault(gid, call)
            ts_of[gid] = str(call.response["ts"])
    root_latency, resolve_latency = [], []
    missing_roots = missing_resolves = 0
    updates = [c for c in slack.calls_to("chat.update") if c.response.get("ok")]
    for key, began in first.items():
        gid = group_id(key)
        root = roots.get(gid)
        if root is None:
            missing_roots += 1
            continue
        root_latency.append(root.time - began)
        at = resolved_at[key]
        shown = [c.time for c in updates if c.params.get("ts") == ts_of[gid] and "RESOLVED" in
                 str(c.params.get("text", "")) and c.time >= at]
        if "RESOLVED" in str(root.params.get("text", "")):
            shown.append(root.time)
        if shown:
            resolve_latency.append(min(shown) - at)
        else:
            missing_resolves += 1
    return root_latency, resolve_latency, missing_roots, missing_resolves


def run(backend: str, alerts: int, seconds: float, groups: int, tail: float, workers: int) -> StormResult:
    with tempfile.TemporaryDirectory(prefix="bench-storm-") as tmp, database(backend, Path(tmp)) as url, \
            SlackStandIn(channels=CHANNELS) as slack:
        values = bot_values(
            slack_api_url=slack.api_url, database_url=url, default_channel=CHANNELS[2],
            routes=[{"match": {"team": "a"}, "channel": CHANNELS[0]}, {"match": {"team": "b"}, "channel": CHANNELS[1]}],
            permissions={"channels": {c: ["*"] for c in CHANNELS}})
        plan = [Group(g, TEAMS[g % len(TEAMS)]) for g in range(groups)]
        with bot_process(values, Path(tmp), "storm-bot") as bot:
            first = send(bot.url, alerts, seconds, plan, workers)
            resolved_at = resolve_all(bot.url, plan)
            deadline = time.monotonic() + tail
            engine = make_engine(url)
            while time.monotonic() < deadline:
                with engine.connect() as conn:
                    left = int(conn.scalar(select(func.count()).select_from(OutboxItem)
                                           .where(OutboxItem.status != "sent")) or 0)
                if not left:
                    break
                time.sleep(1.0)
            with engine.connect() as conn:
                left = int(conn.scalar(select(func.count()).select_from(OutboxItem)
                                       .where(OutboxItem.status != "sent")) or 0)
                dead = int(conn.scalar(select(func.count()).select_from(OutboxItem)
                                       .where(OutboxItem.status == "dead")) or 0)
            engine.dispose()
        roots, resolves, missing_roots, missing_resolves = measure(slack, first, resolved_at)
        calls: dict[str, int] = {}
        limited: dict[str, int] = {}
        for call in slack.calls:
            calls[call.method] = calls.get(call.method, 0) + 1
            if call.status == 429:
                limited[call.method] = limited.get(call.method, 0) + 1
        top = {c: len(slack.top_level(c)) for c in CHANNELS}
    return StormResult(backend, roots, resolves, missing_roots, missing_resolves, calls, limited, top, dead, left)


def report(results: list[StormResult], alerts: int, seconds: float, groups: int) -> str:
    lines = ["### Alert storm against Slack's rate limits (`python -m benchmarks.bench_alert_storm`)", "",
             f"Machine: {doc.machine()}, load average {LOAD[0]:.1f} from other work "
             f"when it started. Load: {alerts} alerts in {seconds:.0f} s over {groups} groups and "
             f"{len(CHANNELS)} channels (each webhook carries its group's alerts so far), then every group resolves "
             f"within {RESOLVE_SPREAD:.0f} s; the Slack stand-in enforces 1 post/s/channel, chat.update 50/min, "
             "files 100/min, with 429 + Retry-After. No time is compressed; the bot is one process.", "",
             "| backend | budget | root in Slack after the group's first webhook | RESOLVED shown after the "
             "resolving webhook | Slack calls | top-level messages per channel | outbox at the end |",
             "|---|---|---|---|---|---|---|"]
    for r in results:
        calls = ", ".join(f"{m} {n}" for m, n in sorted(r.calls.items()))
        limited = ", ".join(f"{m} {n}" for m, n in sorted(r.ratelimited.items())) or "none"
        lines.append(
            f"| {r.backend} | roots p95 < 60 s; every resolve < 60 s | "
            f"{len(r.root_latency)}/{len(r.root_latency) + r.missing_roots} roots: "
            f"p50 {statistics.median(r.root_latency):.1f} s, p95 {quantile(r.root_latency, 95):.1f} s, "
            f"max {max(r.root_latency):.1f} s | "
            f"{len(r.resolve_latency)}/{len(r.resolve_latency) + r.missing_resolves} resolves: "
            f"p50 {statistics.median(r.resolve_latency):.1f} s, p95 {quantile(r.resolve_latency, 95):.1f} s, "
            f"max {max(r.resolve_latency):.1f} s | {calls}; HTTP 429: {limited} | "
            f"{', '.join(str(n) for n in r.top_level.values())} | {r.left} not sent, {r.dead} dead |")
    lines += ["", "The roots of a channel's groups are threaded under one roll-up message once 5 groups start there "
              "within a minute, so a channel shows a handful of top-level messages, not one per group. Roots and "
              "status changes go before reports; a root's edits collapse to its latest state and share the "
              "workspace's chat.update budget (50 a minute, a burst of 10; content refreshes leave 4 of the burst "
              "for status changes). That budget is the floor for the resolutions: 50 edits of 50 roots take at "
              "least (50 - 10) x 1.2 s = 48 s after the burst, wherever they are queued."]
    return "\n".join(lines)


def main() -> None:
    parser = doc.storm_options(__doc__, backend="sqlite", alerts=1000, seconds=60.0, groups=50, tail=120.0,
                               tail_help="seconds to wait for the outbox to drain")
    parser.add_argument("--workers", type=int, default=16)
    args = parser.parse_args()
    LOAD[0] = os.getloadavg()[0]  # a shared machine: say how busy it was
    results = [run(b, args.alerts, args.seconds, args.groups, args.tail, args.workers)
               for b in doc.backends(args.backend)]
    text = report(results, args.alerts, args.seconds, args.groups)
    sys.stdout.write(text + "\n")
    if not args.no_write:
        write_part("storm", text)


if __name__ == "__main__":
    main()
