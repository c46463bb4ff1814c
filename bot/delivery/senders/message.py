"""chat.postMessage: a root, a report or a reply (bot/delivery/posts.py), in its thread, with the metadata that
names its outbox key, so a post an earlier attempt may have made is found in Slack's history before it is made again.
"""

from __future__ import annotations

import logging
from typing import Any

from bot.delivery.desk import Deferred, Desk, NothingToDo, known_thread, record, with_line
from bot.delivery.history import read_posts
from bot.delivery.inline_image import post_with_image
from bot.delivery.permalinks import permalink, recurrence_note
from bot.delivery.words import episode_link_line, fired_again_line
from bot.store import outbox
from bot.store.db import read_session
from bot.store.outbox import ClaimedItem

log = logging.getLogger("triagebot.poster")

POST_EVENT = "triagebot_post"  # the metadata event type of posts that carry no metadata of their own


def send(desk: Desk, item: ClaimedItem) -> dict[str, Any]:
    payload = desk.current(item)
    thread_ts = desk.thread_ts(item)
    if isinstance(payload.get("recurrence"), dict):  # a recurrence note links earlier threads as it is sent
        payload = {**payload, **recurrence_note(desk, payload["recurrence"])}
    text = str(payload.get("text", ""))
    if payload.get("kind") == "fired-again":
        text = _fired_again(desk, item)
    link = _episode_link(desk, item)
    text, blocks = with_line(text, payload.get("blocks"), link)
    metadata = payload.get("metadata") or {"event_type": POST_EVENT, "event_payload": {}}
    metadata = {**metadata, "event_payload": {**metadata.get("event_payload", {}),
                                              "outbox_key": item.idempotency_key}}

    def post(with_blocks: Any) -> Any:
        return desk.client.chat_postMessage(channel=item.channel, text=text, blocks=with_blocks, thread_ts=thread_ts,
                                            unfurl_links=False, unfurl_media=False, metadata=metadata)

    image = payload.get("image")
    response = post_with_image(desk, item, image, list(blocks or []), post) if isinstance(image, dict) \
        else post(blocks)
    # The thread's root, so a later post that depends on this one replies in the same thread.
    result = {"ts": response["ts"], "channel": response["channel"], "thread_ts": thread_ts or response["ts"]}
    if link:
        result["episode_link"] = link  # kept for the edits of this root
    return result


def recover(desk: Desk, item: ClaimedItem) -> dict[str, Any] | None:
    """The message this item posted before a crash, found by its metadata; None if it is not in Slack.

    The same read settles the channel's (or thread's) other waiting posts that may have been made: those it
    finds are recorded as sent, and, when it read back to before they were queued, those it does not find
    are cleared to post without a lookup of their own."""
    thread_ts = desk.thread_ts(item)
    with read_session(desk.factory) as session:
        peers = [p for p in outbox.maybe_sent_posts(session, item.channel, exclude=item.id)
                 if known_thread(p) == (thread_ts,)]
    oldest = min((p.created_at for p in [item, *peers] if p.created_at), default=None)
    found, complete, short = read_posts(desk, item, thread_ts, oldest)
    settled: list[tuple[ClaimedItem, dict[str, Any]]] = []
    absent: dict[int, int] = {}
    for peer in peers:
        message = found.get(peer.idempotency_key)
        if message is not None:
            settled.append((peer, _recovered(desk, peer, thread_ts, message)))
        elif complete:
            absent[peer.id] = peer.attempts
    with desk.factory.begin() as session:
        for peer, result in settled:
            if outbox.settle_found(session, peer.id, result, now=desk.clock()):
                record(session, peer, result)
                desk.metrics.lookup_settled.labels("found").inc()
        desk.metrics.lookup_settled.labels("absent").inc(outbox.settle_absent(session, absent))
    message = found.get(item.idempotency_key)
    if message is None and short:
        raise Deferred(short)  # read in part, for want of budget: the rest of the read comes later
    if message is None:
        return None
    log.info("%s was already in Slack (%s): not posting it again", item.idempotency_key, message.get("ts"))
    return _recovered(desk, item, thread_ts, message)


def _recovered(desk: Desk, item: ClaimedItem, thread_ts: str | None, message: dict[str, Any]) -> dict[str, Any]:
    desk.metrics.slack_errors.labels(item.method, "recovered").inc()
    result: dict[str, Any] = {"ts": message["ts"], "channel": item.channel,
                              "thread_ts": thread_ts or message["ts"], "recovered": True}
    link = _episode_link(desk, item)
    if link:
        result["episode_link"] = link
    return result


def _episode_link(desk: Desk, item: ClaimedItem) -> str | None:
    """The line linking a new episode's root to the previous episode's, once that one is in Slack."""
    previous = item.payload.get("previous")
    if not previous:
        return None
    with desk.factory() as session:
        row = outbox.find(session, str(previous))
        sent = row.result if row is not None and row.status == "sent" else None
    if not sent or not sent.get("ts"):
        return None  # the old root never made it: the new one must not wait for it
    link = permalink(desk, str(sent.get("channel") or item.channel), str(sent["ts"]))
    if link is None:
        return None
    episode = int((item.payload.get("metadata") or {}).get("event_payload", {}).get("episode", 2))
    return episode_link_line(link, episode)


def _fired_again(desk: Desk, item: ClaimedItem) -> str:
    """The note in an old episode's thread, linking the new episode's root (the item it depends on)."""
    parent = item.parent_result or {}
    if not parent.get("ts"):
        raise NothingToDo("the new episode's root was not posted")
    response = desk.client.chat_getPermalink(channel=str(parent.get("channel") or item.channel),
                                             message_ts=str(parent["ts"]))
    return fired_again_line(str(response["permalink"]), int(item.payload.get("episode") or 2))

