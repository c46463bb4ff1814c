"""Requests Slack sends to the app: signed slash commands, interactions, shortcuts and events, built as Slack
builds them, so tests drive bolt through its real HTTP path."""

from __future__ import annotations

import builtins
import hashlib
import hmac
import json
import secrets
import time
import urllib.parse
from collections.abc import Iterable
from typing import Any

JSON = dict[str, Any]

TEAM_ID = "T0"
TEAM_DOMAIN = "triagebot-test"
APP_ID = "A0TRIAGE"
BOT_USER_ID = "U0BOT"
BOT_ID = "B0BOT"
BOT_NAME = "triagebot"
WORKSPACE_URL = f"https://{TEAM_DOMAIN}.slack.com/"


# Requests Slack sends to the app
# --------------------------------------------------------------------------------------------------------------

def channel_name(channel_id: str) -> str:
    # "C0ALERTS" -> "alerts": readable names without a separate table.
    return channel_id.removeprefix("C0").removeprefix("C").lower() or channel_id.lower()


def sign(body: builtins.bytes, secret: str, timestamp: int | None = None) -> dict[str, str]:
    """The two headers Slack adds to every request: a v0 HMAC-SHA256 over ``v0:{timestamp}:{body}``."""
    ts = str(int(time.time()) if timestamp is None else timestamp)
    base = b"v0:" + ts.encode() + b":" + body
    digest = hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
    return {"X-Slack-Request-Timestamp": ts, "X-Slack-Signature": f"v0={digest}"}


def signed_headers(body: builtins.bytes, secret: str, *, form: bool, timestamp: int | None = None) -> dict[str, str]:
    """``sign`` plus the Content-Type Slack uses for that kind of body."""
    content_type = "application/x-www-form-urlencoded" if form else "application/json"
    return {"Content-Type": content_type, **sign(body, secret, timestamp)}


def _form(fields: Iterable[tuple[str, str]]) -> builtins.bytes:
    # Slack encodes spaces as '+' and '/' as '%2F', which is what quote_plus does.
    return urllib.parse.urlencode(list(fields), quote_via=urllib.parse.quote_plus).encode()


def _user_obj(user_id: str, team_id: str) -> JSON:
    name = user_id.removeprefix("U0").lower()
    return {"id": user_id, "username": name, "name": name, "team_id": team_id}


def slash_command_body(
    command: str,
    text: str,
    *,
    user_id: str = "U0ALICE",
    channel_id: str = "C0OPS",
    response_url: str,
    trigger_id: str = "t1",
    team_id: str = TEAM_ID,
) -> builtins.bytes:
    """A slash command request body, form-encoded with the fields and order Slack uses."""
    return _form(
        [
            ("token", "legacy-verification-token"),
            ("team_id", team_id),
            ("team_domain", TEAM_DOMAIN),
            ("channel_id", channel_id),
            ("channel_name", channel_name(channel_id)),
            ("user_id", user_id),
            ("user_name", user_id.removeprefix("U0").lower()),
            ("command", command),
            ("text", text),
            ("api_app_id", APP_ID),
            ("is_enterprise_install", "false"),
            ("response_url", response_url),
            ("trigger_id", trigger_id),
        ]
    )


def _payload_body(payload: JSON) -> builtins.bytes:
    # Interactivity payloads arrive as one form field holding JSON.
    return _form([("payload", json.dumps(payload, separators=(",", ":")))])


