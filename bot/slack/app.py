"""The Slack app: the "Triage this message" shortcut, the report's buttons and the App Home, and the assembly of
the commands' handlers (/triage from bot/slack/triage_command.py, /drill from drills.py, /ask from ask.py).

Handlers are thin: read the request, ack() at once (Slack gives 3 s; bolt answers the HTTP request the moment
ack() is called), then hand the rest to the flows (bot/slack/start.py, actions.py, home.py) on a pool of their
own. Only what fits in the ack itself (help, a refusal, a usage error) is decided before it, and that is pure
parsing (bot/slack/triage_grammar.py).

Why a pool of its own: bolt runs listeners on a small executor and an ack can only be sent once a listener has
started. Work left on those threads (a database busy with a burst of writes, a large paste to analyse) would
hold up the acks of the next requests.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from concurrent.futures import Executor, ThreadPoolExecutor
from typing import Any

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.config import ConfigError
from bot.context import BotContext
from bot.logs import body_free
from bot.render.slack_triage import RESOLVE_CALLBACK, WRONG_CALLBACK
from bot.slack.actions import (
    CauseAnswer,
    read_cause_submission,
    record_resolution,
    record_wrong,
    rerun,
    resolve_view,
    save_drill,
    show_evidence,
    wrong_diagnosis_view,
)
from bot.slack.ask import register_ask
from bot.slack.common import Click, accepted, audit, click_from, count, ephemeral, message_link, open_modal
from bot.slack.drills import register_drills
from bot.slack.home import queue_home
from bot.slack.memory import register_memory
from bot.slack.silence import register_silence
from bot.slack.start import start_paste
from bot.slack.triage_command import register_triage
from bot.slack.triage_grammar import CommandError, parse_paste

log = logging.getLogger("triagebot.slack")
# bolt's own logger: it logs request bodies (a failed signature check, an unhandled request); NoBodies cuts them.
bolt_log = body_free(logging.getLogger("triagebot.slack.bolt"))

SHORTCUT = "triage_message"  # callback id of the message shortcut "Triage this message"
ButtonFlow = Callable[[BotContext, str, Click], "str | None"]
Opener = Callable[[BotContext, str, Click], "tuple[dict[str, Any] | None, str | None]"]
Recorder = Callable[[BotContext, CauseAnswer, str], "str | None"]
BUTTONS: dict[str, tuple[str, ButtonFlow]] = {
    "triage_show_evidence": ("show_evidence", show_evidence),
    "triage_rerun": ("rerun", rerun),
    "triage_save_drill": ("save_drill", save_drill),
}
ACK_THREADS = 16  # bolt's listener threads: each only parses and acks
WORK_THREADS = 8  # database writes and paste analysis after the ack (live triages run in ctx.jobs)


class Later:
    """Runs work after the ack, reporting failures to the user: there is no HTTP response left to fail."""

    def __init__(self, executor: Executor) -> None:
        self.executor = executor

    def __call__(self, what: str, respond: Respond | None, work: Callable[[], object]) -> None:
        def run() -> None:
            try:
                work()
            except Exception as err:
                log.exception("%s failed", what)
                if respond is not None:
                    ephemeral(respond, f":x: {what} failed on triagebot's side ({type(err).__name__}); the error "
                                        "is logged. Try again, or tell the bot's operator if it keeps failing.")

        self.executor.submit(run)


def build_slack_app(ctx: BotContext) -> App:
    """A sync bolt App on the context's WebClient (which carries the token and the API base URL)."""
    if ctx.slack is None:
        raise ConfigError("setting SLACK_BOT_TOKEN is missing: the Slack app posts with it")
    secret = ctx.settings.slack_signing_secret
    if secret is None and ctx.settings.slack_mode == "http":
        raise ConfigError("setting SLACK_SIGNING_SECRET is missing: HTTP mode verifies Slack's signatures with it")
    # bolt's own start-up auth.test would raise when Slack cannot be reached, taking the webhook down with it. Ask
    # here instead: a refused token stops the start (ConfigError), an unreachable Slack is recorded and retried
    # (bot/delivery/slack_reach.py), and bolt asks again lazily, at the first request that needs it.
    ctx.slack_reach.check(ctx.slack)
    # Socket Mode requests arrive over the app's own authenticated WebSocket and carry no signature.
    app = App(client=ctx.slack, signing_secret=secret.get_secret_value() if secret else "",
              process_before_response=False, logger=bolt_log, token_verification_enabled=False,
              listener_executor=ThreadPoolExecutor(ACK_THREADS, thread_name_prefix="slack-ack"))
    later = Later(ThreadPoolExecutor(WORK_THREADS, thread_name_prefix="slack-work"))
    register_triage(app, ctx, later)  # /triage: one handler per command
    _register_shortcut(app, ctx, later)
    for action_id, (name, flow) in BUTTONS.items():
        _register_button(app, ctx, later, action_id, name, flow)
    _register_wrong_diagnosis(app, ctx, later)
    _register_home(app, ctx, later)
    register_drills(app, ctx, later)  # /drill: drills and interviews
    register_ask(app, ctx, later)  # /ask: answers from the runbooks
    register_silence(app, ctx, later)  # the Silence 1h button on alert messages
    register_memory(app, ctx, later)  # the postmortem button under a resolved incident
    return app


