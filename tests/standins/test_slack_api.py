"""The Slack stand-in, driven only through the real clients: slack_sdk's WebClient/WebhookClient, slack-bolt, httpx.

These tests pin the stand-in's behaviour to what Slack documents (and, where Slack does not document it, to what
Slack was observed doing), so the bot's own tests can trust it.
"""

from __future__ import annotations

import json
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import httpx
import pytest
import uvicorn
from slack_bolt import Ack, App, BoltRequest, Respond, Say
from slack_bolt.adapter.starlette import SlackRequestHandler
from slack_bolt.error import BoltError
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.builtin_handlers import RateLimitErrorRetryHandler, ServerErrorRetryHandler
from slack_sdk.signature import SignatureVerifier
from slack_sdk.webhook import WebhookClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from tests.standins.slack_api import (
    BOT_USER_ID,
    TEAM_ID,
    Message,
    SlackFault,
    SlackStandIn,
    app_home_opened_event,
    app_mention_event,
    block_action_body,
    event_body,
    message_shortcut_body,
    sign,
    signed_headers,
    slash_command_body,
)

TOKEN = "xoxb-test-token"
SECRET = "8f742231b10e8888abcd99yyyzzz85a5"
JSONDict = dict[str, Any]


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    # A deep burst, so tests about other behaviour do not trip the per-channel post limit.
    with SlackStandIn(burst=50) as s:
        yield s


@pytest.fixture
def limited() -> Iterator[SlackStandIn]:
    """The default limits: 1 post/s per channel after a burst of 3."""
    with SlackStandIn() as s:
        yield s


@pytest.fixture
def client(standin: SlackStandIn) -> WebClient:
    return WebClient(token=TOKEN, base_url=standin.api_url)


def section(text: str, kind: str = "mrkdwn") -> JSONDict:
    return {"type": "section", "text": {"type": kind, "text": text}}


def api_error(call: Callable[[], object]) -> SlackApiError:
    with pytest.raises(SlackApiError) as info:
        call()
    return info.value


# ----------------------------------------------------------------------------------------------------------------
# Messages, updates, threads
# ----------------------------------------------------------------------------------------------------------------


def test_auth_test_identifies_the_bot(client: WebClient) -> None:
    resp = client.auth_test()
    assert resp["ok"] is True
    assert resp["user_id"] == BOT_USER_ID
    assert resp["url"].startswith("https://")


def test_post_returns_slack_shape_and_is_recorded(standin: SlackStandIn, client: WebClient) -> None:
    resp = client.chat_postMessage(channel="C0ALERTS", text="GPU node down", blocks=[section("*GPU node down*")])
    assert resp.status_code == 200
    assert resp["ok"] is True and resp["channel"] == "C0ALERTS"
    assert resp["message"]["text"] == "GPU node down"
    assert resp["message"]["blocks"] == [section("*GPU node down*")]
    [msg] = standin.messages["C0ALERTS"]
    assert msg.ts == resp["ts"] and msg.user == BOT_USER_ID and msg.thread_ts is None
    [call] = standin.calls_to("chat.postMessage")
    assert call.params["channel"] == "C0ALERTS" and call.status == 200 and call.response["ok"] is True


def test_channel_may_be_given_by_name(standin: SlackStandIn, client: WebClient) -> None:
    resp = client.chat_postMessage(channel="#ops", text="by name")
    assert resp["channel"] == "C0OPS"
    assert standin.messages["C0OPS"][0].text == "by name"


def test_timestamps_are_unique_and_increasing(client: WebClient) -> None:
    many = WebClient(token=TOKEN, base_url=client.base_url)
    tss = [many.chat_postMessage(channel=c, text="x")["ts"] for c in ("C0OPS", "C0ALERTS", "C0OPS")]
    assert tss == sorted(tss) and len(set(tss)) == 3


def test_thread_replies_broadcast_and_reply_to_reply(standin: SlackStandIn, client: WebClient) -> None:
    parent = client.chat_postMessage(channel="C0OPS", text="triage: job hang")["ts"]
    first = client.chat_postMessage(channel="C0OPS", text="evidence 1", thread_ts=parent)["ts"]
    # Slack files a reply to a reply under the thread's parent.
    nested = client.chat_postMessage(channel="C0OPS", text="evidence 2", thread_ts=first)
    assert nested["message"]["thread_ts"] == parent
    client.chat_postMessage(channel="C0OPS", text="verdict", thread_ts=parent, reply_broadcast=True)

    thread = standin.thread("C0OPS", parent)
    assert [m.text for m in thread] == ["triage: job hang", "evidence 1", "evidence 2", "verdict"]
    assert [m.text for m in standin.top_level("C0OPS")] == ["triage: job hang", "verdict"]

    replies = client.conversations_replies(channel="C0OPS", ts=parent)
    assert [m["text"] for m in replies["messages"]] == [m.text for m in thread]
    assert replies["messages"][0]["reply_count"] == 3
    assert replies["has_more"] is False


