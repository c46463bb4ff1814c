"""`/drill` in Slack, the thin part: bolt listeners for the command, its buttons, forms and thread replies.

The flows are bot/slack/drill_service.py (a step: drill_steps.py); the grammar bot/slack/drill_grammar.py; the
blocks bot/render/drills/slack_drill.py.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Literal

from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient

from bot.context import BotContext
from bot.render.drills.slack_drill import (
    DECLARE_ACTION,
    EVIDENCE_PREFIX,
    GIVE_UP_ACTION,
    HINT_ACTION,
    HYPOTHESIS_CALLBACK,
    PROPOSE_ACTION,
)
from bot.slack.common import Pool, accepted, click_from, count, ephemeral, open_modal, quoted
from bot.slack.drill_grammar import (
    COMMAND,
    HELP,
    DrillCommand,
    DrillCommandError,
    Who,
    parse_command,
    read_hypothesis_submission,
    thread_reply,
)
from bot.slack.drill_service import SlackDrills

log = logging.getLogger("triagebot.slack.drills")

EVIDENCE_ACTIONS = re.compile(r"^drill_evidence:[a-z-]+$")
INTERVIEW_BUTTONS = re.compile(r"^interview_(hint|skip|model_answer)$")
ANY_TEXT = re.compile(r"\S")  # thread replies with something in them; bolt's app.message matches on text


def register_drills(app: App, ctx: BotContext, pool: Pool) -> SlackDrills:
    """/drill, its buttons and forms, and thread replies (interview answers)."""
    drills = SlackDrills(ctx)
    _register_command(app, drills, pool)
    _register_buttons(app, drills, pool)
    _register_forms(app, drills, pool)
    _register_replies(app, drills, pool)
    return drills


def _tell(ctx: BotContext, channel: str, user: str, text: str | None) -> None:
    """Privately, where there is no response_url (a submitted modal, a thread reply)."""
    if text and channel and ctx.slack is not None:
        ctx.slack.chat_postEphemeral(channel=channel, user=user, text=text)


def _who(body: dict[str, Any]) -> Who:
    click = click_from(body)
    return Who(click.user, click.channel)


def _register_command(app: App, drills: SlackDrills, pool: Pool) -> None:
    ctx = drills.ctx

    @app.command(COMMAND)
    def drill_command(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        who = Who(str(command.get("user_id", "")), str(command.get("channel_id", "")))
        text = str(command.get("text", ""))
        try:
            cmd = parse_command(text)
        except DrillCommandError as err:
            problem = str(err)
            ack(text=f":warning: {problem}", response_type="ephemeral")
            count(ctx, "drill_invalid")
            pool("Auditing", None, lambda: drills.audit(who, "slash.drill", quoted(text), {"error": problem},
                                                        "invalid"))
            return
        if cmd.action == "help":
            ack(text=HELP, response_type="ephemeral")
            count(ctx, "drill_help")
            pool("Auditing", None, lambda: drills.audit(who, "slash.drill", "help"))
            return
        ack()
        count(ctx, f"drill_{cmd.action}")
        team_domain = str(command.get("team_domain", ""))
        pool(f"/drill {cmd.action}", respond, lambda: _run_command(drills, cmd, who, team_domain, respond))


def _run_command(drills: SlackDrills, cmd: DrillCommand, who: Who, team_domain: str, respond: Respond) -> None:
    message: str | None
    if cmd.action == "start":
        message = drills.start_drill(cmd, who)
    elif cmd.action == "interview":
        message = drills.start_interview(cmd, who)
    elif cmd.action == "leaderboard":
        message = drills.leaderboard(who.channel)
        drills.audit(who, "slash.drill", "leaderboard")
    else:
        message = drills.history(who, team_domain)
        drills.audit(who, "slash.drill", "history")
    if message:
        ephemeral(respond, message)


def _value(body: dict[str, Any]) -> tuple[str, str]:
    action = (body.get("actions") or [{}])[0]
    return str(action.get("action_id") or ""), str(action.get("value") or "")


def _register_buttons(app: App, drills: SlackDrills, pool: Pool) -> None:
    ctx = drills.ctx

    def later(name: str, respond: Respond, flow: Callable[[], str | None]) -> None:
        count(ctx, name)

        def run() -> None:
            message = flow()
            if message:
                ephemeral(respond, message)

        pool(name.replace("_", " ").capitalize(), respond, run)

    @app.action(EVIDENCE_ACTIONS)
    def evidence(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        (action_id, value), who = _value(body), _who(body)
        source = action_id.removeprefix(EVIDENCE_PREFIX)
        later("drill_evidence", respond, lambda: drills.evidence(value, source, who))

    @app.action(HINT_ACTION)
    def hint(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        (_, value), who = _value(body), _who(body)
        later("drill_hint", respond, lambda: drills.hint(value, who))

    @app.action(GIVE_UP_ACTION)
    def give_up(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        (_, value), who = _value(body), _who(body)
        later("drill_give_up", respond, lambda: drills.give_up(value, who))

    @app.action(INTERVIEW_BUTTONS)
    def interview_clicked(ack: Ack, body: dict[str, Any], respond: Respond) -> None:
        ack()
        (action_id, value), who = _value(body), _who(body)
        action = action_id.removeprefix("interview_")
        later(action_id, respond, lambda: drills.interview_button(value, action, who))


def _register_forms(app: App, drills: SlackDrills, pool: Pool) -> None:
    ctx = drills.ctx

    def open_form(action: Literal["propose", "declare"], body: dict[str, Any], respond: Respond,
                  client: WebClient) -> None:
        count(ctx, f"drill_{action}")
        click = click_from(body)
        open_modal(client, respond, click, action,
                   lambda: drills.hypothesis_form(_value(body)[1], action, Who(click.user, click.channel)))

    @app.action(PROPOSE_ACTION)
    def propose(ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient) -> None:
        ack()
        open_form("propose", body, respond, client)

    @app.action(DECLARE_ACTION)
    def declare(ack: Ack, body: dict[str, Any], respond: Respond, client: WebClient) -> None:
        ack()
        open_form("declare", body, respond, client)

    @app.view(HYPOTHESIS_CALLBACK)
    def submitted(ack: Ack, body: dict[str, Any], view: dict[str, Any]) -> None:
        choice = accepted(ack, read_hypothesis_submission(view))
        if choice is None:
            return
        count(ctx, f"drill_{choice.action}_submit")
        user = click_from(body).user

        def run() -> None:
            session = drills.store.load(choice.session_id)
            channel = session.channel if session else ""
            _tell(ctx, channel, user, drills.submit_hypothesis(choice, Who(user, channel)))

        pool(f"The {choice.action}", None, run)


def _register_replies(app: App, drills: SlackDrills, pool: Pool) -> None:
    ctx = drills.ctx

    # Every message in every channel the bot is in arrives here; only thread replies are looked at further.
    @app.message(ANY_TEXT)
    def replied(event: dict[str, Any]) -> None:
        reply = thread_reply(event)
        if reply is None:
            return
        pool("Grading the answer", None, lambda: _tell(ctx, reply.channel, reply.user, drills.answer(reply)))
