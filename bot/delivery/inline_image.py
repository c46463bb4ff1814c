"""A picture inside a message: the PNG uploaded to Slack unshared, then shown by an image block's `slack_file`.

Block Kit shows only pictures at a public URL or files in Slack, so the poster uploads the file first
(files.getUploadURLExternal, the bytes, files.completeUploadExternal without a channel) and posts the message with
an `image` block naming the file's id, with alt text that says what the picture shows. Slack refuses such a block
(`invalid_blocks`, "invalid slack file") while a file it just received is still being processed
(python-slack-sdk#1562) or when the app may not read it: then the message goes without the picture, and the
picture follows in the message's thread, as a file there, so it is never lost for the block's sake.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.models.blocks import ImageBlock, PlainTextObject

from bot.delivery.desk import Desk
from bot.delivery.slack_errors import slack_failure
from bot.delivery.uploads import UploadFailed, upload_file, upload_unshared
from bot.store.outbox import ClaimedItem

log = logging.getLogger("triagebot.poster")

MAX_ALT_TEXT = 2000  # Block Kit's image alt_text ceiling
MAX_TITLE = 2000

Post = Callable[[list[dict[str, Any]]], Any]  # posts the message with these blocks; Slack's answer


def image_block(image: dict[str, Any], file_id: str) -> dict[str, Any]:
    block = ImageBlock(slack_file={"id": file_id}, alt_text=str(image["alt_text"])[:MAX_ALT_TEXT],
                       title=PlainTextObject(text=str(image["title"])[:MAX_TITLE]))
    block.validate_json()
    return block.to_dict()


def post_with_image(desk: Desk, item: ClaimedItem, image: dict[str, Any], blocks: list[dict[str, Any]],
                    post: Post) -> Any:
    """Post the message with `image` (content_b64, filename, title, alt_text, at: the block index) among its
    blocks; Slack's answer to the post."""
    content = base64.b64decode(image["content_b64"])
    file_id = _unshared(desk, image, content)
    if file_id is not None:
        at = min(max(0, int(image.get("at", len(blocks)))), len(blocks))
        try:
            return post([*blocks[:at], image_block(image, file_id), *blocks[at:]])
        except SlackApiError as err:
            if err.response.get("error") != "invalid_blocks":
                raise
            log.info("%s: Slack refused the picture in the message (%s); it goes in the thread",
                     item.idempotency_key, err.response.get("errors"))
    response = post(blocks)
    if file_id is not None:
        _into_thread(desk, item, image, content, str(response["channel"]), str(response["ts"]))
    return response


def _unshared(desk: Desk, image: dict[str, Any], content: bytes) -> str | None:
    """The uploaded file's id; None when Slack refuses files for good (a missing scope): the message goes without.
    A 429, a 5xx or no answer raises, and the item is retried like any post."""
    try:
        return upload_unshared(desk.client, filename=str(image["filename"]), title=str(image["title"]),
                               content=content, alt_text=str(image["alt_text"]))
    except SlackApiError as err:
        failure = slack_failure(err)
        if failure.retry_after is not None or failure.uncertain:
            raise
        log.warning("the picture could not be uploaded (%s): the message goes without it", failure.error)
        return None


def _into_thread(desk: Desk, item: ClaimedItem, image: dict[str, Any], content: bytes, channel: str,
                 ts: str) -> None:
    """The fallback: the picture as a file in the message's thread. The message is posted already, so a failure
    here costs the picture, not the message (a retry would find the message and stop there)."""
    try:
        upload_file(desk.client, channel=channel, thread_ts=ts, filename=str(image["filename"]),
                    title=str(image["title"]), content=content, before_share=lambda _id: None)
    except (SlackApiError, UploadFailed, OSError) as err:
        log.warning("%s: the picture could not go in the thread either: %s", item.idempotency_key, err)
