"""1,000 alerts in 60 s into a running bot. Usage: python -m benchmarks.bench_webhook [--backend sqlite|postgresql|both]

The bot runs as its own process (tests/harness/bot_launcher.py: the real server, triage pool and outbox poster)
so its RSS is its own. Alerts arrive the way Alertmanager sends them: ~50 groups routed by a label to 3 Slack
channels, each webhook carrying all of its group's alerts so far plus one new one, open loop on a fixed schedule
(a slow answer does not slow the sender down). Each group's first webhook posts its root (threaded under a
storm roll-up: 50 groups in a minute are a storm) and asks for a triage (no cluster here, so each triage reports
its sources missing and posts a short report); later webhooks edit the root, collapsed to the latest state.

Measured: every alert stored (rows counted), webhook latency at the client, Slack posts per second per channel as
the Slack stand-in saw them (it enforces Slack's ~1/s/channel with 429s), and the bot's RSS. The run stops a fixed
`--tail` seconds after the last webhook; posts still queued then are reported, not waited for.
bench_alert_storm measures how soon each root and each resolution reaches Slack.
Prints a markdown block and writes it into docs/benchmarks.md, section "Slack and webhooks".
"""

from __future__ import annotations

import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import func, select

from benchmarks import doc
from bot.store.db import make_engine
from bot.store.models import Alert, AlertGroup, OutboxItem
from tests.harness.bot_server import BotProcess, bearer, bot_process, bot_values
from tests.standins.slack_api import SlackStandIn

SECTION = "slack"
SECTION_TITLE = "Slack and webhooks"
CHANNELS = ("C0BENCHA", "C0BENCHB", "C0BENCHC")
TEAMS = ("a", "b", "c")  # routed by the `team` label; team c falls through to the default channel
# Slack's one-per-second-per-channel limit is for posts; edits have a per-workspace budget of their own.
POSTING_METHODS = ("chat.postMessage",)


# --------------------------------------------------------------------------------------------------------------
# docs/benchmarks.md: one section (benchmarks/doc.py) shared by this benchmark and bench_slash_ack, each owning a
# marked part of it, so running one keeps the other's numbers
# --------------------------------------------------------------------------------------------------------------


def write_part(part: str, body: str) -> None:
    """Replace (or append) the part `part` of the "Slack and webhooks" section; nothing else in the file changes."""
    text = doc.DOC.read_text(encoding="utf-8") if doc.DOC.exists() else ""
    start, end = f"<!-- section:{SECTION} -->", f"<!-- /section:{SECTION} -->"
    current = ""
    if start in text and end in text:
        current = text.split(start, 1)[1].split(end, 1)[0].strip()
        current = current.split("\n", 1)[1].strip() if current.startswith("## ") and "\n" in current else ""
    begin, finish = f"<!-- part:{part} -->", f"<!-- /part:{part} -->"
    block = f"{begin}\n{body.strip()}\n{finish}"
    current = doc.replaced(current, begin, finish, block) or (current + "\n\n" + block).strip()
    doc.write_section(SECTION, SECTION_TITLE, current)


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


# --------------------------------------------------------------------------------------------------------------
# The load
# --------------------------------------------------------------------------------------------------------------

LOAD = [0.0]  # the 1-minute load average before the run (set by main)


@dataclass
class Group:
    index: int
    team: str
    alerts: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return f'{{}}:{{alertname="BenchAlert{self.index:02d}", team="{self.team}"}}'

    def add_alert(self, started: datetime) -> dict[str, Any]:
        """The next alert of this group, and the webhook body Alertmanager would send now (all alerts so far)."""
        n = len(self.alerts)
        labels = {"alertname": f"BenchAlert{self.index:02d}", "team": self.team, "namespace": "shop",
                  "deployment": f"checkout-{self.index}", "pod": f"checkout-{self.index}-{n}", "severity": "warning"}
        self.alerts.append({
            "status": "firing", "labels": labels, "annotations": {"summary": f"checkout-{self.index}-{n} is slow"},
            "startsAt": (started + timedelta(seconds=n)).isoformat().replace("+00:00", "Z"),
            "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://127.0.0.1:9090/graph",
            "fingerprint": f"{self.index:04x}{n:04x}{'0' * 8}",
        })
        # Alertmanager's commonLabels: what all alerts of the group share, here the workload they are about.
        common = {k: v for k, v in labels.items() if k != "pod"}
        return {"receiver": "bot", "status": "firing", "alerts": list(self.alerts),
                "groupLabels": {"alertname": labels["alertname"], "team": self.team}, "commonLabels": common,
                "commonAnnotations": {}, "externalURL": "http://127.0.0.1:9093", "version": "4",
                "groupKey": self.key, "truncatedAlerts": 0}


