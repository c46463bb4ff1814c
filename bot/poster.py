"""The outbox worker: the only code that calls Slack's Web API to post, update or upload.

Everything the bot says goes into the outbox first (bot/store/outbox.py), in the same transaction as what
caused it; this worker claims due items, makes the call, and records Slack's answer. Pacing per channel,
Retry-After and backoff live in the outbox, so a Slack outage only delays posts and two replicas never
post the same item twice.
"""

from __future__ import annotations

import base64
import logging
import threading
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy.orm import Session, sessionmaker

from bot.metrics import Metrics
from bot.store import outbox, repo
from bot.store.outbox import ClaimedItem

log = logging.getLogger("triagebot.poster")

# Errors that no retry will fix: the item is dead at once and the error is logged and counted.
PERMANENT = frozenset({"channel_not_found", "invalid_blocks", "invalid_blocks_format", "msg_too_long",
                       "msg_blocks_too_long", "invalid_auth", "not_authed", "account_inactive", "not_in_channel",
                       "is_archived", "no_text", "message_not_found", "cant_update_message", "invalid_arguments",
                       "missing_scope", "token_revoked", "user_not_found"})


def _now() -> datetime:
    return datetime.now(UTC)


class Poster:
    def __init__(self, factory: sessionmaker[Session], client: WebClient, metrics: Metrics | None = None,
                 worker_id: str | None = None, clock: Callable[[], datetime] = _now) -> None:
        self.factory = factory
        self.client = client
        self.metrics = metrics or Metrics()
        self.worker_id = worker_id or f"poster-{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> int:
        """Claim and send what is due now; returns how many items were attempted."""
        items = outbox.claim(self.factory, self.worker_id, self.clock())
        for item in items:
            self._send(item)
        with self.factory() as session:
            depth = sum(n for status, n in outbox.counts(session).items() if status in ("pending", "failed",
                                                                                        "sending"))
        self.metrics.outbox_depth.set(depth)
        return len(items)

    def _send(self, item: ClaimedItem) -> None:
        try:
            result = self._call(item)
        except SlackApiError as err:
            error = str(err.response.get("error") or f"http_{err.response.status_code}")
            retry_after = err.response.headers.get("Retry-After") if err.response.headers else None
            self.metrics.slack_errors.labels(item.method, error).inc()
            with self.factory.begin() as session:
                status = outbox.mark_failed(session, item.id, self.worker_id, error,
                                            retry_after=float(retry_after) if retry_after else None,
                                            permanent=error in PERMANENT, now=self.clock())
            log.warning("slack %s failed for %s: %s (%s)", item.method, item.idempotency_key, error, status)
            return
        except Exception as err:  # network errors and the like: retry later with backoff
            self.metrics.slack_errors.labels(item.method, type(err).__name__).inc()
            with self.factory.begin() as session:
                outbox.mark_failed(session, item.id, self.worker_id, f"{type(err).__name__}: {err}",
                                   now=self.clock())
            log.warning("slack %s failed for %s: %s", item.method, item.idempotency_key, err)
            return
        with self.factory.begin() as session:
            if outbox.mark_sent(session, item.id, self.worker_id, result, now=self.clock()) and result.get("ts"):
                repo.record_slack_message(session, channel=str(result.get("channel") or item.channel),
                                          ts=str(result["ts"]), kind=str(item.payload.get("kind", item.method)),
                                          thread_ts=item.payload.get("thread_ts") or _thread_root(item),
                                          incident_id=item.payload.get("incident_id"))

    def _call(self, item: ClaimedItem) -> dict[str, Any]:
        payload = dict(item.payload)
        parent_ts = _parent_ts(item)
        if item.method == "chat.postMessage":
            thread_ts = payload.get("thread_ts") or (_thread_root(item) if payload.get("in_thread") else None)
            response = self.client.chat_postMessage(channel=item.channel, text=payload.get("text", ""),
                                                    blocks=payload.get("blocks"), thread_ts=thread_ts,
                                                    unfurl_links=False, unfurl_media=False)
            # The thread's root, so a later post that depends on this one replies in the same thread.
            return {"ts": response["ts"], "channel": response["channel"], "thread_ts": thread_ts or response["ts"]}
        if item.method == "chat.update":
            ts = payload.get("ts") or parent_ts
            if not ts:
                raise ValueError("chat.update needs the ts of the message it changes")
            response = self.client.chat_update(channel=item.channel, ts=ts, text=payload.get("text", ""),
                                               blocks=payload.get("blocks"))
            return {"ts": response["ts"], "channel": response["channel"]}
        if item.method == "files.upload_v2":
            content = base64.b64decode(payload["content_b64"]) if "content_b64" in payload \
                else str(payload.get("content", "")).encode("utf-8")
            response = self.client.files_upload_v2(channel=item.channel, thread_ts=payload.get("thread_ts")
                                                   or _thread_root(item), filename=payload["filename"],
                                                   title=payload.get("title", payload["filename"]), content=content,
                                                   initial_comment=payload.get("initial_comment"))
            files = response.get("files") or [response.get("file") or {}]
            return {"file_id": str(files[0].get("id", "")), "channel": item.channel}
        if item.method == "views.publish":
            self.client.views_publish(user_id=payload["user_id"], view=payload["view"])
            return {"user_id": payload["user_id"]}
        raise ValueError(f"unknown outbox method {item.method}")

    def start(self, interval: float = 0.2) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    busy = self.run_once()
                except Exception:
                    log.exception("poster loop failed; retrying")
                    busy = 0
                if not busy:
                    self._wake.wait(interval)
                    self._wake.clear()

        self._thread = threading.Thread(target=loop, name=self.worker_id, daemon=True)
        self._thread.start()

    def wake(self) -> None:
        """Something was enqueued: look now instead of at the next tick."""
        self._wake.set()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)


def _parent_ts(item: ClaimedItem) -> str | None:
    return str(item.parent_result["ts"]) if item.parent_result and item.parent_result.get("ts") else None


def _thread_root(item: ClaimedItem) -> str | None:
    """The root of the parent's thread: Slack asks that replies name the root, not another reply."""
    result = item.parent_result or {}
    root = result.get("thread_ts") or result.get("ts")
    return str(root) if root else None