def test_conversations_replies_paginates_with_cursor(client: WebClient) -> None:
    parent = client.chat_postMessage(channel="C0OPS", text="p")["ts"]
    for i in range(2):
        client.chat_postMessage(channel="C0OPS", text=f"r{i}", thread_ts=parent)
    page1 = client.conversations_replies(channel="C0OPS", ts=parent, limit=2)
    assert page1["has_more"] is True and len(page1["messages"]) == 2
    page2 = client.conversations_replies(
        channel="C0OPS", ts=parent, limit=2, cursor=page1["response_metadata"]["next_cursor"]
    )
    assert [m["text"] for m in page2["messages"]] == ["r1"]
    assert page2["response_metadata"]["next_cursor"] == ""


def test_thread_ts_of_a_missing_message_is_thread_not_found(client: WebClient) -> None:
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="x", thread_ts="1.000001"))
    assert err.response["error"] == "thread_not_found"
    err = api_error(lambda: client.conversations_replies(channel="C0OPS", ts="1.000001"))
    assert err.response["error"] == "thread_not_found"


def test_update_keeps_history(standin: SlackStandIn, client: WebClient) -> None:
    ts = client.chat_postMessage(channel="C0OPS", text="triage running", blocks=[section("running")])["ts"]
    resp = client.chat_update(channel="C0OPS", ts=ts, text="triage done", blocks=[section("done")])
    assert resp["ok"] is True and resp["ts"] == ts and resp["text"] == "triage done"
    [msg] = standin.messages["C0OPS"]
    assert msg.text == "triage done" and msg.blocks == [section("done")]
    assert [e["text"] for e in msg.edits] == ["triage running"]
    assert resp["message"]["edited"]["ts"] == msg.edits[0]["edited_ts"]


def test_update_errors(standin: SlackStandIn, client: WebClient) -> None:
    err = api_error(lambda: client.chat_update(channel="C0OPS", ts="1.000001", text="x"))
    assert err.response.status_code == 200 and err.response["error"] == "message_not_found"
    human = standin.post_user_message("C0OPS", "written by alice")
    err = api_error(lambda: client.chat_update(channel="C0OPS", ts=human.ts, text="x"))
    assert err.response["error"] == "cant_update_message"
    ts = client.chat_postMessage(channel="C0OPS", text="ok")["ts"]
    err = api_error(lambda: client.chat_update(channel="C0OPS", ts=ts, text="y", blocks=[section("y" * 3001)]))
    assert err.response["error"] == "invalid_blocks"
    assert standin.messages["C0OPS"][-1].text == "ok"


def test_ephemeral_permalink_channel_user_reaction(standin: SlackStandIn, client: WebClient) -> None:
    eph = client.chat_postEphemeral(channel="C0OPS", user="U0ALICE", text="only you")
    assert eph["ok"] is True and standin.ephemerals[0].extra["to_user"] == "U0ALICE"
    assert standin.messages["C0OPS"] == []
    err = api_error(lambda: client.chat_postEphemeral(channel="C0OPS", user="U0NOBODY", text="x"))
    assert err.response["error"] == "user_not_in_channel"

    ts = client.chat_postMessage(channel="C0OPS", text="x")["ts"]
    link = client.chat_getPermalink(channel="C0OPS", message_ts=ts)["permalink"]
    assert link.endswith(f"/archives/C0OPS/p{ts.replace('.', '')}")
    assert api_error(lambda: client.chat_getPermalink(channel="C0OPS", message_ts="1.1")).response["error"] == (
        "message_not_found"
    )

    assert client.conversations_info(channel="C0ALERTS")["channel"]["name"] == "alerts"
    assert client.users_info(user="U0ALICE")["user"]["name"] == "alice"
    assert api_error(lambda: client.users_info(user="U0NOBODY")).response["error"] == "user_not_found"

    assert client.reactions_add(channel="C0OPS", timestamp=ts, name="eyes")["ok"] is True
    assert standin.messages["C0OPS"][0].reactions == {"eyes": [BOT_USER_ID]}
    err = api_error(lambda: client.reactions_add(channel="C0OPS", timestamp=ts, name="eyes"))
    assert err.response["error"] == "already_reacted"


# ----------------------------------------------------------------------------------------------------------------
# Limits and error shapes
# ----------------------------------------------------------------------------------------------------------------


def _button(text: str = "Ack", action_id: str = "ack") -> JSONDict:
    return {"type": "button", "text": {"type": "plain_text", "text": text}, "action_id": action_id, "value": "v"}