def _register_shortcut(app: App, ctx: BotContext, later: Later) -> None:
    @app.message_shortcut(SHORTCUT)
    def triage_message(ack: Ack, shortcut: dict[str, Any], respond: Respond) -> None:
        ack()
        count(ctx, "shortcut")
        later("Triaging the message", respond, lambda: _triage_message(ctx, shortcut, respond))


def _triage_message(ctx: BotContext, shortcut: dict[str, Any], respond: Respond) -> None:
    user = str((shortcut.get("user") or {}).get("id", ""))
    channel = str((shortcut.get("channel") or {}).get("id", ""))
    message = shortcut.get("message") or {}
    link = message_link(str((shortcut.get("team") or {}).get("domain", "")), channel,
                              str(message.get("ts", "")))
    try:
        parsed = parse_paste(str(message.get("text", "")), "message")
    except CommandError as err:
        audit(ctx, user=user, channel=channel, action="shortcut.paste", detail={"error": str(err)},
                    outcome="invalid")
        ephemeral(respond, f":warning: {err}")
        return
    start_paste(ctx, parsed, channel=channel, user=user, origin="shortcut", link=link)


def _button_value(body: dict[str, Any]) -> str:
    actions = body.get("actions") or [{}]
    return str(actions[0].get("value") or "")


def _register_button(app: App, ctx: BotContext, later: Later, action_id: str, name: str,
                     flow: ButtonFlow) -> None:
    def run(body: dict[str, Any], respond: Respond) -> None:
        message = flow(ctx, _button_value(body), click_from(body))
        if message:
            ephemeral(respond, message)

    @app.action(action_id)
    def clicked(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        count(ctx, name)
        later(name.replace("_", " ").capitalize(), respond, lambda: run(body, respond))


def _register_wrong_diagnosis(app: App, ctx: BotContext, later: Later) -> None:
    # Both buttons ask one question, what the cause was (bot/render/slack_triage.cause_modal); Mark resolved
    # offers the verdict already chosen, so confirming it labels the verdict right.
    _register_cause_form(app, ctx, later, "triage_wrong", "wrong", wrong_diagnosis_view, WRONG_CALLBACK,
                         record_wrong, "Storing the feedback")
    _register_cause_form(app, ctx, later, "triage_resolve", "resolve", resolve_view, RESOLVE_CALLBACK,
                         record_resolution, "Resolving the incident")


def _register_cause_form(app: App, ctx: BotContext, later: Later, action: str, name: str, opener: Opener,
                         callback: str, recorder: Recorder, doing: str) -> None:
    @app.action(action)
    def clicked(ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient) -> None:
        ack()
        count(ctx, name)
        click = click_from(body)
        open_modal(client, respond, click, name, lambda: opener(ctx, _button_value(body), click))

    @app.view(callback)
    def submitted(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        answer = accepted(ack, read_cause_submission(view))
        if answer is None:
            return
        count(ctx, f"{name}_submit")
        user = click_from(body).user
        later(doing, None, lambda: _tell(ctx, answer, user, recorder(ctx, answer, user)))


def _tell(ctx: BotContext, answer: CauseAnswer, user: str, message: str | None) -> None:
    if message and ctx.slack is not None and answer.channel:
        # A submitted modal has no response_url: tell the user privately in the report's channel.
        ctx.slack.chat_postEphemeral(channel=answer.channel, user=user, text=message)


def _register_home(app: App, ctx: BotContext, later: Later) -> None:
    @app.event("app_home_opened")
    def home(event: dict[str, Any], body: dict[str, Any]) -> None:
        if event.get("tab") != "home":
            return  # the Messages tab needs nothing from us
        count(ctx, "home")
        later("Publishing the App Home", None,
              lambda: queue_home(ctx, str(event.get("user", "")), body.get("event_id")))
