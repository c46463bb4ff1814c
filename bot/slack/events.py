"""The Slack endpoint's HTTP half (HTTP mode): the signature checked before the body is read, the payload's shape
checked before bolt sees it, and bolt's refusals answered as JSON that says what would work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from bot.context import BotContext
from bot.slack.gate import SlackGate, payload_problem
from collectors.http.strict_json import BadJson, loads


def _error(status: int, error: str, expected: str) -> JSONResponse:
    return JSONResponse({"error": error, "expected": expected}, status_code=status)


SLACK_PAYLOAD = "a Slack interaction: a form body (command fields, or payload=<JSON object>) or a JSON event"
SLACK_HANDLED = ("an interaction this app handles: the /triage, /drill and /ask commands, the \"Triage this "
                 "message\" shortcut, the buttons and forms of its messages, or the app_home_opened event")


def _bolt_error(body: str) -> str:
    try:
        error = loads(body).get("error") if body else None
    except (BadJson, AttributeError):
        error = None
    return str(error or "request not handled")


def slack_endpoint(ctx: BotContext, slack_handler: Any | None) -> Callable[[Request], Any]:
    """`slack_handler`: slack-bolt's Starlette handler, when Slack runs in HTTP mode."""
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

    return slack_events