INVALID_BLOCKS: list[tuple[str, list[JSONDict], str]] = [
    ("51 blocks", [section("x")] * 51, "no more than 50 items allowed [json-pointer:/blocks]"),
    ("section 3001", [section("s" * 3001)], "must be less than 3001 characters [json-pointer:/blocks/0/text/text]"),
    (
        "context 3001",
        [{"type": "context", "elements": [{"type": "mrkdwn", "text": "c" * 3001}]}],
        "must be less than 3001 characters [json-pointer:/blocks/0/elements/0/text]",
    ),
    (
        "section field 2001",
        [{"type": "section", "fields": [{"type": "mrkdwn", "text": "f" * 2001}]}],
        "must be less than 2001 characters [json-pointer:/blocks/0/fields/0/text]",
    ),
    (
        "header 151",
        [{"type": "header", "text": {"type": "plain_text", "text": "h" * 151}}],
        "must be less than 151 characters [json-pointer:/blocks/0/text/text]",
    ),
    (
        "header mrkdwn",
        [{"type": "header", "text": {"type": "mrkdwn", "text": "h"}}],
        "must be one of: plain_text [json-pointer:/blocks/0/text/type]",
    ),
    (
        "button text 76",
        [{"type": "actions", "elements": [_button(text="b" * 76)]}],
        "must be less than 76 characters [json-pointer:/blocks/0/elements/0/text/text]",
    ),
    (
        "confirm text 301",
        [{"type": "actions", "elements": [{**_button(), "confirm": {
            "title": {"type": "plain_text", "text": "Sure?"}, "text": {"type": "mrkdwn", "text": "t" * 301},
            "confirm": {"type": "plain_text", "text": "Yes"}, "deny": {"type": "plain_text", "text": "No"}}}]}],
        "must be less than 301 characters [json-pointer:/blocks/0/elements/0/confirm/text/text]",
    ),
    (
        "confirm title mrkdwn",
        [{"type": "actions", "elements": [{**_button(), "confirm": {
            "title": {"type": "mrkdwn", "text": "Sure?"}, "text": {"type": "mrkdwn", "text": "t"},
            "confirm": {"type": "plain_text", "text": "Yes"}, "deny": {"type": "plain_text", "text": "No"}}}]}],
        "must be one of: plain_text [json-pointer:/blocks/0/elements/0/confirm/title/type]",
    ),
    (
        "action_id 256",
        [{"type": "actions", "elements": [_button(action_id="a" * 256)]}],
        "must be less than 256 characters [json-pointer:/blocks/0/elements/0/action_id]",
    ),
    ("empty text", [section("")], "must be more than 0 characters [json-pointer:/blocks/0/text/text]"),
    ("no type", [{"text": {"type": "mrkdwn", "text": "x"}}], "missing required field: type [json-pointer:/blocks/0]"),
    ("unknown type", [{"type": "sectoin"}], "unsupported type: sectoin [json-pointer:/blocks/0/type]"),
    ("section without text", [{"type": "section"}], "must provide either text or fields [json-pointer:/blocks/0]"),
    (
        "duplicate block_id",
        [{**section("a"), "block_id": "b"}, {**section("b"), "block_id": "b"}],
        "duplicate block_id: b [json-pointer:/blocks/1/block_id]",
    ),
]


@pytest.mark.parametrize(
    ("blocks", "message"), [(b, m) for _, b, m in INVALID_BLOCKS], ids=[i for i, _, _ in INVALID_BLOCKS]
)
def test_invalid_blocks_match_slack_error_shape(
    standin: SlackStandIn, client: WebClient, blocks: list[JSONDict], message: str
) -> None:
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="fallback", blocks=blocks))
    assert err.response.status_code == 200
    assert err.response["ok"] is False and err.response["error"] == "invalid_blocks"
    assert message in err.response["errors"]
    assert f"[ERROR] {message}" in err.response["response_metadata"]["messages"]
    assert standin.messages["C0OPS"] == []


def test_limits_are_inclusive(standin: SlackStandIn, client: WebClient) -> None:
    ok_blocks = [
        {"type": "header", "text": {"type": "plain_text", "text": "h" * 150}},
        section("s" * 3000),
        {"type": "actions", "elements": [_button(text="b" * 75, action_id="a" * 255)]},
    ]
    client.chat_postMessage(channel="C0OPS", text="fallback", blocks=ok_blocks)
    client.chat_postMessage(channel="C0ALERTS", text="fallback", blocks=[{"type": "divider"}] * 50)
    client.chat_postMessage(channel="C0ALERTS", text="t" * 40_000)
    assert len(standin.messages["C0OPS"]) == 1 and len(standin.messages["C0ALERTS"]) == 2


def test_message_text_over_40k_is_msg_too_long(client: WebClient) -> None:
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="t" * 40_001))
    assert err.response["error"] == "msg_too_long"


def test_total_blocks_size_is_msg_blocks_too_long(client: WebClient) -> None:
    # Each section is valid on its own; together they pass Slack's ~13.2k undocumented ceiling.
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="f", blocks=[section("x" * 2900)] * 5))
    assert err.response["error"] == "msg_blocks_too_long"
    client.chat_postMessage(channel="C0OPS", text="f", blocks=[section("x" * 3000)] * 4)


def test_missing_content_unknown_channel_and_auth(standin: SlackStandIn, client: WebClient) -> None:
    with pytest.warns(UserWarning, match="top-level `text`"):  # slack_sdk's own client-side hint
        assert api_error(lambda: client.chat_postMessage(channel="C0OPS", text="")).response["error"] == "no_text"
    err = api_error(lambda: client.chat_postMessage(channel="C0NOPE", text="x"))
    assert err.response.status_code == 200 and err.response["error"] == "channel_not_found"

    bad = WebClient(token="xoxb-wrong", base_url=standin.api_url)
    err = api_error(lambda: bad.chat_postMessage(channel="C0OPS", text="x"))
    assert err.response.status_code == 200 and err.response["error"] == "invalid_auth"
    anonymous = WebClient(base_url=standin.api_url)
    err = api_error(lambda: anonymous.auth_test())
    assert err.response.status_code == 200 and err.response["error"] == "not_authed"
    assert standin.messages["C0OPS"] == []


