"""The HTTP server: /alertmanager, /slack/events, /metrics, /healthz and /readyz."""

from __future__ import annotations

import base64
import hmac
import logging
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from pydantic import ValidationError
from sqlalchemy import text
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from bot.alerts.alert_message import alert_links
from bot.context import BotContext
from bot.slack.gate import SlackGate, payload_problem
from bot.store.outage import database_away
from bot.webhook.alert_flow import accept_alerts
from bot.webhook.payload import AlertmanagerPayload
from bot.webhook.repeat import state_digest, unchanged
from bot.webhook.storm import StormPolicy
from collectors.http.body_limit import BodyLimit
from collectors.http.strict_json import BadJson, loads
from collectors.redact import redact_json
from collectors.validate import duration

log = logging.getLogger("triagebot.server")


def _error(status: int, error: str, expected: str) -> JSONResponse:
    return JSONResponse({"error": error, "expected": expected}, status_code=status)


# Alertmanager retries a 5xx with backoff; a 4xx would drop the notification.
DATABASE_AWAY = "the database cannot commit now; nothing of this notification was stored"
RETRY_LATER = "the same notification again later (Alertmanager retries a 5xx by itself)"


def _authorised(request: Request, token: str) -> bool:
    """A bearer token, or basic auth whose password is the token (Alertmanager supports both)."""
    header = request.headers.get("authorization", "")
    scheme, _, value = header.partition(" ")
    if scheme.lower() == "bearer":
        return hmac.compare_digest(value.strip().encode(), token.encode())
    if scheme.lower() == "basic":
        try:
            _, _, password = base64.b64decode(value.strip(), validate=True).decode("utf-8").partition(":")
        except (ValueError, UnicodeDecodeError):
            return False
        return hmac.compare_digest(password.encode(), token.encode())
    return False


ENDPOINTS = "POST /alertmanager, POST /slack/events, GET /metrics, GET /healthz, GET /readyz"
# Any other path carries no body worth reading: a few KiB covers an odd client's empty form.
OTHER_PATHS_MAX_BYTES = 4096
SLACK_PAYLOAD = "a Slack interaction: a form body (command fields, or payload=<JSON object>) or a JSON event"
SLACK_HANDLED = ("an interaction this app handles: the /triage, /drill and /ask commands, the \"Triage this "
                 "message\" shortcut, the buttons and forms of its messages, or the app_home_opened event")


def _bolt_error(body: str) -> str:
    try:
        error = loads(body).get("error") if body else None
    except (BadJson, AttributeError):
        error = None
    return str(error or "request not handled")


def alertmanager_endpoint(ctx: BotContext) -> Callable[[Request], Any]:
    settings = ctx.settings

    async def receive(request: Request) -> Response:
        token = settings.webhook_token.get_secret_value() if settings.webhook_token else None
        if token is None or not _authorised(request, token):
            ctx.metrics.webhook_rejected.labels("auth").inc()
            return _error(401, "unauthorised", "Authorization: Bearer <TRIAGEBOT_WEBHOOK_TOKEN> (or basic auth "
                          "with that password)")
        # The body cap (BodyLimit, around the whole app) stops a large body while it streams in.
        body = await request.body()
        try:
            parsed = loads(body)
        except BadJson as err:
            ctx.metrics.webhook_rejected.labels("json").inc()
            return _error(400, str(err), "an Alertmanager webhook payload (JSON, version 4)")
        if not isinstance(parsed, dict):
            ctx.metrics.webhook_rejected.labels("schema").inc()
            return _error(400, "body: expected a JSON object", "an Alertmanager webhook payload (JSON, version 4)")
        # A repeat that changes nothing (Alertmanager's repeat_interval, the HA twin): one read and done.
        digest = state_digest(parsed)
        if digest is not None:
            try:
                repeat = await run_in_threadpool(unchanged, ctx.factory, str(parsed["groupKey"]), digest)
            except Exception as err:
                if not database_away(err):
                    raise
                return _store_away(ctx, err)
            if repeat:
                ctx.metrics.webhook_unchanged.inc()
                return JSONResponse({"status": "unchanged", "alerts": len(parsed["alerts"])})
        # Redacted before anything stores, posts or logs it: annotations are free text and carry pasted secrets.
        raw: dict[str, Any] = redact_json(parsed)
        try:
            payload = AlertmanagerPayload.model_validate(raw)
        except ValidationError as err:
            ctx.metrics.webhook_rejected.labels("schema").inc()
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "body"
            return _error(400, f"{where}: {first['msg']}", "an Alertmanager webhook payload, version 4, with "
                          "groupKey, status and at least one alert with an alertname label")
        try:
            requests = await run_in_threadpool(
                accept_alerts, ctx.factory, payload, raw, routes=settings.routes,
                default_channel=settings.default_channel, receiver_instance=ctx.instance,
                since=duration(settings.default_since), permissions=settings.permissions,
                capture_alerts=settings.capture_alerts, links=alert_links(settings),
                storm=StormPolicy(groups=settings.storm_groups, window=timedelta(seconds=settings.storm_window)),
                digest=digest)
        except Exception as err:
            if not database_away(err):
                raise
            return _store_away(ctx, err)
        _back(ctx, "webhook")
        for alert in payload.alerts:
            ctx.metrics.alerts.labels(alert.status).inc()
        # Stored and committed, the triage jobs with them (accept_alerts queues them): only now start them.
        for triage in requests:
            try:  # may claim in the database: off the event loop
                await run_in_threadpool(ctx.jobs.start_queued, triage)
            except Exception as err:
                if not database_away(err):
                    raise
                # The job is committed with the alert: a worker claims it once the database is back.
                ctx.metrics.db_failed("webhook", err)
        if ctx.poster is not None:
            ctx.poster.wake()
        return JSONResponse({"status": "stored", "alerts": len(payload.alerts)})

    return receive


