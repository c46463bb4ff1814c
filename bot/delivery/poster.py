"""The outbox worker: the only code that calls Slack's Web API to post, update or upload.

Everything the bot says goes into the outbox first (bot/store/outbox.py), in the same transaction as what
caused it; this worker claims due items, makes the call, and records Slack's answer. Pacing per channel,
Retry-After and backoff live in the outbox, so a Slack outage only delays posts and two replicas never
post the same item twice.

Every post carries Slack message metadata naming its outbox key. An item that may already have been posted (its
worker died between Slack's answer and `mark_sent`, or the call timed out) is first looked for in the channel's
history (`conversations.history`, or `conversations.replies` for a thread reply) and only posted if it is not
there. Lookups are Slack's scarcest budget (bot/delivery/lookups.py): a failure that cannot have posted (a refused
connection, a 429) asks for none, and one read of a channel or thread settles every waiting post of it, found or
not. A file upload is looked for the same way, by the file id recorded before Slack was asked to share it
(bot/delivery/uploads.py). A message Slack refuses for its size or its blocks (`msg_too_long`, `msg_blocks_too_long`,
`invalid_blocks`) is sent again at once as plain, cut text, with the whole text queued as a file in the thread:
nothing is dead for its size.
"""

from __future__ import annotations

import base64
import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from sqlalchemy.orm import Session, sessionmaker

from bot.delivery.lookups import LookupBudget, may_have_reached_slack
from bot.delivery.slack_errors import Failure, exception_failure, slack_failure
from bot.delivery.slack_reach import SlackReach, is_transport_error
from bot.delivery.uploads import shared_in, upload_file
from bot.metrics import Metrics
from bot.posts import CUT_MARK, TEXT_LIMIT, episode_link_line, fired_again_line, fitted_text, rollup_text
from bot.store import outbox, repo
from bot.store.db import read_session
from bot.store.outage import database_away
from bot.store.outbox import ClaimedItem
from bot.store.quarantine import Quarantined

log = logging.getLogger("triagebot.poster")

# Which errors no retry will fix (the item is dead at once, logged and counted): bot/delivery/slack_errors.py.
# Refusals of the content itself: sent again as plain, shorter text (PLAIN_LIMITS, in turn), never dead for this.
CONTENT_ERRORS = frozenset({"msg_too_long", "msg_blocks_too_long", "invalid_blocks", "invalid_blocks_format",
                            "invalid_metadata_format", "invalid_metadata_schema", "metadata_too_large"})
PLAIN_LIMITS = (TEXT_LIMIT, 1000)
POST_EVENT = "triagebot_post"  # the metadata event type of posts that carry no metadata of their own
HISTORY_PAGES = 10  # pages of 200 messages searched for a post that may have gone out already
CLOCK_SLACK = timedelta(minutes=2)  # how far the database's clock may be ahead of Slack's
# Every command and webhook wakes the poster. In a burst, one look after the first wake-up finds what the others
# queued; without the pause the poster queried the database dozens of times a second in the process that acks.
WAKE_COALESCE = 0.05  # seconds
DEPTH_EVERY = 1.0  # seconds between counts of the outbox for the depth gauge
DB_RETRY = 1.0  # seconds between polls while the database is away (a poll a tick would only fill the log)


def _now() -> datetime:
    return datetime.now(UTC)


class NotYet(Exception):
    """The item needs a message that is not in Slack yet (its thread's root): tried again later, not dead."""


class NothingToDo(Exception):
    """The item can never be sent and need not be (the thread it belongs in was never posted): recorded as done."""