def test_raw_http_error_shapes(standin: SlackStandIn) -> None:
    auth = {"Authorization": f"Bearer {TOKEN}"}
    # Form-encoded posts carry blocks as a JSON string; a broken one is invalid_blocks_format.
    r = httpx.post(f"{standin.api_url}chat.postMessage", data={"channel": "C0OPS", "blocks": "[{"}, headers=auth)
    assert r.status_code == 200 and r.json() == {"ok": False, "error": "invalid_blocks_format"}
    # The token may also travel as a form field.
    r = httpx.post(f"{standin.api_url}chat.postMessage", data={"token": TOKEN, "channel": "C0OPS", "text": "form"})
    assert r.json()["ok"] is True
    # JSON without a charset is accepted with Slack's missing_charset warning.
    r = httpx.post(
        f"{standin.api_url}chat.postMessage",
        content=json.dumps({"channel": "C0OPS", "text": "json"}),
        headers={**auth, "Content-Type": "application/json"},
    )
    assert r.json()["ok"] is True and r.json()["warning"] == "missing_charset"
    r = httpx.post(f"{standin.api_url}nope.method", headers=auth)
    assert r.status_code == 404 and r.json()["error"] == "unknown_method"


# ----------------------------------------------------------------------------------------------------------------
# Rate limits and faults
# ----------------------------------------------------------------------------------------------------------------


def test_post_rate_limit_answers_429_with_retry_after(limited: SlackStandIn) -> None:
    standin, client = limited, WebClient(token=TOKEN, base_url=limited.api_url)
    for i in range(3):  # the burst
        client.chat_postMessage(channel="C0ALERTS", text=f"alert {i}")
    err = api_error(lambda: client.chat_postMessage(channel="C0ALERTS", text="one too many"))
    assert err.response.status_code == 429
    assert err.response["error"] == "ratelimited"
    assert int(err.response.headers["Retry-After"]) >= 1
    # The limit is per channel.
    client.chat_postMessage(channel="C0OPS", text="elsewhere")
    assert len(standin.messages["C0ALERTS"]) == 3
    assert [c.status for c in standin.calls_to("chat.postMessage")].count(429) == 1


def test_rate_limit_retry_handler_recovers(limited: SlackStandIn) -> None:
    standin = limited
    client = WebClient(
        token=TOKEN, base_url=standin.api_url, retry_handlers=[RateLimitErrorRetryHandler(max_retry_count=2)]
    )
    started = time.monotonic()
    for i in range(4):
        client.chat_postMessage(channel="C0ALERTS", text=f"alert {i}")
    assert time.monotonic() - started >= 1.0  # it honoured Retry-After
    assert [m.text for m in standin.messages["C0ALERTS"]] == [f"alert {i}" for i in range(4)]
    assert [c.status for c in standin.calls_to("chat.postMessage")] == [200, 200, 200, 429, 200]


def test_faults_override_and_expire(standin: SlackStandIn) -> None:
    standin.set_faults([SlackFault("chat.postMessage", error="internal_error", status=500, times=1)])
    client = WebClient(token=TOKEN, base_url=standin.api_url)
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="x"))
    assert err.response.status_code == 500 and err.response["error"] == "internal_error"
    client.chat_postMessage(channel="C0OPS", text="second try")  # times=1 used up

    standin.set_faults([SlackFault("chat.postMessage", status=503, times=1)])
    retrying = WebClient(token=TOKEN, base_url=standin.api_url, retry_handlers=[ServerErrorRetryHandler()])
    retrying.chat_postMessage(channel="C0OPS", text="after outage")
    assert [m.text for m in standin.messages["C0OPS"]] == ["second try", "after outage"]
    outage = [c for c in standin.calls if c.status == 503]
    assert outage and "503" in outage[0].response["body"]  # an HTML page, not API JSON

    standin.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=7, times=1)])
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="x"))
    assert err.response.status_code == 429 and err.response.headers["Retry-After"] == "7"

    standin.set_faults([SlackFault("*", error="invalid_auth")])
    assert api_error(lambda: client.auth_test()).response["error"] == "invalid_auth"

    standin.set_faults([SlackFault("conversations.info", delay=0.3)])
    started = time.monotonic()
    assert client.conversations_info(channel="C0OPS")["ok"] is True
    assert time.monotonic() - started >= 0.3


def test_bolt_refuses_to_start_when_auth_fails(standin: SlackStandIn) -> None:
    standin.set_faults([SlackFault("auth.test", error="invalid_auth")])
    with pytest.raises(BoltError):
        App(signing_secret=SECRET, client=WebClient(token=TOKEN, base_url=standin.api_url))


# ----------------------------------------------------------------------------------------------------------------
# Files
# ----------------------------------------------------------------------------------------------------------------