def _store_away(ctx: BotContext, err: Exception) -> Response:
    """Not committed, so not answered 200: Alertmanager keeps the notification and sends it again."""
    if ctx.metrics.db_failed("webhook", err):
        log.error("database unavailable: webhooks are answered 503 until it commits again (%s)", type(err).__name__)
    return JSONResponse({"error": DATABASE_AWAY, "expected": RETRY_LATER}, status_code=503,
                        headers={"Retry-After": "5"})


def _back(ctx: BotContext, where: str) -> None:
    outage = ctx.metrics.db_ok(where)
    if outage is not None:
        log.warning("database committing again after %.1f s (%s)", outage, where)


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

    gate = SlackGate(ctx.settings.slack_signing_secret.get_secret_value()
                     if ctx.settings.slack_signing_secret else "")

    async def slack_events(request: Request) -> Response:
        if slack_handler is None:
            return _error(404, "Slack is not configured here", "SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET "
                          "(HTTP mode)")
        # Bolt's own Starlette adapter dispatches on the event loop, which would hold up every other request
        # (webhooks included) while a listener acks; dispatch in a worker thread instead.
        from slack_bolt.adapter.starlette.handler import to_bolt_request, to_starlette_response

        # Signature headers first, without reading the body: a request that cannot be Slack's is refused here.
        refused = gate.check_headers(request.headers)
        if refused is not None:
            return _error(401, refused, SlackGate.EXPECTED)
        body = await request.body()  # capped by BodyLimit while it streams
        if not gate.signed(request.headers, body):
            return _error(401, "invalid request signature", SlackGate.EXPECTED)
        problem = payload_problem(body, request.headers.get("content-type", ""))
        if problem is not None:
            return _error(400, problem, SLACK_PAYLOAD)
        try:
            bolt_request = to_bolt_request(request, body)
        except (ValueError, TypeError, AttributeError, RecursionError):
            return _error(400, "unreadable Slack payload", SLACK_PAYLOAD)
        bolt_response = await run_in_threadpool(slack_handler.app.dispatch, bolt_request)
        if bolt_response.status >= 400:
            # bolt's refusals ("unhandled request") carry no hint of what would work; ours do, as JSON.
            return _error(bolt_response.status if bolt_response.status < 500 else 500,
                          _bolt_error(bolt_response.body), SLACK_HANDLED)
        response: Response = to_starlette_response(bolt_response)
        return response

    routes = [
        Route("/alertmanager", alertmanager_endpoint(ctx), methods=["POST"]),
        Route("/slack/events", slack_events, methods=["POST"]),
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
