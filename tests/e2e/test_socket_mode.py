"""Socket Mode end to end: the app opens a WebSocket through apps.connections.open, acks a slash command
envelope on it, and posts through the Web API stand-in.

The WebSocket side is a small loopback endpoint written with aiohttp that speaks Slack's Socket Mode
envelopes (hello, slash_commands, the ack carrying envelope_id).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import WSMsgType, web
from pydantic import SecretStr

from bot.config import Settings
from bot.context import build_context
from bot.policy import Permissions
from bot.serve import socket_mode_handler
from bot.slack.app import build_slack_app
from tests.harness.prometheus import free_port
from tests.standins.slack_api import SlackStandIn

APP_TOKEN = "xapp-1-A0TEST-123-abcdef"


class SocketEndpoint:
    """apps.connections.open plus one WebSocket that sends a slash command and records the ack."""

    def __init__(self, envelopes: list[dict[str, Any]]) -> None:
        self.envelopes = envelopes
        self.port = free_port()
        self.acks: list[dict[str, Any]] = []
        self.opened_with: list[str] = []
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/api/"

    async def _open(self, request: web.Request) -> web.Response:
        self.opened_with.append(request.headers.get("Authorization", ""))
        return web.json_response({"ok": True, "url": f"ws://127.0.0.1:{self.port}/link"})

    async def _link(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps({"type": "hello", "num_connections": 1,
                                      "connection_info": {"app_id": "A0TEST"}}))
        for envelope in self.envelopes:
            await ws.send_str(json.dumps(envelope))
        async for message in ws:
            if message.type == WSMsgType.TEXT:
                self.acks.append(json.loads(message.data))
        return ws

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_post("/api/apps.connections.open", self._open)
        app.router.add_get("/link", self._link)
        runner = web.AppRunner(app)
        self._loop.run_until_complete(runner.setup())
        self._loop.run_until_complete(web.TCPSite(runner, "127.0.0.1", self.port).start())
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(runner.cleanup())

    def __enter__(self) -> SocketEndpoint:
        self._thread.start()
        self._ready.wait(10)
        return self

    def __exit__(self, *_: object) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def slash_envelope(envelope_id: str, text: str, response_url: str) -> dict[str, Any]:
    payload = {"token": "x", "team_id": "T0", "team_domain": "acme", "channel_id": "C0OPS", "channel_name": "ops",
               "user_id": "U0ALICE", "user_name": "alice", "command": "/triage", "text": text,
               "api_app_id": "A0TEST", "response_url": response_url, "trigger_id": "t1"}
    return {"envelope_id": envelope_id, "type": "slash_commands", "payload": payload,
            "accepts_response_payload": True}


@pytest.fixture
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=["C0OPS"], burst=50) as standin:
        yield standin


def test_socket_mode_acks_the_envelope_and_answers(tmp_path: Path, slack: SlackStandIn) -> None:
    envelopes = [slash_envelope("env-1", "help", slack.response_url(channel="C0OPS")),
                 slash_envelope("env-2", "checkout shop", slack.response_url(channel="C0OPS"))]
    with SocketEndpoint(envelopes) as endpoint:
        settings = Settings(slack_bot_token=SecretStr(slack.token), slack_app_token=SecretStr(APP_TOKEN),
                            slack_mode="socket", slack_api_url=slack.api_url,
                            database_url=f"sqlite:///{tmp_path / 'bot.sqlite'}", webhook_token=SecretStr("w" * 24),
                            permissions=Permissions(channels={"C0OPS": ["shop"]}))
        ctx = build_context(settings)
        app = build_slack_app(ctx)
        # Posts go to the Web API stand-in; the connection is opened through the socket endpoint, as a
        # gateway in front of Slack would.
        handler = socket_mode_handler(app, settings.model_copy(update={"slack_api_url": endpoint.api_url}))
        handler.connect()
        try:
            deadline = time.monotonic() + 15
            while (len(endpoint.acks) < 2 or not slack.messages.get("C0OPS")) and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            handler.close()
            ctx.close()
    assert endpoint.opened_with == [f"Bearer {APP_TOKEN}"]
    # Envelopes are handled on the client's worker threads, so their acks may arrive in either order.
    acks = {ack["envelope_id"]: ack for ack in endpoint.acks}
    assert sorted(acks) == ["env-1", "env-2"] and len(endpoint.acks) == 2
    # /triage help answers in the ack itself: usage text, only for the person who asked.
    answer = json.dumps(acks["env-1"].get("payload", {}))
    assert "/triage" in answer and "namespace" in answer.lower()
    # The live command was acked on the socket and its "triaging" root went out through the outbox.
    assert any("checkout" in m.text for m in slack.messages["C0OPS"])


def test_socket_mode_connects_once_slack_can_be_reached(tmp_path: Path) -> None:
    """Issue 28, point 4: with Slack unreachable at start, `serve` in Socket Mode does not die; the WebSocket is
    opened when Slack first answers (bot/delivery/slack_reach.py), and then acks commands."""
    from bot.serve import connect_socket_mode

    web_port = free_port()
    endpoint = SocketEndpoint([slash_envelope("env-1", "help", "http://127.0.0.1:9/unused")])
    settings = Settings(slack_bot_token=SecretStr("xoxb-test-token"), slack_app_token=SecretStr(APP_TOKEN),
                        slack_mode="socket", slack_api_url=f"http://127.0.0.1:{web_port}/api/",
                        slack_retry_interval=0.2, database_url=f"sqlite:///{tmp_path / 'bot.sqlite'}",
                        webhook_token=SecretStr("w" * 24))
    ctx = build_context(settings)
    try:
        app = build_slack_app(ctx)  # Slack is down: recorded, not raised
        assert ctx.slack_reach.status().startswith("unreachable since ")
        handler = socket_mode_handler(app, settings.model_copy(update={"slack_api_url": endpoint.api_url}))
        connect_socket_mode(ctx, handler)  # refused: left to the first answer
        assert endpoint.acks == []
        with SlackStandIn(channels=["C0OPS"], port=web_port), endpoint:
            deadline = time.monotonic() + 15
            while not endpoint.acks and time.monotonic() < deadline:
                time.sleep(0.05)
            handler.close()
        assert ctx.slack_reach.status() == "ok"
    finally:
        ctx.close()
    assert [ack["envelope_id"] for ack in endpoint.acks] == ["env-1"]
    assert endpoint.opened_with == [f"Bearer {APP_TOKEN}"]