def test_files_upload_v2_end_to_end(standin: SlackStandIn, client: WebClient) -> None:
    parent = client.chat_postMessage(channel="C0OPS", text="triage")["ts"]
    evidence = b"kubelet: Xid 79 on GPU 3\n" * 100
    resp = client.files_upload_v2(
        channel="C0OPS",
        thread_ts=parent,
        content=evidence,
        filename="kmsg.txt",
        title="kmsg excerpt",
        initial_comment="raw evidence",
    )
    assert resp["ok"] is True and resp["file"]["title"] == "kmsg excerpt"
    [f] = standin.files
    assert f.bytes == evidence and f.length == len(evidence)
    assert (f.name, f.title, f.channel, f.thread_ts) == ("kmsg.txt", "kmsg excerpt", "C0OPS", parent)
    share = standin.thread("C0OPS", parent)[-1]
    assert share.file_ids == [f.id] and share.text == "raw evidence"
    steps = [c.method for c in standin.calls]
    assert steps[-3:] == ["files.getUploadURLExternal", "upload", "files.completeUploadExternal"]
    # The share is a message in the thread listing the file's object, as conversations.replies shows it.
    listed = client.conversations_replies(channel="C0OPS", ts=parent)["messages"][-1]
    assert listed["upload"] is True and [(x["id"], x["name"], x["title"]) for x in listed["files"]] == \
        [(f.id, "kmsg.txt", "kmsg excerpt")]


def test_an_image_block_shows_only_a_file_uploaded_to_this_workspace(standin: SlackStandIn, client: WebClient) -> None:
    def image(ref: dict[str, str]) -> list[dict[str, Any]]:
        return [{"type": "section", "text": {"type": "mrkdwn", "text": "digest"}},
                {"type": "image", "slack_file": ref, "alt_text": "a bar chart"}]

    # Unshared (no channel): the file is the bot's own, and a message may show it.
    unshared = client.files_upload_v2(content=b"\x89PNG...", filename="c.png", title="chart")["file"]["id"]
    assert client.chat_postMessage(channel="C0OPS", text="d", blocks=image({"id": unshared}))["ok"] is True
    [f] = standin.files
    assert f.channel is None
    url = f"https://files.slack.com/files-pri/{TEAM_ID}-{unshared}/c.png"
    assert client.chat_postMessage(channel="C0OPS", text="d", blocks=image({"url": url}))["ok"] is True
    # A file never uploaded (or only half: no completeUploadExternal), as Slack words it.
    pending = client.files_getUploadURLExternal(filename="x.png", length=3)["file_id"]
    for ref in ({"id": "F0NOTHERE"}, {"id": pending}, {"url": "https://example.com/x.png"}):
        err = api_error(lambda ref=ref: client.chat_postMessage(channel="C0OPS", text="d", blocks=image(ref)))
        assert err.response["error"] == "invalid_blocks"
        assert err.response["errors"] == ["invalid slack file [json-pointer:/blocks/1/slack_file]"]
    standin.slack_files_shown = False  # still processing: even the real file is refused for now
    err = api_error(lambda: client.chat_postMessage(channel="C0OPS", text="d", blocks=image({"id": unshared})))
    assert err.response["error"] == "invalid_blocks"


def test_upload_errors(standin: SlackStandIn, client: WebClient) -> None:
    # The URL step reads form fields only, as Slack's does.
    err = api_error(lambda: client.api_call("files.getUploadURLExternal", json={"filename": "a", "length": 1}))
    assert err.response["error"] == "invalid_arguments"
    ticket = client.files_getUploadURLExternal(filename="a.txt", length=3)
    # Completing before the bytes arrived finds no file.
    err = api_error(lambda: client.files_completeUploadExternal(files=[{"id": ticket["file_id"]}], channel_id="C0OPS"))
    assert err.response["error"] == "file_not_found"
    # The upload URL accepts multipart too.
    r = httpx.post(ticket["upload_url"], files={"file": ("a.txt", b"abc")})
    assert r.status_code == 200 and r.text == "OK - 3"
    err = api_error(lambda: client.files_completeUploadExternal(files=[{"id": ticket["file_id"]}], channel_id="C0X"))
    assert err.response["error"] == "channel_not_found"
    client.files_completeUploadExternal(files=[{"id": ticket["file_id"], "title": "T"}], channel_id="C0OPS")
    assert standin.files[0].bytes == b"abc" and standin.files[0].title == "T"


# ----------------------------------------------------------------------------------------------------------------
# Views
# ----------------------------------------------------------------------------------------------------------------


def test_views_publish_and_limits(standin: SlackStandIn, client: WebClient) -> None:
    home = {"type": "home", "blocks": [section("Recent incidents")]}
    resp = client.views_publish(user_id="U0ALICE", view=home)
    assert resp["ok"] is True and resp["view"]["type"] == "home"
    assert standin.home_views["U0ALICE"]["blocks"] == home["blocks"]
    # 100 blocks is fine for a view, 101 is not, and views report it as invalid_arguments.
    client.views_publish(user_id="U0ALICE", view={"type": "home", "blocks": [{"type": "divider"}] * 100})
    err = api_error(
        lambda: client.views_publish(user_id="U0ALICE", view={"type": "home", "blocks": [section("x")] * 101})
    )
    assert err.response["error"] == "invalid_arguments"
    assert (
        "[ERROR] no more than 100 items allowed [json-pointer:/view/blocks]"
        in err.response["response_metadata"]["messages"]
    )
    err = api_error(
        lambda: client.views_publish(user_id="U0ALICE", view={"type": "home", "blocks": [section("x" * 3001)]})
    )
    assert "must be less than 3001 characters [json-pointer:/view/blocks/0/text/text]" in err.response["errors"]
    err = api_error(lambda: client.views_publish(user_id="U0ALICE", view=home, hash="stale"))
    assert err.response["error"] == "hash_conflict"