def block_action_body(
    action_id: str,
    value: str,
    *,
    user_id: str = "U0ALICE",
    channel_id: str = "C0OPS",
    message_ts: str = "1700000000.000100",
    thread_ts: str | None = None,
    response_url: str,
    block_id: str = "actions",
    button_text: str = "Button",
    message_text: str = "",
    message_blocks: list[JSON] | None = None,
    trigger_id: str = "t1",
    team_id: str = TEAM_ID,
) -> builtins.bytes:
    """A ``block_actions`` payload for a button click on a bot message."""
    container: JSON = {"type": "message", "message_ts": message_ts, "channel_id": channel_id, "is_ephemeral": False}
    message: JSON = {
        "type": "message",
        "ts": message_ts,
        "user": BOT_USER_ID,
        "bot_id": BOT_ID,
        "app_id": APP_ID,
        "text": message_text,
        "team": team_id,
        "blocks": message_blocks or [],
    }
    if thread_ts is not None:
        container["thread_ts"] = thread_ts
        message["thread_ts"] = thread_ts
    payload: JSON = {
        "type": "block_actions",
        "user": _user_obj(user_id, team_id),
        "api_app_id": APP_ID,
        "token": "legacy-verification-token",
        "container": container,
        "trigger_id": trigger_id,
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "enterprise": None,
        "is_enterprise_install": False,
        "channel": {"id": channel_id, "name": channel_name(channel_id)},
        "message": message,
        "state": {"values": {}},
        "response_url": response_url,
        "actions": [
            {
                "action_id": action_id,
                "block_id": block_id,
                "text": {"type": "plain_text", "text": button_text, "emoji": True},
                "value": value,
                "type": "button",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    return _payload_body(payload)


def view_submission_body(view: JSON, values: JSON, *, user_id: str = "U0ALICE", trigger_id: str = "t1",
                         team_id: str = TEAM_ID) -> builtins.bytes:
    """A ``view_submission`` payload: someone pressed a modal's submit button with ``values`` as its state."""
    payload: JSON = {
        "type": "view_submission", "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "user": _user_obj(user_id, team_id), "api_app_id": APP_ID, "token": "legacy-verification-token",
        "trigger_id": trigger_id, "view": {**view, "state": {"values": values}}, "response_urls": [],
        "is_enterprise_install": False, "enterprise": None,
    }
    return _payload_body(payload)


def message_shortcut_body(
    callback_id: str,
    message_text: str,
    *,
    user_id: str = "U0ALICE",
    channel_id: str = "C0OPS",
    message_ts: str = "1700000000.000100",
    message_user: str = "U0ALICE",
    thread_ts: str | None = None,
    response_url: str,
    trigger_id: str = "t1",
    team_id: str = TEAM_ID,
) -> builtins.bytes:
    """A ``message_action`` payload: someone ran the app's shortcut on a message."""
    message: JSON = {"type": "message", "user": message_user, "ts": message_ts, "text": message_text}
    if thread_ts is not None:
        message["thread_ts"] = thread_ts
    payload: JSON = {
        "type": "message_action",
        "token": "legacy-verification-token",
        "action_ts": f"{time.time():.6f}",
        "team": {"id": team_id, "domain": TEAM_DOMAIN},
        "user": _user_obj(user_id, team_id),
        "channel": {"id": channel_id, "name": channel_name(channel_id)},
        "is_enterprise_install": False,
        "enterprise": None,
        "callback_id": callback_id,
        "trigger_id": trigger_id,
        "message_ts": message_ts,
        "message": message,
        "response_url": response_url,
    }
    return _payload_body(payload)


def event_body(
    event: JSON,
    *,
    team_id: str = TEAM_ID,
    api_app_id: str = APP_ID,
    event_id: str | None = None,
    event_time: int | None = None,
) -> builtins.bytes:
    """An Events API ``event_callback`` envelope around ``event`` (JSON, as Slack posts it)."""
    envelope: JSON = {
        "token": "legacy-verification-token",
        "team_id": team_id,
        "api_app_id": api_app_id,
        "event": event,
        "type": "event_callback",
        "event_id": event_id or f"Ev{secrets.token_hex(5).upper()}",
        "event_time": int(time.time()) if event_time is None else event_time,
        "authorizations": [
            {
                "enterprise_id": None,
                "team_id": team_id,
                "user_id": BOT_USER_ID,
                "is_bot": True,
                "is_enterprise_install": False,
            }
        ],
        "is_ext_shared_channel": False,
        "event_context": secrets.token_hex(16),
    }
    return json.dumps(envelope).encode()


def app_home_opened_event(user: str = "U0ALICE", *, tab: str = "home") -> JSON:
    return {
        "type": "app_home_opened",
        "user": user,
        "channel": "D0HOME",
        "tab": tab,
        "event_ts": f"{time.time():.6f}",
    }


def message_event(
    text: str, *, user: str = "U0ALICE", channel: str = "C0OPS", ts: str | None = None, thread_ts: str | None = None
) -> JSON:
    ts = ts or f"{time.time():.6f}"
    event: JSON = {
        "type": "message",
        "channel": channel,
        "user": user,
        "text": text,
        "ts": ts,
        "event_ts": ts,
        "channel_type": "channel",
    }
    if thread_ts is not None:
        event["thread_ts"] = thread_ts
    return event


def app_mention_event(
    text: str, *, user: str = "U0ALICE", channel: str = "C0OPS", ts: str | None = None, thread_ts: str | None = None
) -> JSON:
    event = message_event(f"<@{BOT_USER_ID}> {text}", user=user, channel=channel, ts=ts, thread_ts=thread_ts)
    event["type"] = "app_mention"
    del event["channel_type"]
    return event
