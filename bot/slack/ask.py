"""`/ask <question>`: an answer from triagebot's runbooks (playbooks, Xid catalog, question bank, docs).

The handler acks at once with "Searching the runbooks…" (or the usage, a refusal or a mistake, decided by pure
parsing); the search and the optional model run afterwards on the app's work pool, and the answer comes back
through the command's response_url as a message only the asker sees. Retrieval and the generated answer are
bot.assist.ask's: the question is redacted there before it is searched or sent to a model, and the audit log
stores the redacted text too.

Who may ask: /ask reads nothing from the cluster, so it needs no namespace. While `permissions` is empty anyone may
ask; once it lists channels or users, /ask is answered in those channels and for those users only (any grant
counts), so a workspace that restricts triagebot restricts the model's use as well.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import Ack, App, Respond

from bot.assist.ask import Answer, QuestionError, answer, check_question
from bot.config import ConfigError
from bot.context import BotContext
from bot.policy import Permissions
from bot.render.slack_assist import answer_payload, render
from bot.slack.common import Pool, audit, count, quoted
from bot.slack.triage_grammar import slack_unescape
from collectors.redact import redact_text

log = logging.getLogger("triagebot.slack.ask")

COMMAND = "/ask"
USAGE = "/ask <question>, e.g. /ask what does Xid 79 mean"
ACTION = "slash.ask"  # the audit action of every /ask, whatever its outcome
_HELP_WORDS = ("", "help", "-h", "--help", "?")


def may_ask(permissions: Permissions, *, channel: str, user: str) -> bool:
    """Anyone while nothing is restricted; otherwise channels and users with any grant (see the module doc)."""
    if not (permissions.channels or permissions.users):
        return True
    return bool(permissions.channels.get(channel) or permissions.users.get(user))


def refusal(*, channel: str, user: str) -> str:
    return (f"Not allowed: /ask is answered only in channels and for people listed under `permissions` in "
            f"triagebot's config, and neither this channel ({channel or '-'}) nor you ({user or '-'}) are. Ask an "
            "admin to add one of them.")


def audited(question: str, limit: int = 200) -> str:
    """The question as the audit log keeps it: redacted whole first, then shortened (a cut could hide a secret)."""
    return quoted(redact_text(question), limit)


def help_text(ctx: BotContext) -> str:
    model = ctx.assistant.name if ctx.assistant.enabled else ""
    return render(ctx.settings.templates_dir, "ask_help", top_k=ctx.settings.ask_top_k, model=model)


def answer_question(ctx: BotContext, question: str, *, user: str, channel: str) -> tuple[Answer | None, dict[str, Any]]:
    """Search (and with a model, answer), audit, and return the answer with what to send to the response_url."""
    try:
        result = answer(question, ctx.search_index(), ctx.assistant, k=ctx.settings.ask_top_k)
    except QuestionError as err:  # checked before the ack already; kept for callers that skip the check
        audit(ctx, user=user, channel=channel, action=ACTION, target=audited(question),
                    detail={"error": str(err)}, outcome="invalid")
        return None, {"text": f":warning: {err}. Usage: `{USAGE}`"}
    except ConfigError as err:  # e.g. ask_retriever=embeddings without its package
        log.error("the /ask search index cannot be built: %s", err)
        audit(ctx, user=user, channel=channel, action=ACTION, target=audited(question),
                    detail={"error": str(err)}, outcome="error")
        return None, {"text": f":x: /ask is not available: {err}. Tell the bot's operator."}
    audit(ctx, user=user, channel=channel, action=ACTION, target=audited(result.question), detail={
        "passages": [h.passage.id for h in result.hits], "generated": result.generated, "model": result.model,
        "fallback": result.fallback, "retriever": result.retriever})
    return result, answer_payload(result, ctx.settings.templates_dir)


def register_ask(app: App, ctx: BotContext, later: Pool) -> None:
    @app.command(COMMAND)
    def ask(ack: Ack, command: dict[str, Any], respond: Respond) -> None:
        user, channel = str(command.get("user_id", "")), str(command.get("channel_id", ""))
        question = slack_unescape(str(command.get("text", ""))).strip()
        if question.lower() in _HELP_WORDS:
            ack(text=help_text(ctx), response_type="ephemeral")
            count(ctx, "ask_help")
            later("Auditing", None, lambda: audit(ctx, user=user, channel=channel, action=ACTION,
                                                        target="help"))
            return
        if not may_ask(ctx.settings.permissions, channel=channel, user=user):
            ack(text=f":no_entry: {refusal(channel=channel, user=user)}", response_type="ephemeral")
            count(ctx, "ask_refused")
            later("Auditing", None, lambda: audit(ctx, user=user, channel=channel, action=ACTION,
                                                        target=audited(question), outcome="refused"))
            return
        try:
            check_question(question)
        except QuestionError as err:
            problem = str(err)
            ack(text=f":warning: {problem}. Usage: `{USAGE}`", response_type="ephemeral")
            count(ctx, "ask_invalid")
            later("Auditing", None, lambda: audit(ctx, user=user, channel=channel, action=ACTION,
                                                        target=audited(question), detail={"error": problem},
                                                        outcome="invalid"))
            return
        model = ctx.assistant.name if ctx.assistant.enabled else ""
        ack(text=render(ctx.settings.templates_dir, "ask_searching", question=audited(question), model=model),
            response_type="ephemeral")
        count(ctx, "ask")

        def work() -> None:
            _, reply = answer_question(ctx, question, user=user, channel=channel)
            respond(**reply, response_type="ephemeral", replace_original=False)

        later("Answering the question", respond, work)