def test_views_open_modal(standin: SlackStandIn, client: WebClient) -> None:
    modal: JSONDict = {"type": "modal", "title": {"type": "plain_text", "text": "Triage"}, "blocks": [section("x")]}
    assert client.views_open(trigger_id="t1", view=modal)["view"]["type"] == "modal"
    long_title = {**modal, "title": {"type": "plain_text", "text": "t" * 25}}
    err = api_error(lambda: client.views_open(trigger_id="t1", view=long_title))
    assert "must be less than 25 characters [json-pointer:/view/title/text]" in err.response["errors"]
    assert len(standin.modals) == 1


# ----------------------------------------------------------------------------------------------------------------
# response_url
# ----------------------------------------------------------------------------------------------------------------


def test_response_url_takes_five_posts(standin: SlackStandIn) -> None:
    url = standin.response_url()
    hook = WebhookClient(url)
    for i in range(5):
        resp = hook.send(text=f"progress {i}")
        assert resp.status_code == 200
    used = hook.send(text="sixth")
    assert used.status_code == 404 and json.loads(used.body)["error"] == "used_url"
    assert [p["text"] for p in standin.response_urls[url]] == [f"progress {i}" for i in range(5)]
    # Ephemeral by default: seen by the invoking user only.
    assert standin.messages["C0OPS"] == [] and len(standin.ephemerals) == 5


def test_response_url_expires_and_validates(standin: SlackStandIn) -> None:
    expired = standin.response_url(ttl=0.05)
    time.sleep(0.1)
    resp = WebhookClient(expired).send(text="late")
    assert resp.status_code == 404 and json.loads(resp.body)["error"] == "expired_url"

    hook = WebhookClient(standin.response_url())
    bad = hook.send(text="x", blocks=[section("y" * 3001)])
    assert bad.status_code == 400 and json.loads(bad.body)["error"] == "invalid_blocks"
    assert hook.send(text="").status_code == 400  # no_text


def test_response_url_in_channel_and_replace_original(standin: SlackStandIn, client: WebClient) -> None:
    ts = client.chat_postMessage(channel="C0OPS", text="Ack?", blocks=[section("Ack?")])["ts"]
    hook = WebhookClient(standin.response_url(channel="C0OPS", message_ts=ts))
    assert hook.send(text="acked by alice", replace_original=True).status_code == 200
    [msg] = standin.messages["C0OPS"]
    assert msg.text == "acked by alice" and msg.edits[0]["text"] == "Ack?"
    assert hook.send(text="for everyone", response_type="in_channel").status_code == 200
    assert [m.text for m in standin.messages["C0OPS"]] == ["acked by alice", "for everyone"]


# ----------------------------------------------------------------------------------------------------------------
# Signatures and request bodies
# ----------------------------------------------------------------------------------------------------------------


def test_signature_helper_matches_slack_sdk_verifier(standin: SlackStandIn) -> None:
    body = slash_command_body("/triage", "gpu-node-7 since=1h", response_url=standin.response_url())
    verifier = SignatureVerifier(SECRET)
    assert verifier.is_valid_request(body, sign(body, SECRET))
    stale = int(time.time()) - 301
    assert not verifier.is_valid_request(body, sign(body, SECRET, timestamp=stale))
    assert not verifier.is_valid_request(body + b"&text=rm+-rf", sign(body, SECRET))
    assert not verifier.is_valid_request(body, sign(body, "another-secret"))


def test_bodies_are_encoded_like_slacks(standin: SlackStandIn) -> None:
    url = standin.response_url()
    raw = slash_command_body("/triage", "node=a b", response_url=url)
    assert b"command=%2Ftriage" in raw and b"text=node%3Da+b" in raw
    form = dict(urllib.parse.parse_qsl(raw.decode()))
    assert form["response_url"] == url and form["user_id"] == "U0ALICE" and form["channel_id"] == "C0OPS"

    action = dict(urllib.parse.parse_qsl(block_action_body("ack", "inc-1", response_url=url).decode()))
    payload = json.loads(action["payload"])
    assert payload["type"] == "block_actions" and payload["actions"][0]["value"] == "inc-1"

    shortcut = json.loads(
        dict(urllib.parse.parse_qsl(message_shortcut_body("triage_this", "pod crashloop", response_url=url).decode()))[
            "payload"
        ]
    )
    assert shortcut["type"] == "message_action" and shortcut["message"]["text"] == "pod crashloop"

    envelope = json.loads(event_body(app_mention_event("triage please")))
    assert envelope["type"] == "event_callback" and envelope["event"]["type"] == "app_mention"


# ----------------------------------------------------------------------------------------------------------------
# slack-bolt against the stand-in
# ----------------------------------------------------------------------------------------------------------------