@dataclass
class Result:
    backend: str
    alerts: int
    seconds: float
    latencies_ms: list[float]
    statuses: dict[int, int]
    lag_ms: float
    stored_alerts: int
    stored_fingerprints: int
    expected_rows: int
    groups: int
    posts: dict[str, list[float]]
    ratelimited: int
    queued_left: int
    peak_rss: int
    rss_samples: list[int]


def send_all(bot: BotProcess, alerts: int, seconds: float, groups: int, workers: int) -> tuple[list[float],
                                                                                                 dict[int, int], float]:
    """Open loop: webhook i leaves at i * seconds / alerts, whatever happened to the ones before."""
    started = datetime.now(UTC).replace(microsecond=0)
    plan = [Group(g, TEAMS[g % len(TEAMS)]) for g in range(groups)]
    bodies = [plan[i % groups].add_alert(started) for i in range(alerts)]  # built up front: not timed
    latencies: list[float] = [0.0] * alerts
    statuses: list[int] = [0] * alerts
    lag = [0.0] * alerts
    local = threading.local()
    t0 = time.perf_counter() + 0.5

    def one(i: int) -> None:
        client: httpx.Client | None = getattr(local, "client", None)
        if client is None:
            client = local.client = httpx.Client(base_url=bot.url, timeout=30.0, headers=bearer())
        due = t0 + i * seconds / alerts
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        lag[i] = max(0.0, time.perf_counter() - due) * 1000
        begin = time.perf_counter()
        response = client.post("/alertmanager", json=bodies[i])
        latencies[i] = (time.perf_counter() - begin) * 1000
        statuses[i] = response.status_code

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(one, range(alerts)))
    counts: dict[int, int] = {}
    for status in statuses:
        counts[status] = counts.get(status, 0) + 1
    return latencies, counts, max(lag)


@contextmanager
def database(backend: str, workdir: Path, durable: bool = False) -> Iterator[str]:
    """The database URL; `durable` keeps PostgreSQL's fsync and synchronous commits on, as production runs it."""
    if backend == "sqlite":
        yield f"sqlite:///{workdir / 'triagebot.sqlite'}"
        return
    from tests.harness.postgres import start_postgres

    with start_postgres(durable=durable) as server:
        yield server.url


