"""files.upload_v2: a file in a thread (an `Upload`), in Slack's three steps with the file's id recorded before the
share (bot/delivery/uploads.py), so an upload a crash interrupted is found by that id instead of made twice."""

from __future__ import annotations

import base64
import logging
from typing import Any

from bot.delivery.desk import Desk
from bot.delivery.history import find_message
from bot.delivery.uploads import shared_in, upload_file
from bot.store.outbox import ClaimedItem

log = logging.getLogger("triagebot.poster")


def send(desk: Desk, item: ClaimedItem) -> dict[str, Any]:
    payload = item.payload
    content = base64.b64decode(payload["content_b64"]) if "content_b64" in payload \
        else str(payload.get("content", "")).encode("utf-8")
    file_id = upload_file(desk.client, channel=item.channel, thread_ts=desk.file_thread(item),
                          filename=payload["filename"], title=payload.get("title", payload["filename"]),
                          content=content, initial_comment=payload.get("initial_comment"),
                          before_share=lambda shared: desk.checkpoint(item, {"file_id": shared}))
    return {"file_id": file_id, "channel": item.channel}


def recover(desk: Desk, item: ClaimedItem) -> dict[str, Any] | None:
    """The file this item shared before a crash (its id was checkpointed just before the share), found among
    the thread's messages; None when it was never shared, so uploading again from the start is safe."""
    file_id = str((item.progress or {}).get("file_id") or "")
    if not file_id:
        return None  # the crash came before the share was asked for: nothing of it is visible in Slack
    message = find_message(desk, item, desk.file_thread(item), lambda m: shared_in(m, file_id))
    if message is None:
        return None
    log.info("%s: file %s was already shared (%s): not uploading it again", item.idempotency_key, file_id,
             message.get("ts"))
    desk.metrics.slack_errors.labels(item.method, "recovered").inc()
    return {"file_id": file_id, "channel": item.channel, "recovered": True}