def make_app(standin: SlackStandIn) -> App:
    # The token goes on the WebClient: bolt ignores `token=` once `client=` is given (components.md section 5).
    app = App(signing_secret=SECRET, client=WebClient(token=TOKEN, base_url=standin.api_url))

    @app.command("/triage")
    def triage(ack: Ack, command: JSONDict, respond: Respond, say: Say) -> None:
        ack(f"Triaging {command['text']}...")
        respond(f"Evidence for {command['text']} collected")
        say(text=f"Verdict for {command['text']}", blocks=[section(f"*Verdict* for {command['text']}")])

    @app.action("ack")
    def acked(ack: Ack, body: JSONDict, respond: Respond) -> None:
        ack()
        respond(text=f"Acknowledged by <@{body['user']['id']}>", replace_original=True)

    @app.shortcut("triage_this")
    def shortcut(ack: Ack, shortcut: JSONDict, respond: Respond) -> None:
        ack()
        respond(f"Triaging: {shortcut['message']['text']}")

    @app.event("app_mention")
    def mention(event: JSONDict, say: Say) -> None:
        say(text="On it", thread_ts=event.get("thread_ts") or event["ts"])

    @app.event("app_home_opened")
    def home(event: JSONDict, client: WebClient) -> None:
        client.views_publish(user_id=event["user"], view={"type": "home", "blocks": [section("Recent incidents")]})

    return app


def bolt_request(body: bytes, headers: dict[str, str]) -> BoltRequest:
    typed: dict[str, str | Sequence[str]] = dict(headers)  # BoltRequest's annotation wants the wider value type
    return BoltRequest(body=body.decode(), headers=typed)


def dispatch(app: App, body: bytes, *, form: bool = True) -> tuple[int, str]:
    resp = app.dispatch(bolt_request(body, signed_headers(body, SECRET, form=form)))
    return resp.status, resp.body


def test_bolt_slash_command_ack_respond_say(standin: SlackStandIn) -> None:
    app = make_app(standin)
    assert [c.method for c in standin.calls] == ["auth.test"]
    url = standin.response_url()
    status, body = dispatch(app, slash_command_body("/triage", "gpu-node-7", response_url=url))
    assert status == 200 and body == "Triaging gpu-node-7..."  # bolt acks a bare string as text/plain
    standin.wait_for(lambda: bool(standin.response_urls[url]) and bool(standin.messages["C0OPS"]))
    assert standin.response_urls[url][0]["text"] == "Evidence for gpu-node-7 collected"
    [msg] = standin.messages["C0OPS"]
    assert msg.text == "Verdict for gpu-node-7" and msg.blocks[0]["text"]["text"] == "*Verdict* for gpu-node-7"


def test_bolt_rejects_bad_and_stale_signatures(standin: SlackStandIn) -> None:
    app = make_app(standin)
    body = slash_command_body("/triage", "x", response_url=standin.response_url())
    headers = {"Content-Type": "application/x-www-form-urlencoded", **sign(body, "wrong-secret")}
    assert app.dispatch(bolt_request(body, headers)).status == 401
    stale = signed_headers(body, SECRET, form=True, timestamp=int(time.time()) - 600)
    assert app.dispatch(bolt_request(body, stale)).status == 401
    time.sleep(0.1)
    assert standin.messages["C0OPS"] == [] and standin.calls_to("chat.postMessage") == []


def test_bolt_button_replaces_original(standin: SlackStandIn) -> None:
    app = make_app(standin)
    ts = app.client.chat_postMessage(channel="C0OPS", text="GPU node down", blocks=[section("GPU node down")])["ts"]
    url = standin.response_url(channel="C0OPS", message_ts=ts)
    status, _ = dispatch(app, block_action_body("ack", "inc-1", message_ts=ts, response_url=url))
    assert status == 200
    standin.wait_for(lambda: standin.messages["C0OPS"][0].edits != [])
    assert standin.messages["C0OPS"][0].text == "Acknowledged by <@U0ALICE>"


def test_bolt_shortcut_and_events(standin: SlackStandIn) -> None:
    app = make_app(standin)
    human: Message = standin.post_user_message("C0OPS", "pod trainer-0 crashlooping")
    url = standin.response_url()
    body = message_shortcut_body("triage_this", human.text, message_ts=human.ts, response_url=url)
    assert dispatch(app, body)[0] == 200
    standin.wait_for(lambda: bool(standin.response_urls[url]))
    assert standin.response_urls[url][0]["text"] == "Triaging: pod trainer-0 crashlooping"

    assert dispatch(app, event_body(app_mention_event("triage", ts=human.ts)), form=False)[0] == 200
    standin.wait_for(lambda: len(standin.thread("C0OPS", human.ts)) == 2)
    assert standin.thread("C0OPS", human.ts)[1].text == "On it"

    assert dispatch(app, event_body(app_home_opened_event("U0ALICE")), form=False)[0] == 200
    standin.wait_for(lambda: "U0ALICE" in standin.home_views)


