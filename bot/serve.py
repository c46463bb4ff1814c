"""`triagebot serve`: the webhook server and the Slack app (HTTP or Socket Mode)."""

from __future__ import annotations

import logging
import sys
from typing import Any

from bot.config import ConfigError, Settings
from bot.logs import configure

log = logging.getLogger("triagebot.serve")


def check_settings(settings: Settings) -> None:
    """Refuse to start without what the chosen mode needs; the message names the setting."""
    if settings.slack_bot_token is None:
        raise ConfigError("setting SLACK_BOT_TOKEN is missing: the bot posts to Slack with it")
    if not settings.slack_bot_token.get_secret_value().startswith("xoxb-"):
        raise ConfigError("setting SLACK_BOT_TOKEN is malformed: expected a bot token starting with xoxb-")
    if settings.slack_mode == "http" and settings.slack_signing_secret is None:
        raise ConfigError("setting SLACK_SIGNING_SECRET is missing: HTTP mode verifies Slack's signatures with it")
    if settings.slack_mode == "socket":
        if settings.slack_app_token is None:
            raise ConfigError("setting SLACK_APP_TOKEN is missing: Socket Mode connects with it")
        if not settings.slack_app_token.get_secret_value().startswith("xapp-"):
            raise ConfigError("setting SLACK_APP_TOKEN is malformed: expected an app token starting with xapp-")
    if settings.webhook_token is None:
        raise ConfigError("setting TRIAGEBOT_WEBHOOK_TOKEN is missing: /alertmanager authenticates with it")
    if len(settings.webhook_token.get_secret_value()) < 16:
        raise ConfigError("setting TRIAGEBOT_WEBHOOK_TOKEN is too short: expected at least 16 characters")


def socket_mode_handler(app: Any, settings: Settings) -> Any:
    """Slack's Socket Mode connection for the app; it opens through the configured Web API base URL."""
    from slack_bolt.adapter.socket_mode import SocketModeHandler
    from slack_sdk import WebClient

    assert settings.slack_app_token is not None
    base = settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    # apps.connections.open takes the app-level token; a proxy or gateway URL must apply to it too.
    return SocketModeHandler(app, settings.slack_app_token.get_secret_value(),
                             web_client=WebClient(base_url=base, timeout=settings.slack_timeout))


def connect_socket_mode(ctx: Any, socket_mode: Any) -> None:
    """Open the WebSocket (returns at once; it runs in its own threads). When Slack cannot be reached it is opened
    once Slack answers again (bot/delivery/slack_reach.py): the webhook serves meanwhile."""
    from bot.delivery.slack_reach import is_transport_error

    try:
        socket_mode.connect()
    except Exception as err:
        if not is_transport_error(err):
            raise
        ctx.slack_reach.failed(err)
        opened: list[bool] = []

        def reconnect(_: object) -> None:
            if not opened:  # once: after that the client reconnects by itself
                opened.append(True)
                socket_mode.connect()

        ctx.slack_reach.when_back(reconnect)


def serve(settings: Settings, host: str, port: int) -> None:
    check_settings(settings)
    configure(settings.log_level)
    import uvicorn

    from bot.context import build_context
    from bot.server import create_app
    from bot.slack.app import build_slack_app

    # Live triages run in worker processes (bot/runner/workers.py), so this interpreter only acks, stores and posts.
    # With triage_workers=0 they share it as threads; a shorter switch interval then lets an ack's thread run
    # sooner while triages parse (measured: slash-ack p99 ~330 ms -> ~200 ms with 20 triages).
    if settings.triage_workers == 0:
        sys.setswitchinterval(0.001)
    ctx = build_context(settings, start_workers=True)
    app = build_slack_app(ctx)
    handler = None
    socket_mode = None
    if settings.slack_mode == "http":
        from slack_bolt.adapter.starlette import SlackRequestHandler

        handler = SlackRequestHandler(app)
    else:
        socket_mode = socket_mode_handler(app, settings)
        connect_socket_mode(ctx, socket_mode)
    log.info("serving", extra={"host": host, "port": port, "slack_mode": settings.slack_mode})
    try:
        uvicorn.run(create_app(ctx, handler), host=host, port=port, log_config=None, access_log=False,
                    server_header=False)
    finally:
        if socket_mode is not None:
            socket_mode.close()
        ctx.close()