def run(backend: str, alerts: int, seconds: float, groups: int, tail: float, workers: int) -> Result:
    with tempfile.TemporaryDirectory(prefix="bench-webhook-") as tmp, database(backend, Path(tmp)) as url, \
            SlackStandIn(channels=CHANNELS) as slack:
        values = bot_values(
            slack_api_url=slack.api_url, database_url=url, default_channel=CHANNELS[2],
            routes=[{"match": {"team": "a"}, "channel": CHANNELS[0]}, {"match": {"team": "b"}, "channel": CHANNELS[1]}],
            permissions={"channels": {c: ["*"] for c in CHANNELS}})
        with bot_process(values, Path(tmp), "bench-bot") as bot:
            rss: list[int] = []
            done = threading.Event()

            def sample() -> None:
                while not done.wait(0.5):
                    rss.append(bot.rss_bytes())

            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            begin = time.perf_counter()
            latencies, statuses, lag = send_all(bot, alerts, seconds, groups, workers)
            elapsed = time.perf_counter() - begin
            time.sleep(tail)  # the posters keep going; this is the window in which posting is observed
            done.set()
            sampler.join()
            peak = bot.peak_rss_bytes()
        engine = make_engine(url)
        with engine.connect() as conn:
            stored = int(conn.scalar(select(func.count()).select_from(Alert)) or 0)
            fingerprints = int(conn.scalar(select(func.count(func.distinct(Alert.fingerprint)))) or 0)
            group_rows = int(conn.scalar(select(func.count()).select_from(AlertGroup)) or 0)
            left = int(conn.scalar(select(func.count()).select_from(OutboxItem)
                                   .where(OutboxItem.status != "sent")) or 0)
        engine.dispose()
        posts = {c: sorted(call.time for call in slack.calls if call.method in POSTING_METHODS
                           and call.response.get("ok") and call.params.get("channel") == c) for c in CHANNELS}
        ratelimited = sum(1 for call in slack.calls if call.status == 429)
    per_group = [len(range(g, alerts, groups)) for g in range(groups)]
    expected_rows = sum(n * (n + 1) // 2 for n in per_group)  # webhook k of a group carries k alerts
    return Result(backend, alerts, elapsed, latencies, statuses, lag, stored, fingerprints, expected_rows,
                  group_rows, posts, ratelimited, left, peak, rss)


def post_rates(times: list[float]) -> tuple[float, float, float]:
    """(mean posts/s over the channel's active span, busiest 10 s window in posts/s, smallest gap in s)."""
    if len(times) < 2:
        return (0.0, 0.0, float("inf"))
    span = times[-1] - times[0]
    busiest = max(sum(1 for t in times if start <= t < start + 10.0) for start in times) / 10.0
    gap = min(b - a for a, b in itertools.pairwise(times))
    return (len(times) - 1) / span if span else 0.0, busiest, gap


def report(results: list[Result]) -> str:
    mb = 1024 * 1024
    lines = ["### Alertmanager webhooks (`python -m benchmarks.bench_webhook`)", "",
             f"Machine: {doc.machine()}, load average {LOAD[0]:.1f} from other work "
             f"when it started. Load: {results[0].alerts} alerts in {results[0].seconds:.0f} s over "
             f"{results[0].groups} alert groups and {len(CHANNELS)} channels, open loop; each webhook carries its "
             "group's alerts so far plus a new one (as Alertmanager sends them); the bot is one process.", "",
             "| backend | budget | stored | webhook latency | Slack posts per channel | bot RSS |",
             "|---|---|---|---|---|---|"]
    for r in results:
        ok = r.statuses.get(200, 0)
        rates = [post_rates(r.posts[c]) for c in CHANNELS]
        posted = sum(len(r.posts[c]) for c in CHANNELS)
        lines.append(
            f"| {r.backend} | all stored, p99 < 100 ms, <= 1 post/s/channel, RSS < 250 MB | "
            f"{ok}/{r.alerts} webhooks answered 200; {r.stored_alerts:,} alert rows of {r.expected_rows:,} sent, "
            f"{r.stored_fingerprints:,} distinct alerts, {r.groups} groups | "
            f"p50 {statistics.median(r.latencies_ms):.1f} ms, p99 {quantile(r.latencies_ms, 99):.1f} ms, "
            f"max {max(r.latencies_ms):.0f} ms (sender lag max {r.lag_ms:.0f} ms) | "
            f"mean {max(x[0] for x in rates):.2f}/s, busiest 10 s {max(x[1] for x in rates):.1f}/s, "
            f"smallest gap {min(x[2] for x in rates):.2f} s; {posted} posted, {r.ratelimited} HTTP 429, "
            f"{r.queued_left} still queued at the end | "
            f"peak {r.peak_rss / mb:.0f} MB (samples max {max(r.rss_samples, default=0) / mb:.0f} MB) |")
    lines += ["", "Stored rows count every alert of every webhook (repeats included), so a group's k-th webhook "
              "adds k rows. Whatever is left queued at the end is waiting its turn under Slack's limits "
              "(one post per second per channel, 50 edits a minute): pacing, not loss."]
    return "\n".join(lines)


def main() -> None:
    parser = doc.storm_options(__doc__, backend="both", alerts=1000, seconds=60.0, groups=50, tail=10.0,
                               tail_help="seconds to keep observing after the last webhook")
    parser.add_argument("--workers", type=int, default=16, help="concurrent senders")
    args = parser.parse_args()
    LOAD[0] = os.getloadavg()[0]  # a shared machine: say how busy it was
    results = [run(b, args.alerts, args.seconds, args.groups, args.tail, args.workers)
               for b in doc.backends(args.backend)]
    text = report(results)
    sys.stdout.write(text + "\n")
    if not args.no_write:
        write_part("webhook", text)


if __name__ == "__main__":
    main()