def test_bolt_over_real_http_with_starlette_adapter(standin: SlackStandIn) -> None:
    """The production path: uvicorn + bolt's Starlette adapter on 127.0.0.1, driven by plain httpx."""
    handler = SlackRequestHandler(make_app(standin))

    async def events(req: Request) -> Response:
        return await handler.handle(req)

    api = Starlette(routes=[Route("/slack/events", events, methods=["POST"])])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(api, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 5
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.01)
        url = standin.response_url()
        body = slash_command_body("/triage", "node-3", response_url=url)
        endpoint = f"http://127.0.0.1:{port}/slack/events"
        started = time.monotonic()
        ok = httpx.post(endpoint, content=body, headers=signed_headers(body, SECRET, form=True))
        assert ok.status_code == 200 and ok.text == "Triaging node-3..."
        assert time.monotonic() - started < 3.0  # Slack's ack deadline
        standin.wait_for(lambda: bool(standin.response_urls[url]) and bool(standin.messages["C0OPS"]))

        tampered = httpx.post(
            endpoint, content=body.replace(b"node-3", b"node-4"), headers=signed_headers(body, SECRET, form=True)
        )
        assert tampered.status_code == 401
    finally:
        server.should_exit = True
        thread.join(timeout=5)
        sock.close()


# ----------------------------------------------------------------------------------------------------------------
# Message metadata, channel history, tiered limits, answers held back
# ----------------------------------------------------------------------------------------------------------------


def test_metadata_is_checked_and_returned_only_when_asked(standin: SlackStandIn, client: WebClient) -> None:
    meta = {"event_type": "triagebot_post", "event_payload": {"outbox_key": "alert:abc:root", "episode": 2}}
    posted = client.chat_postMessage(channel="C0OPS", text="root", metadata=meta)
    client.chat_postMessage(channel="C0OPS", text="reply", thread_ts=posted["ts"], metadata=meta)
    plain = client.conversations_history(channel="C0OPS")
    assert [m["text"] for m in plain["messages"]] == ["root"] and "metadata" not in plain["messages"][0]
    full = client.conversations_history(channel="C0OPS", include_all_metadata=True)
    assert full["messages"][0]["metadata"] == meta and full["messages"][0]["reply_count"] == 1
    replies = client.conversations_replies(channel="C0OPS", ts=posted["ts"], include_all_metadata=True)
    assert [m.get("metadata") for m in replies["messages"]] == [meta, meta]
    for bad, error in (({"event_type": "no spaces allowed", "event_payload": {}}, "invalid_metadata_schema"),
                       ({"event_type": "x"}, "invalid_metadata_schema"),
                       ({"event_type": "x", "event_payload": {"big": "y" * 9000}}, "metadata_too_large")):
        assert api_error(lambda bad=bad: client.chat_postMessage(channel="C0OPS", text="t", metadata=bad)
                         ).response["error"] == error
    raw = httpx.post(f"{standin.api_url}chat.postMessage", headers={"Authorization": f"Bearer {TOKEN}"},
                     data={"channel": "C0OPS", "text": "t", "metadata": "{not json"})
    assert raw.json() == {"ok": False, "error": "invalid_metadata_format"}


def test_history_pages_newest_first_within_oldest(client: WebClient) -> None:
    stamps = [client.chat_postMessage(channel="C0OPS", text=f"m{n}")["ts"] for n in range(5)]
    first = client.conversations_history(channel="C0OPS", limit=2, oldest=stamps[0])
    assert [m["text"] for m in first["messages"]] == ["m4", "m3"] and first["has_more"]
    rest = client.conversations_history(channel="C0OPS", limit=10, oldest=stamps[0],
                                        cursor=first["response_metadata"]["next_cursor"])
    assert [m["text"] for m in rest["messages"]] == ["m2", "m1"] and not rest["has_more"]  # oldest is exclusive
    assert api_error(lambda: client.conversations_history(channel="C0NOPE")).response["error"] == "channel_not_found"


def test_tiered_methods_are_limited_per_workspace() -> None:
    with SlackStandIn(burst=50) as s:
        client = WebClient(token=TOKEN, base_url=s.api_url)
        ts = client.chat_postMessage(channel="C0OPS", text="root")["ts"]
        for n in range(10):  # Tier 3's burst
            client.chat_update(channel="C0OPS", ts=ts, text=f"v{n}")
        err = api_error(lambda: client.chat_update(channel="C0OPS", ts=ts, text="one too many"))
        assert err.response.status_code == 429 and err.response["error"] == "ratelimited"
        assert int(err.response.headers["Retry-After"]) >= 1
        assert s.messages["C0OPS"][0].text == "v9"
        client.chat_postMessage(channel="C0ALERTS", text="posts have their own limit")


def test_an_answer_held_back_after_the_post_took_effect(standin: SlackStandIn, client: WebClient) -> None:
    standin.set_faults([SlackFault("chat.postMessage", delay_after=0.5, times=1)])
    seen: list[int] = []
    worker = threading.Thread(target=lambda: client.chat_postMessage(channel="C0OPS", text="slow answer"))
    worker.start()
    standin.wait_for(lambda: standin.answering == 1, timeout=5)
    seen.append(len(standin.messages["C0OPS"]))  # stored before the caller has its answer
    worker.join(5)
    assert seen == [1] and standin.answering == 0
