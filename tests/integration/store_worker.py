"""One bot replica, reduced to its persistence: receive webhooks, enqueue Slack calls, run the outbox loop.

test_store.py starts two of these against one database. Both receive the same Alertmanager payloads and both
post through a fake Slack that appends one line per call to a shared file; the test then counts the lines.

usage: store_worker.py URL WORKER_ID PAYLOADS_JSON SENT_LOG GO_FILE [--pace S] [--timeout S] [--rate-limit-once KEY]

It touches ready-WORKER_ID next to GO_FILE once imported, then waits for GO_FILE, so both replicas really race.
"""

from __future__ import annotations

import argparse
import fcntl
import hashlib
import json
import os
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bot.store import outbox, repo
from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import OutboxItem
from bot.store.types import utcnow


class RateLimited(Exception):
    retry_after = 0.3


def receive(session: Session, payload: dict[str, Any], worker: str, channel: str) -> tuple[bool, list[str]]:
    """What the webhook handler would do: store, open the incident, and queue its Slack calls with keys that
    depend only on the payload, so both replicas compute the same ones. Returns (is_new_group, keys)."""
    group, is_new, _rows = repo.store_alert_payload(session, payload, worker)
    repo.open_incident_for_group(session, group, title=payload["commonLabels"].get("alertname", "alert"),
                                 channel=channel)
    gk = payload["groupKey"]
    post = outbox.enqueue(session, f"alert:{gk}:post", channel, "chat.postMessage", {"text": f"alert {gk}"})
    keys = [post.idempotency_key]
    for alert in payload["alerts"]:
        key = f"alert:{gk}:fp:{alert['fingerprint']}:{alert['status']}"
        outbox.enqueue(session, key, channel, "chat.postMessage", {"text": alert["fingerprint"]}, depends_on=post)
        keys.append(key)
    if payload["status"] == "resolved":
        digest = hashlib.sha256(json.dumps(payload["alerts"], sort_keys=True).encode()).hexdigest()[:16]
        update = outbox.enqueue(session, f"alert:{gk}:update:{digest}", channel, "chat.update",
                                {"text": f"resolved {gk}"}, depends_on=post)
        keys.append(update.idempotency_key)
    return is_new, keys


def fake_slack(item: outbox.ClaimedItem, claimed_at: datetime, worker: str, log: Path,
               rate_limit_once: set[str]) -> dict[str, Any]:
    if item.idempotency_key in rate_limit_once:
        marker = log.with_name(f"429-{hashlib.sha256(item.idempotency_key.encode()).hexdigest()[:12]}")
        try:  # O_EXCL: exactly one call across both processes gets the 429
            os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            raise RateLimited
        except FileExistsError:
            pass
    ts = f"{int(time.time())}.{item.id:06d}"
    line = json.dumps({"key": item.idempotency_key, "worker": worker, "channel": item.channel, "ts": ts,
                       "method": item.method, "parent_ts": (item.parent_result or {}).get("ts"),
                       "claimed_at": claimed_at.timestamp(), "at": time.time()})
    with log.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.write(line + "\n")
    return {"ok": True, "channel": item.channel, "ts": ts}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("worker")
    parser.add_argument("payloads", type=Path)
    parser.add_argument("log", type=Path)
    parser.add_argument("go", type=Path)
    parser.add_argument("--pace", type=float, default=1.0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--rate-limit-once", action="append", default=[])
    args = parser.parse_args(argv)

    deliveries: list[dict[str, Any]] = json.loads(args.payloads.read_text())
    deadline = time.monotonic() + args.timeout
    args.go.with_name(f"ready-{args.worker}").touch()  # imports done; the test says go once both are here
    while not args.go.exists():  # start both replicas at the same moment, migrations included
        if time.monotonic() > deadline:
            return 3
        time.sleep(0.005)

    started = time.monotonic()
    engine = make_engine(args.url)
    migrate(engine)
    timings = {"migrate": time.monotonic() - started}
    factory = session_factory(engine)
    keys: set[str] = set()
    new_groups: list[str] = []
    for delivery in deliveries:
        with factory.begin() as session:  # one transaction per webhook: the alert and its posts, or nothing
            is_new, queued = receive(session, delivery["payload"], args.worker, delivery["channel"])
        keys.update(queued)
        if is_new:
            new_groups.append(delivery["payload"]["groupKey"])

    timings["receive"] = time.monotonic() - started - timings["migrate"]
    sent = 0
    while time.monotonic() < deadline:
        now = utcnow()
        items = outbox.claim(factory, args.worker, now, pace=timedelta(seconds=args.pace), lease=timedelta(seconds=20))
        for item in items:
            try:
                result = fake_slack(item, now, args.worker, args.log, set(args.rate_limit_once))
            except RateLimited as limited:
                with factory.begin() as session:
                    outbox.mark_failed(session, item.id, args.worker, "ratelimited", retry_after=limited.retry_after)
                continue
            with factory.begin() as session:
                if outbox.mark_sent(session, item.id, args.worker, result):
                    sent += 1
        with factory.begin() as session:
            done = session.scalar(select(func.count()).select_from(OutboxItem).where(
                OutboxItem.idempotency_key.in_(keys), OutboxItem.status.in_(("sent", "dead"))))
        if done == len(keys):
            break
        if not items:
            time.sleep(0.02)
    else:
        print(json.dumps({"worker": args.worker, "error": "timeout"}))
        return 2
    engine.dispose()
    timings["total"] = time.monotonic() - started
    print(json.dumps({"worker": args.worker, "sent": sent, "keys": sorted(keys), "new_groups": new_groups,
                      "timings": {k: round(v, 3) for k, v in timings.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
