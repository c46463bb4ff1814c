"""A message Slack refuses for its size or its blocks (`msg_too_long`, `msg_blocks_too_long`, `invalid_blocks`) is
sent again at once as plain, cut text; the poster then queues the whole text as a file in the thread. Nothing is
dead for its size."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from slack_sdk.errors import SlackApiError

from bot.delivery.words import CUT_MARK, TEXT_LIMIT, fitted_text
from bot.metrics import Metrics
from bot.store.outbox import ClaimedItem

log = logging.getLogger("triagebot.poster")

# Refusals of the content itself: sent again as plain, shorter text (PLAIN_LIMITS, in turn), never dead for this.
CONTENT_ERRORS = frozenset({"msg_too_long", "msg_blocks_too_long", "invalid_blocks", "invalid_blocks_format",
                            "invalid_metadata_format", "invalid_metadata_schema", "metadata_too_large"})
PLAIN_LIMITS = (TEXT_LIMIT, 1000)


def send_fitting(call: Callable[[ClaimedItem], dict[str, Any]], item: ClaimedItem,
                 metrics: Metrics) -> tuple[dict[str, Any], str | None]:
    """`call(item)`; if Slack refuses the content, again as plain cut text. Returns the result and, when the text
    had to be cut, the whole of it (to go into the thread as a file)."""
    try:
        return call(item), None
    except SlackApiError as err:
        error = str(err.response.get("error") or "")
        if error not in CONTENT_ERRORS or item.method not in ("chat.postMessage", "chat.update"):
            raise
        metrics.slack_errors.labels(item.method, error).inc()
        log.warning("slack refused %s for %s (%s): sending it as plain text", item.method, item.idempotency_key,
                    error)
    whole = plain_text(item.payload)
    for limit in PLAIN_LIMITS:
        text, _ = fitted_text(whole, limit)
        if not text.endswith(CUT_MARK):
            text = text + CUT_MARK if item.payload.get("blocks") else text
        # What the sender would turn back into blocks goes too: a picture (`image`), a note's content (`recurrence`).
        plain = {k: v for k, v in item.payload.items() if k not in ("blocks", "metadata", "image", "recurrence")}
        plain["text"] = text
        if item.payload.get("metadata") and limit == PLAIN_LIMITS[0]:
            plain["metadata"] = item.payload["metadata"]
        try:
            return call(replace(item, payload=plain)), whole
        except SlackApiError as err:
            if str(err.response.get("error") or "") not in CONTENT_ERRORS or limit == PLAIN_LIMITS[-1]:
                raise
    raise AssertionError("unreachable")  # the loop returns or raises on its last limit


def plain_text(payload: dict[str, Any]) -> str:
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