class Deferred(Exception):
    """The item needs a history lookup and the lookup budget is spent: handed back untried until `seconds`."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"history lookups spent for {seconds:.1f} s")
        self.seconds = seconds


class LeaseLost(Exception):
    """Another poster took the item over while this one worked on it: that one records the outcome."""


class Poster:
    def __init__(self, factory: sessionmaker[Session], client: WebClient, metrics: Metrics | None = None,
                 worker_id: str | None = None, clock: Callable[[], datetime] = _now,
                 lease: timedelta = outbox.DEFAULT_LEASE, reach: SlackReach | None = None,
                 lookups: LookupBudget | None = None) -> None:
        self.factory = factory
        self.reach = reach or SlackReach()  # logs an outage once a minute instead of once per failed call
        self.lookups = lookups or LookupBudget()
        self.lease = lease
        self.client = client
        self.metrics = metrics or Metrics()
        self.worker_id = worker_id or f"poster-{uuid.uuid4().hex[:8]}"
        self.clock = clock
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._counted_at: float | None = None
        # Slack failed without an answer (5xx, no connection) since the last success; True at start, as a poster
        # that replaces a dead one inherits its failures.
        self._slack_failing = True

    def run_once(self) -> int:
        """Claim and send what is due now; returns how many items were attempted."""
        items = outbox.claim(self.factory, self.worker_id, self.clock(), lease=self.lease,
                             on_quarantine=self._quarantined)
        for item in items:
            self._send(item)
        self._count()
        return len(items)

    def _quarantined(self, row: Quarantined) -> None:
        """A row the claim set aside as unreadable: said once (it is dead from now on) and counted."""
        self.metrics.outbox_dead.labels("quarantined").inc()
        log.error("outbox item %s (%s, channel %s) quarantined: %s", row.id, row.idempotency_key, row.channel,
                  row.reason)

    def _count(self) -> None:
        """Set the depth gauge, at most once a second."""
        if self._counted_at is not None and time.monotonic() - self._counted_at < DEPTH_EVERY:
            return
        with read_session(self.factory) as session:
            depth = sum(n for status, n in outbox.counts(session).items() if status in ("pending", "failed",
                                                                                        "sending"))
        self.metrics.outbox_depth.set(depth)
        self._counted_at = time.monotonic()

    def _send(self, item: ClaimedItem) -> None:
        full_text: str | None = None
        try:
            result = self._already_done(item) if item.maybe_sent else None
            if result is None:
                result, full_text = self._call_fitting(item)
        except LeaseLost:
            log.warning("%s was taken over by another poster mid-call", item.idempotency_key)
            return
        except Deferred as why:
            with self.factory.begin() as session:
                outbox.hand_back(session, item.id, self.worker_id, self.clock() + timedelta(seconds=why.seconds))
            return
        except NothingToDo as why:
            log.warning("%s is not sent: %s", item.idempotency_key, why)
            with self.factory.begin() as session:
                outbox.mark_sent(session, item.id, self.worker_id, {"skipped": str(why), "channel": item.channel},
                                 now=self.clock())
            return
        except NotYet as why:
            with self.factory.begin() as session:
                outbox.mark_failed(session, item.id, self.worker_id, str(why), now=self.clock())
            return
        except SlackApiError as err:
            self.reach.answered()
            # A page from a proxy or a 5xx may hide a post Slack did make: the retry looks first.
            self._slack_failing = self._slack_failing or err.response.status_code >= 500
            self._failed(item, slack_failure(err), "")  # a 5xx page may hide a post: uncertain; a 429 is not
            return
        except Exception as err:  # network errors (retried), or a payload no call can be made from (dead)
            self._slack_failing = True
            unreachable = is_transport_error(err)
            failure = replace(exception_failure(err), uncertain=may_have_reached_slack(err))
            self._failed(item, failure, f"{type(err).__name__}: {err}", logged=not unreachable)
            if unreachable:
                self.reach.failed(err, item.id)  # one line a minute while Slack cannot be reached
            return
        self.reach.answered()
        with self.factory.begin() as session:
            if self._slack_failing:
                # Slack is back: what backed off through the outage goes now, roots first, not minutes later.
                self._slack_failing = False
                pulled = outbox.retry_now(session, self.clock())
                if pulled:
                    log.info("slack answers again: %d waiting items retried now", pulled)
            if outbox.mark_sent(session, item.id, self.worker_id, result, now=self.clock()) and result.get("ts"):
                self._record(session, item, result)
                if full_text is not None and item.method == "chat.postMessage":
                    anchor = outbox.find(session, item.idempotency_key)
                    outbox.enqueue(session, f"{item.idempotency_key}:full", item.channel, "files.upload_v2",
                                   {"kind": "full-text", "in_thread": True, "filename": "message.txt",
                                    "title": "The full text of the message above", "content": full_text,
                                    "incident_id": item.payload.get("incident_id")}, depends_on=anchor)

    def _failed(self, item: ClaimedItem, failure: Failure, detail: str, *, logged: bool = True) -> None:
        """Record a failed call: dead at once if no retry can fix it, else retried within the attempt budget.

        `logged=False` when the outage is reported elsewhere (SlackReach's line a minute), not per call."""
        self.metrics.slack_errors.labels(item.method, failure.error).inc()
        with self.factory.begin() as session:
            status = outbox.mark_failed(session, item.id, self.worker_id, detail or failure.error,
                                        retry_after=failure.retry_after, permanent=failure.permanent,
                                        now=self.clock(), uncertain=failure.uncertain)
        if status == "dead":
            self.metrics.outbox_dead.labels("permanent" if failure.permanent else "exhausted").inc()
        if logged or status == "dead":
            log.warning("slack %s failed for %s: %s (%s)", item.method, item.idempotency_key,
                        detail or failure.error, status)

    @staticmethod
    def _record(session: Session, item: ClaimedItem, result: dict[str, Any]) -> None:
        """Remember a posted message (channel, ts) for the incident it belongs to."""
        repo.record_slack_message(session, channel=str(result.get("channel") or item.channel),
                                  ts=str(result["ts"]), kind=str(item.payload.get("kind", item.method)),
                                  thread_ts=item.payload.get("thread_ts") or _thread_root(item),
                                  incident_id=item.payload.get("incident_id"))

    def _call_fitting(self, item: ClaimedItem) -> tuple[dict[str, Any], str | None]:
        """The call; if Slack refuses the content, again as plain cut text. Returns the result and, when the text
        had to be cut, the whole of it (to go into the thread as a file)."""
        try:
            return self._call(item), None
        except SlackApiError as err:
            error = str(err.response.get("error") or "")
            if error not in CONTENT_ERRORS or item.method not in ("chat.postMessage", "chat.update"):
                raise
            self.metrics.slack_errors.labels(item.method, error).inc()
            log.warning("slack refused %s for %s (%s): sending it as plain text", item.method,
                        item.idempotency_key, error)
        whole = _plain_text(item.payload)
        for limit in PLAIN_LIMITS:
            text, _ = fitted_text(whole, limit)
            if not text.endswith(CUT_MARK):
                text = text + CUT_MARK if item.payload.get("blocks") else text
            plain = {k: v for k, v in item.payload.items() if k not in ("blocks", "metadata")}
            plain["text"] = text
            if item.payload.get("metadata") and limit == PLAIN_LIMITS[0]:
                plain["metadata"] = item.payload["metadata"]
            try:
                return self._call(replace(item, payload=plain)), whole
            except SlackApiError as err:
                if str(err.response.get("error") or "") not in CONTENT_ERRORS or limit == PLAIN_LIMITS[-1]:
                    raise
        raise AssertionError("unreachable")  # the loop returns or raises on its last limit

    def _already_done(self, item: ClaimedItem) -> dict[str, Any] | None:
        """What an earlier attempt of this item did in Slack before a crash or an unclear failure, if anything:
        the post (found by the outbox key in its metadata) or the file (by the id recorded before it was shared)."""
        if item.method == "chat.postMessage":
            return self._already_posted(item)
        if item.method == "files.upload_v2":
            return self._already_uploaded(item)
        return None  # edits and Home views are idempotent: doing them again is harmless

    def _already_posted(self, item: ClaimedItem) -> dict[str, Any] | None:
        """The message this item posted before a crash, found by its metadata; None if it is not in Slack.

        The same read settles the channel's (or thread's) other waiting posts that may have been made: those it
        finds are recorded as sent, and, when it read back to before they were queued, those it does not find
        are cleared to post without a lookup of their own."""
        thread_ts = self._thread_ts(item)
        with read_session(self.factory) as session:
            peers = [p for p in outbox.maybe_sent_posts(session, item.channel, exclude=item.id)
                     if _known_thread(p) == (thread_ts,)]
        oldest = min((p.created_at for p in [item, *peers] if p.created_at), default=None)
        found, complete, short = self._read_posts(item, thread_ts, oldest)
        settled: list[tuple[ClaimedItem, dict[str, Any]]] = []
        absent: dict[int, int] = {}
        for peer in peers:
            message = found.get(peer.idempotency_key)
            if message is not None:
                settled.append((peer, self._recovered(peer, thread_ts, message)))
            elif complete:
                absent[peer.id] = peer.attempts
        with self.factory.begin() as session:
            for peer, result in settled:
                if outbox.settle_found(session, peer.id, result, now=self.clock()):
                    self._record(session, peer, result)
                    self.metrics.lookup_settled.labels("found").inc()
            self.metrics.lookup_settled.labels("absent").inc(outbox.settle_absent(session, absent))
        message = found.get(item.idempotency_key)
        if message is None and short:
            raise Deferred(short)  # read in part, for want of budget: the rest of the read comes later
        if message is None:
            return None
        log.info("%s was already in Slack (%s): not posting it again", item.idempotency_key, message.get("ts"))
        return self._recovered(item, thread_ts, message)

    def _recovered(self, item: ClaimedItem, thread_ts: str | None, message: dict[str, Any]) -> dict[str, Any]:
        self.metrics.slack_errors.labels(item.method, "recovered").inc()
        result: dict[str, Any] = {"ts": message["ts"], "channel": item.channel,
                                  "thread_ts": thread_ts or message["ts"], "recovered": True}
        link = self._episode_link(item)
        if link:
            result["episode_link"] = link
        return result

    def _read_posts(self, item: ClaimedItem, thread_ts: str | None,
                    oldest: datetime | None) -> tuple[dict[str, dict[str, Any]], bool, float]:
        """This bot's posts in the thread (or the channel since `oldest`), by outbox key, whether the read was
        complete, and, when the lookup budget cut it short, the seconds until the next lookup. Each page spends
        one lookup; with none left before the first page, `Deferred`."""
        found: dict[str, dict[str, Any]] = {}
        cursor: str | None = None
        for page_number in range(HISTORY_PAGES):
            wait = self.lookups.take()
            if wait > 0:
                if page_number == 0:
                    self.metrics.lookup_settled.labels("deferred").inc()
                    raise Deferred(wait)
                return found, False, wait
            try:
                page = self._history_page(item, thread_ts, oldest, cursor)
            except SlackApiError as err:
                if err.response.status_code != 429:
                    raise
                retry_after = float(err.response.headers.get("Retry-After") or 1) if err.response.headers else 1.0
                self.lookups.hold(retry_after)
                self.metrics.slack_errors.labels("conversations.history", "ratelimited").inc()
                if page_number == 0:
                    raise Deferred(retry_after) from err
                return found, False, retry_after
            for message in page.get("messages") or []:
                key = ((message.get("metadata") or {}).get("event_payload") or {}).get("outbox_key")
                if key:
                    found.setdefault(str(key), dict(message))
            cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
            if not page.get("has_more") or not cursor:
                return found, True, 0.0
        return found, False, 0.0

    def _history_page(self, item: ClaimedItem, thread_ts: str | None, oldest: datetime | None,
                      cursor: str | None) -> Any:
        if thread_ts:
            return self.client.conversations_replies(channel=item.channel, ts=thread_ts, limit=200,
                                                     include_all_metadata=True, cursor=cursor)
        since = (oldest - CLOCK_SLACK).timestamp() if oldest else 0
        return self.client.conversations_history(channel=item.channel, oldest=f"{since:.6f}", limit=200,
                                                 include_all_metadata=True, cursor=cursor)

    def _already_uploaded(self, item: ClaimedItem) -> dict[str, Any] | None:
        """The file this item shared before a crash (its id was checkpointed just before the share), found among
        the thread's messages; None when it was never shared, so uploading again from the start is safe."""
        file_id = str((item.progress or {}).get("file_id") or "")
        if not file_id:
            return None  # the crash came before the share was asked for: nothing of it is visible in Slack
        message = self._find_message(item, self._file_thread(item), lambda m: shared_in(m, file_id))
        if message is None:
            return None
        log.info("%s: file %s was already shared (%s): not uploading it again", item.idempotency_key, file_id,
                 message.get("ts"))
        self.metrics.slack_errors.labels(item.method, "recovered").inc()
        return {"file_id": file_id, "channel": item.channel, "recovered": True}

    def _find_message(self, item: ClaimedItem, thread_ts: str | None,
                      match: Callable[[dict[str, Any]], bool]) -> dict[str, Any] | None:
        """The first message of the item's thread (or of the channel since the item was queued) that `match`es."""
        cursor: str | None = None
        for _ in range(HISTORY_PAGES):
            wait = self.lookups.take()
            if wait > 0:
                raise Deferred(wait)
            page = self._history_page(item, thread_ts, item.created_at, cursor)
            for message in page.get("messages") or []:
                if match(message):
                    return dict(message)
            cursor = ((page.get("response_metadata") or {}).get("next_cursor")) or None
            if not page.get("has_more") or not cursor:
                return None
        return None

    def _file_thread(self, item: ClaimedItem) -> str | None:
        """Where a file goes: its own thread_ts, else the thread of the post it depends on."""
        return self._thread_ts(item) or _thread_root(item)

    def _checkpoint(self, item: ClaimedItem, progress: dict[str, Any]) -> None:
        with self.factory.begin() as session:
            if not outbox.checkpoint(session, item.id, self.worker_id, progress):
                raise LeaseLost(item.idempotency_key)

    def _episode_link(self, item: ClaimedItem) -> str | None:
        """The line linking a new episode's root to the previous episode's, once that one is in Slack."""
        previous = item.payload.get("previous")
        if not previous:
            return None
        with self.factory() as session:
            row = outbox.find(session, str(previous))
            sent = row.result if row is not None and row.status == "sent" else None
        if not sent or not sent.get("ts"):
            return None  # the old root never made it: the new one must not wait for it
        try:
            response = self.client.chat_getPermalink(channel=str(sent.get("channel") or item.channel),
                                                     message_ts=str(sent["ts"]))
        except SlackApiError as err:
            log.warning("no permalink for %s: %s", previous, err.response.get("error"))
            return None
        episode = int((item.payload.get("metadata") or {}).get("event_payload", {}).get("episode", 2))
        return episode_link_line(str(response["permalink"]), episode)

    def _thread_ts(self, item: ClaimedItem) -> str | None:
        """The thread a post replies in: its own `thread_ts`, the thread of the message named by `thread_of` (an
        outbox key), or the thread of the item it depends on (`in_thread`); None for a top-level post."""
        payload = item.payload
        if payload.get("thread_ts"):
            return str(payload["thread_ts"])
        if payload.get("thread_of"):
            with self.factory() as session:
                row = outbox.find(session, str(payload["thread_of"]))
                status, result = (row.status, row.result) if row is not None else ("dead", None)
            if status == "dead" or (status == "sent" and not (result or {}).get("ts")):
                raise NothingToDo(f"the message whose thread it belongs in ({payload['thread_of']}) was never posted")
            if status != "sent" or not result:
                raise NotYet(f"waiting for {payload['thread_of']} to be posted")
            return str(result.get("thread_ts") or result["ts"])
        return _thread_root(item) if payload.get("in_thread") else None

    def _fired_again(self, item: ClaimedItem) -> str:
        """The note in an old episode's thread, linking the new episode's root (the item it depends on)."""
        parent = item.parent_result or {}
        if not parent.get("ts"):
            raise NothingToDo("the new episode's root was not posted")
        response = self.client.chat_getPermalink(channel=str(parent.get("channel") or item.channel),
                                                 message_ts=str(parent["ts"]))
        return fired_again_line(str(response["permalink"]), int(item.payload.get("episode") or 2))

    def _call(self, item: ClaimedItem) -> dict[str, Any]:
        payload = dict(item.payload)
        parent_ts = _parent_ts(item)
        if payload.get("rollup_key"):  # a storm's roll-up shows its totals as of sending
            with self.factory() as session:
                payload["text"] = rollup_text(session, str(payload["rollup_key"]))
        if item.method == "chat.postMessage":
            thread_ts = self._thread_ts(item)
            if payload.get("kind") == "fired-again":
                payload["text"] = self._fired_again(item)
            link = self._episode_link(item)
            text, blocks = _with_line(payload.get("text", ""), payload.get("blocks"), link)
            metadata = payload.get("metadata") or {"event_type": POST_EVENT, "event_payload": {}}
            metadata = {**metadata, "event_payload": {**metadata.get("event_payload", {}),
                                                      "outbox_key": item.idempotency_key}}
            response = self.client.chat_postMessage(channel=item.channel, text=text, blocks=blocks,
                                                    thread_ts=thread_ts, unfurl_links=False, unfurl_media=False,
                                                    metadata=metadata)
            # The thread's root, so a later post that depends on this one replies in the same thread.
            result = {"ts": response["ts"], "channel": response["channel"], "thread_ts": thread_ts or response["ts"]}
            if link:
                result["episode_link"] = link  # kept for the edits of this root
            return result
        if item.method == "chat.update":
            ts = payload.get("ts") or parent_ts
            if not ts:
                raise ValueError("chat.update needs the ts of the message it changes")
            link = (item.parent_result or {}).get("episode_link")
            text, blocks = _with_line(payload.get("text", ""), payload.get("blocks"), link)
            response = self.client.chat_update(channel=item.channel, ts=ts, text=text, blocks=blocks)
            return {"ts": response["ts"], "channel": response["channel"]}
        if item.method == "files.upload_v2":
            content = base64.b64decode(payload["content_b64"]) if "content_b64" in payload \
                else str(payload.get("content", "")).encode("utf-8")
            # Slack's three steps, with the file's id recorded before the share (bot/delivery/uploads.py).
            file_id = upload_file(self.client, channel=item.channel, thread_ts=self._file_thread(item),
                                  filename=payload["filename"], title=payload.get("title", payload["filename"]),
                                  content=content, initial_comment=payload.get("initial_comment"),
                                  before_share=lambda shared: self._checkpoint(item, {"file_id": shared}))
            return {"file_id": file_id, "channel": item.channel}
        if item.method == "views.publish":
            self.client.views_publish(user_id=payload["user_id"], view=payload["view"])
            return {"user_id": payload["user_id"]}
        raise ValueError(f"unknown outbox method {item.method}")

    def start(self, interval: float = 0.2) -> None:
        def loop() -> None:
            while not self._stop.is_set():
                try:
                    busy = self.run_once()
                except Exception as err:
                    if not database_away(err):
                        log.exception("poster loop failed; retrying")
                    elif self.metrics.db_failed("poster", err):
                        log.error("database unavailable: the poster retries every %.0f s (%s)", DB_RETRY,
                                  type(err).__name__)
                    # A claimed item whose outcome was not recorded stays `sending` until its lease runs out, and
                    # is then looked for in Slack before it is posted again: nothing is lost or posted twice.
                    self._stop.wait(DB_RETRY)
                    continue
                outage = self.metrics.db_ok("poster")
                if outage is not None:
                    log.warning("database committing again after %.1f s: the poster resumes", outage)
                if not busy:
                    if self._wake.wait(interval):
                        self._stop.wait(WAKE_COALESCE)
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


def _known_thread(item: ClaimedItem) -> tuple[str | None] | None:
    """The thread a waiting post goes to, as far as its row and its parent's result tell ((None,) for the
    channel itself); None when only a further query could say (`thread_of`), or its parent is not posted."""
    payload = item.payload
    if payload.get("thread_ts"):
        return (str(payload["thread_ts"]),)
    if payload.get("thread_of"):
        return None
    if payload.get("in_thread"):
        root = _thread_root(item)
        return (root,) if root else None
    return (None,)


def _parent_ts(item: ClaimedItem) -> str | None:
    return str(item.parent_result["ts"]) if item.parent_result and item.parent_result.get("ts") else None


def _thread_root(item: ClaimedItem) -> str | None:
    """The root of the parent's thread: Slack asks that replies name the root, not another reply."""
    result = item.parent_result or {}
    root = result.get("thread_ts") or result.get("ts")
    return str(root) if root else None


def _with_line(text: str, blocks: Any, line: str | None) -> tuple[str, Any]:
    """Add a line under a message: to its text, and as a context block when it has blocks."""
    if not line:
        return text, blocks
    text = f"{text}\n{line}" if text else line
    if blocks:
        blocks = [*blocks, {"type": "context", "elements": [{"type": "mrkdwn", "text": line}]}]
    return text, blocks


def _plain_text(payload: dict[str, Any]) -> str:
    """Everything a message says, as plain text: its text, or the text of its blocks when that is longer."""
    parts: list[str] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("text"), str) and value.get("type") in ("mrkdwn", "plain_text"):
                parts.append(value["text"])
            for child in value.values():
                if isinstance(child, (dict, list)):
                    walk(child)
        elif isinstance(value, list):
            for child in value:
                walk(child)

    walk(payload.get("blocks") or [])
    from_blocks = "\n".join(parts)
    text = str(payload.get("text") or "")
    return from_blocks if len(from_blocks) > len(text) else text
