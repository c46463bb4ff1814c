"""The Alertmanager endpoint's HTTP half: authorisation, the body read as strict JSON, a repeat that changes
nothing answered at once, redaction, validation, and the answers Alertmanager acts on (a 5xx is retried, a 4xx
dropped). What a notification does is bot/webhook/alert_flow.py's."""

from __future__ import annotations

import base64
import hmac
import logging
from collections.abc import Callable
from typing import Any

from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.context import BotContext
from bot.store.outage import database_away
from bot.store.types import utcnow
from bot.webhook.payload import AlertmanagerPayload
from bot.webhook.redacted import redact_notification
from bot.webhook.repeat import canonical_alerts, state_digest, unchanged
from collectors.http.strict_json import BadJson, loads

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
        # The rest in one hand-off to a thread, not one per statement: each hand-off is two wake-ups (the thread,
        # then the event loop), and on a busy node each wake-up can wait for a core.
        return await run_in_threadpool(accept, ctx, body)

    return receive


def accept(ctx: BotContext, body: bytes) -> Response:
    """A webhook body from an authorised sender: answered as a repeat, refused, or appended to the intake."""
    try:
        parsed = loads(body)
    except BadJson as err:
        ctx.metrics.webhook_rejected.labels("json").inc()
        return _error(400, str(err), "an Alertmanager webhook payload (JSON, version 4)")
    if not isinstance(parsed, dict):
        ctx.metrics.webhook_rejected.labels("schema").inc()
        return _error(400, "body: expected a JSON object", "an Alertmanager webhook payload (JSON, version 4)")
    # A repeat that changes nothing (Alertmanager's repeat_interval, the HA twin): one read and done. Where the
    # intake shares the main database (PostgreSQL) the append below checks instead, in its one statement.
    # Each alert encoded once: its text makes the digest and names it among those redacted before.
    canonical = canonical_alerts(parsed)
    digest = state_digest(parsed, canonical)
    if digest is not None and ctx.intake.separate:
        try:
            repeat = unchanged(ctx.factory, str(parsed["groupKey"]), digest)
        except Exception as err:
            if not database_away(err):
                raise
            return _store_away(ctx, err)
        if repeat:
            ctx.metrics.webhook_unchanged.inc()
            return JSONResponse({"status": "unchanged", "alerts": len(parsed["alerts"])})
    # Redacted before anything stores, posts or logs it: annotations are free text and carry pasted secrets.
    # An alert an earlier notification carried unchanged is not redacted, nor encoded, again
    # (bot/webhook/redacted.py).
    redacted = redact_notification(parsed, canonical)
    try:
        payload = AlertmanagerPayload.model_validate(redacted.body)
    except ValidationError as err:
        ctx.metrics.webhook_rejected.labels("schema").inc()
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "body"
        return _error(400, f"{where}: {first['msg']}", "an Alertmanager webhook payload, version 4, with "
                      "groupKey, status and at least one alert with an alertname label")
    # Appended durably in one INSERT, and answered: the ingester applies it (bot/webhook/intake.py), so the
    # answer waits neither for the main database's write lock nor for the work a notification causes.
    try:
        stored = ctx.intake.append(redacted.body, digest, utcnow(), redacted.text)
    except Exception as err:
        if not database_away(err):
            raise
        return _store_away(ctx, err)
    _back(ctx, "webhook")
    if not stored:
        ctx.metrics.webhook_unchanged.inc()
        return JSONResponse({"status": "unchanged", "alerts": len(payload.alerts)})
    ctx.ingester.wake()
    for alert in payload.alerts:
        ctx.metrics.alerts.labels(alert.status).inc()
    return JSONResponse({"status": "stored", "alerts": len(payload.alerts)})


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
