"""The HTTP server: composes /alertmanager (bot/webhook/endpoint.py), /slack/events (bot/slack/events.py),
/metrics, /healthz and /readyz."""

from __future__ import annotations

import logging
from typing import Any

from sqlalchemy import text
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.context import BotContext
from bot.slack.events import slack_endpoint
from bot.webhook.endpoint import alertmanager_endpoint
from collectors.http.body_limit import BodyLimit

log = logging.getLogger("triagebot.server")


ENDPOINTS = "POST /alertmanager, POST /slack/events, GET /metrics, GET /healthz, GET /readyz"
# Any other path carries no body worth reading: a few KiB covers an odd client's empty form.
OTHER_PATHS_MAX_BYTES = 4096
def create_app(ctx: BotContext, slack_handler: Any | None = None) -> Starlette:
    """The ASGI app. `slack_handler` is slack-bolt's Starlette handler, when Slack runs in HTTP mode."""

    def slack_state() -> str:
        return ctx.slack_reach.status() if ctx.slack is not None else "not configured"

    async def healthz(_: Request) -> Response:
        # Always 200 while the process answers: it is a liveness probe, and restarting the pod brings back neither
        # Slack nor the database (it would only drop the webhook for the restart). The body says how each is
        # (docs/install.md).
        return JSONResponse({"status": "ok", "alive": True, "slack": slack_state(),
                             "database": ctx.metrics.db_state()})

    async def readyz(_: Request) -> Response:
        def ping() -> None:
            with ctx.engine.connect() as conn:
                conn.execute(text("SELECT 1"))

        try:
            await run_in_threadpool(ping)
        except Exception as err:
            return JSONResponse({"ready": False, "reason": f"database: {type(err).__name__}",
                                 "slack": slack_state()}, status_code=503)
        # Ready without Slack: the webhook still stores alerts and queues their posts, so taking the pod out of the
        # Service would lose alerts rather than save them.
        return JSONResponse({"ready": True, "slack": slack_state()})

    async def metrics(_: Request) -> Response:
        return Response(ctx.metrics.exposition(), media_type="text/plain; version=0.0.4")

    routes = [
        Route("/alertmanager", alertmanager_endpoint(ctx), methods=["POST"]),
        Route("/slack/events", slack_endpoint(ctx, slack_handler), methods=["POST"]),
        Route("/metrics", metrics, methods=["GET"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/readyz", readyz, methods=["GET"]),
    ]
    limits = {"/alertmanager": ctx.settings.webhook_max_bytes, "/slack/events": ctx.settings.slack_max_bytes}
    return Starlette(routes=routes,
                     middleware=[Middleware(BodyLimit, limits=limits, default=OTHER_PATHS_MAX_BYTES)],
                     exception_handlers={HTTPException: _http_error, Exception: _internal_error})


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such path, wrong method) as JSON, like every other error."""
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": str(exc.detail), "expected": ENDPOINTS}, status_code=exc.status_code,
                        headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    """A bug, not a user's mistake: logged (redacted, no body) and answered without a traceback."""
    log.error("request to %s failed", request.url.path, exc_info=exc)
    return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, status_code=500)
