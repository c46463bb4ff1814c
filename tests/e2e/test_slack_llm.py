"""The optional model in Slack, end to end: report narratives, drill-debrief notes and /ask.

Signed requests go into the real Starlette app under uvicorn, posts come out at the Slack stand-in, state is in a
SQLite file. The model is langchain's fake chat model (tests/harness/fake_models.py), passed to build_context the
way a configured one would be built from the settings; nothing in slack-bolt, slack-sdk or langchain is mocked.
Posts are paced to one per second per channel, so every test works in channels of its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from sqlalchemy import select

from bot.assist.llm import NO_MODEL, Assistant
from bot.config import Settings
from bot.context import build_context
from bot.runner.jobs import TriageRequest
from bot.slack.triage_grammar import parse_paste
from bot.store.models import OutboxItem
from collectors.models import Target
from tests.harness.bot_server import serve_bot
from tests.harness.fake_models import fake_assistant
from tests.harness.slack_bot import SlackBot, actions, contexts, message_text
from tests.standins.slack_api import (
    Message,
    SlackStandIn,
    block_action_body,
)

SECRET = "0d9c8b7a6f5e4d3c2b1a0f9e8d7c6b5a"
CHANNELS = ("C0GEN", "C0DISCARD", "C0SLOW", "C0NONE", "C0OFF", "C0DRILLAI", "C0ASK", "C0ASKDENY")
USERS = {"U0ALICE": "alice", "U0BOB": "bob"}
POSTS = 25.0  # seconds: a handful of paced posts, with room for a loaded machine
PASTE = (Path(__file__).parents[1] / "fixtures" / "parsers" / "describe_pod" / "oomkilled.txt").read_text()
# Names only hypotheses the pasted report holds, with the statuses it gives them: passes the guard.
GOOD = ("What we know: `oom-loop` is confirmed and `limit-too-low` is **likely**. What to check next: compare "
        "the working set with the memory limit.")
# Names a hypothesis the report does not contain: the guard discards it.
INVENTED = "What we know: the GPU fell off the bus, so `gpu-fallen-off-bus` is the cause."


class Bot(SlackBot):
    """The bot, plus what these tests read: response_url answers, the outbox and the command counters."""

    def responses(self, url: str, count: int = 1) -> list[dict[str, Any]]:
        """What the bot sent to a response_url, waiting for `count` posts."""
        self.slack.wait_for(lambda: len(self.slack.response_urls[url]) >= count, timeout=POSTS)
        return self.slack.response_urls[url]

    def pasted(self, channel: str) -> tuple[Message, Message]:
        """Paste the describe output with /triage; the thread root and the report."""
        response, _ = self.command("/triage", PASTE, channel)
        assert response.status_code == 200 and not response.content
        self.slack.wait_for(lambda: bool(self.roots(channel)), timeout=POSTS)
        root = self.roots(channel)[0]
        self.slack.wait_for(lambda: any(actions(m) for m in self.said(channel, root)), timeout=POSTS)
        report = next(m for m in self.said(channel, root) if actions(m))
        return root, report

    def outbox(self, key_suffix: str) -> list[OutboxItem]:
        with self.ctx.factory() as session:
            return list(session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key.endswith(key_suffix))
                                        .order_by(OutboxItem.id)))

    def commands(self, name: str) -> float:
        value = self.ctx.metrics.registry.get_sample_value("triagebot_commands_total", {"command": name})
        return value or 0.0


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=CHANNELS, users=USERS, burst=50) as stand_in:
        yield stand_in


@contextmanager
def running(slack: SlackStandIn, tmp: Path, assistant: Assistant, **settings: Any) -> Iterator[Bot]:
    values: dict[str, Any] = {
        "slack_bot_token": SecretStr(slack.token), "slack_signing_secret": SecretStr(SECRET),
        "slack_api_url": slack.api_url, "database_url": f"sqlite:///{tmp / 'bot.sqlite'}",
        "webhook_token": SecretStr("w" * 24), "drills_dir": tmp / "drills", **settings}
    ctx = build_context(Settings(**values), assistant=assistant)
    with serve_bot(ctx) as (url, http):
        yield Bot(url=url, slack=slack, ctx=ctx, http=http, secret=SECRET, wait=POSTS)


# ------------------------------------------------------------------------------------------------------------
# Report narratives
# ------------------------------------------------------------------------------------------------------------


def test_a_generated_narrative_follows_the_report_in_its_thread(slack: SlackStandIn, tmp_path: Path) -> None:
    assistant, model = fake_assistant(GOOD)
    with running(slack, tmp_path, assistant) as bot:
        root, report = bot.pasted("C0GEN")
        replies = bot.wait_said("C0GEN", root, 2)
        narrative = replies[-1]
        assert narrative.ts > report.ts and not actions(narrative)
        text = message_text(narrative)
        # Markdown bold became Slack bold; the text is the model's, the label says so.
        assert "`oom-loop` is confirmed and `limit-too-low` is *likely*" in text
        assert contexts(narrative) == [":robot_face: Generated by fake:test from the redacted report; the verdicts "
                                        "above are the engine's."]
        # The model saw the report's conclusions, not the paste.
        prompt = model.prompts()
        assert '"id": "oom-loop"' in prompt and '"status": "confirmed"' in prompt
        assert "Containers:" not in prompt  # a line of the raw `kubectl describe` output
        # Slack shows the post a moment before the poster records it as sent.
        bot.slack.wait_for(lambda: [i.status for i in bot.outbox(":narrative")] == ["sent"], timeout=POSTS)
        (item,) = bot.outbox(":narrative")
        assert item.payload["generated"] is True
        # It depends on the report (a reply) but names the thread's root, as Slack asks replies to do.
        sent = [c for c in slack.calls_to("chat.postMessage") if c.params.get("channel") == "C0GEN"]
        assert sent[-1].params.get("thread_ts") == root.ts != report.ts


def test_a_narrative_naming_an_absent_hypothesis_is_replaced_by_the_rules(slack: SlackStandIn,
                                                                          tmp_path: Path) -> None:
    assistant, _ = fake_assistant(INVENTED)
    with running(slack, tmp_path, assistant) as bot:
        root, report = bot.pasted("C0DISCARD")
        narrative = bot.wait_said("C0DISCARD", root, 2)[-1]
        assert narrative.ts > report.ts
        text = message_text(narrative)
        assert "gpu-fallen-off-bus" not in text.split("Written by")[0]
        assert "What we know: `limit-too-low` is likely" in text and "What we ruled out:" in text
        (label,) = contexts(narrative)
        assert "Written by triagebot's rules (the generated summary was discarded: it names gpu-fallen-off-bus" \
            in label


def test_a_model_that_times_out_neither_delays_the_report_nor_stops_the_narrative(slack: SlackStandIn,
                                                                                  tmp_path: Path) -> None:
    timeout = 3.0
    assistant, _ = fake_assistant(GOOD, delay=30, timeout=timeout)
    with running(slack, tmp_path, assistant) as bot:
        started = time.monotonic()
        root, report = bot.pasted("C0SLOW")
        narrative = bot.wait_said("C0SLOW", root, 2)[-1]
        waited = time.monotonic() - started
        assert narrative.ts > report.ts
        (label,) = contexts(narrative)
        assert f"the model failed: no answer within {timeout:g}s" in label
        assert "What we know: `limit-too-low` is likely" in message_text(narrative)
        # The report was queued at once; the narrative only when the model's time was up.
        (queued_report,) = bot.outbox(":report")
        (queued_narrative,) = bot.outbox(":narrative")
        gap = (queued_narrative.created_at - queued_report.created_at).total_seconds()
        assert timeout - 0.5 <= gap < timeout + 20, gap  # bounded by the timeout, not by the 30 s model
        assert waited >= timeout


def test_without_a_model_nothing_extra_is_posted(slack: SlackStandIn, tmp_path: Path) -> None:
    with running(slack, tmp_path, NO_MODEL) as bot:
        assert not bot.ctx.assistant.enabled
        root, _ = bot.pasted("C0NONE")
        # The evidence file is queued with the report and sent after it: by then a narrative would be queued too.
        bot.slack.wait_for(lambda: any(f.thread_ts == root.ts and f.name == "evidence.txt" for f in slack.files),
                           timeout=POSTS)
        assert not bot.outbox(":narrative")
        assert len(bot.said("C0NONE", root)) == 1


def test_summaries_off_posts_no_narrative_even_with_a_model(slack: SlackStandIn, tmp_path: Path) -> None:
    assistant, model = fake_assistant(GOOD, summaries=False)
    with running(slack, tmp_path, assistant) as bot:
        # The path /triage takes with a paste, called directly: no Slack pacing to wait for.
        request = TriageRequest(target=Target(), since=timedelta(0), trigger="paste", channel="C0OFF",
                                key="paste:summaries-off", parent_key=None)
        bot.ctx.jobs.publish_paste(request, parse_paste(PASTE, "paste").artifacts)
        bot.ctx.jobs.narrators.shutdown(wait=True)  # anything submitted has finished
        assert bot.outbox("paste:summaries-off:report")
        assert not bot.outbox("paste:summaries-off:narrative") and not model.seen


# ------------------------------------------------------------------------------------------------------------
# Drill debriefs
# ------------------------------------------------------------------------------------------------------------

COACH = ("You found `host-memory-underestimated`: the pod status and the memory metrics decided it. "
         "Next time skip the hint.")


def _declare(bot: Bot, root: Message, hypothesis: str, user: str = "U0ALICE") -> None:
    """Click Declare on the drill's root and submit the modal with `hypothesis` chosen, as Slack does."""
    value = next(e["value"] for e in actions(root) if e["action_id"] == "drill_declare")
    before = len(bot.slack.modals)
    url = bot.slack.response_url(channel=root.channel, message_ts=root.ts, user_id=user)
    assert bot.send(block_action_body("drill_declare", value, channel_id=root.channel, user_id=user,
                                      message_ts=root.ts, response_url=url, message_text=root.text,
                                      message_blocks=root.blocks, trigger_id="trigger-declare")).status_code == 200
    bot.slack.wait_for(lambda: len(bot.slack.modals) > before, timeout=POSTS)
    bot.choose_in_modal(bot.slack.modals[-1], hypothesis, user)


def test_a_drill_debrief_is_followed_by_the_models_notes(slack: SlackStandIn, tmp_path: Path) -> None:
    assistant, model = fake_assistant(COACH)
    with running(slack, tmp_path, assistant) as bot:
        response, _ = bot.command("/drill", "start oom-trainer-limit", "C0DRILLAI")
        assert response.status_code == 200
        bot.slack.wait_for(lambda: bool(bot.roots("C0DRILLAI")), timeout=POSTS)
        root = bot.roots("C0DRILLAI")[0]
        _declare(bot, root, "oom-killed/host-memory-underestimated")
        debrief, notes = bot.wait_said("C0DRILLAI", root, 2)[:2]
        assert "Debrief:" in message_text(debrief) and "Coach's notes" not in message_text(debrief)
        assert "Coach's notes" in message_text(notes)
        assert "You found `host-memory-underestimated`" in message_text(notes)
        assert contexts(notes) == [":robot_face: Generated by fake:test from the redacted report; the verdicts "
                                    "above are the engine's."]
        assert '"truth": "host-memory-underestimated"' in model.prompts()


# ------------------------------------------------------------------------------------------------------------
# /ask
# ------------------------------------------------------------------------------------------------------------

XID_CITE = "collectors/catalogs/xid.yaml#79"
TOKEN = "ghp_" + "Zx9" * 10  # a GitHub token's shape: redacted wherever it goes
ASK_PERMISSIONS = {"channels": {"C0ASK": ["shop"]}, "users": {"U0BOB": ["ml"]}}


def test_ask_answers_from_the_runbooks_privately(slack: SlackStandIn, tmp_path: Path) -> None:
    with running(slack, tmp_path, NO_MODEL) as bot:
        posts = len(slack.calls_to("chat.postMessage"))
        started = time.monotonic()
        response, url = bot.command("/ask", "what does xid 79 mean", "C0ASK")
        assert time.monotonic() - started < 2.0
        ack = response.json()
        assert ack["response_type"] == "ephemeral" and "Searching the runbooks" in ack["text"]
        (reply,) = bot.responses(url)
        assert reply["response_type"] == "ephemeral" and reply["replace_original"] is False
        text = message_text(reply)
        assert f"`{XID_CITE}`" in text and "[1] Xid 79: GPU has fallen off the bus" in text
        assert "score " in text and "The GPU stopped answering over PCIe" in text  # an excerpt
        assert contexts(reply)[0] == ":books: No generated answer (no model is configured): read the passages below."
        (entry,) = bot.wait_audits("slash.ask", 1)
        assert (entry.actor, entry.channel, entry.target, entry.outcome) == ("U0ALICE", "C0ASK",
                                                                              "what does xid 79 mean", "ok")
        assert entry.detail["passages"][0] == "xid:79" and entry.detail["generated"] is False
        assert bot.commands("ask") == 1
        assert len(slack.calls_to("chat.postMessage")) == posts  # nothing in the channel


def test_ask_with_a_model_shows_its_answer_under_a_label(slack: SlackStandIn, tmp_path: Path) -> None:
    assistant, model = fake_assistant("Xid 79 means the GPU fell off the bus [1]; drain the node and power-cycle "
                                      "it [2].")
    with running(slack, tmp_path, assistant) as bot:
        _, url = bot.command("/ask", "what does xid 79 mean", "C0ASK")
        (reply,) = bot.responses(url)
        text = message_text(reply)
        assert "Xid 79 means the GPU fell off the bus [1]" in text
        assert contexts(reply)[0] == ":robot_face: Generated by fake:test from the passages below — check them"
        assert f"`{XID_CITE}`" in text  # the passages still follow
        assert "[1] Xid 79: GPU has fallen off the bus" in model.prompts()
        (entry,) = bot.wait_audits("slash.ask", 1)
        assert entry.detail["generated"] is True and entry.detail["model"] == "fake:test"


def test_an_answer_citing_a_passage_it_was_not_given_is_discarded(slack: SlackStandIn, tmp_path: Path) -> None:
    assistant, _ = fake_assistant("Reboot the node [7].")
    with running(slack, tmp_path, assistant) as bot:
        _, url = bot.command("/ask", "what does xid 79 mean", "C0ASK")
        (reply,) = bot.responses(url)
        assert "Reboot the node" not in message_text(reply) and f"`{XID_CITE}`" in message_text(reply)
        assert "cited [7], but only passages [1]-[4] exist, so it was discarded" in contexts(reply)[0]


@pytest.mark.parametrize("text", ["", "help", "  "])
def test_ask_without_a_question_gets_the_usage(slack: SlackStandIn, tmp_path: Path, text: str) -> None:
    with running(slack, tmp_path, NO_MODEL) as bot:
        response, url = bot.command("/ask", text, "C0ASK")
        ack = response.json()
        assert ack["response_type"] == "ephemeral"
        assert "`/ask what does Xid 79 mean`" in ack["text"] and "Nothing is read from the cluster" in ack["text"]
        (entry,) = bot.wait_audits("slash.ask", 1)
        assert (entry.target, entry.outcome) == ("help", "ok")
        assert bot.commands("ask_help") == 1
        time.sleep(0.3)
        assert not slack.response_urls[url]  # the ack was the answer


def test_a_secret_in_the_question_reaches_neither_the_model_nor_the_audit_log(slack: SlackStandIn,
                                                                              tmp_path: Path) -> None:
    assistant, model = fake_assistant("The GPU fell off the bus [1].")
    with running(slack, tmp_path, assistant) as bot:
        question = f"what does xid 79 mean? our token={TOKEN} and password: hunter2hunter2"
        response, url = bot.command("/ask", question, "C0ASK")
        assert TOKEN not in response.text and "hunter2hunter2" not in response.text
        (reply,) = bot.responses(url)
        assert TOKEN not in json.dumps(reply) and "token=&lt;redacted&gt;" in message_text(reply)
        assert model.seen and TOKEN not in model.prompts() and "hunter2hunter2" not in model.prompts()
        assert "what does xid 79 mean" in model.prompts()
        (entry,) = bot.wait_audits("slash.ask", 1)
        stored = json.dumps([entry.target, entry.detail])
        assert TOKEN not in stored and "hunter2hunter2" not in stored and "token=<redacted>" in str(entry.target)
        # An over-long question is refused in the ack, and its audit line is redacted as well.
        response, _ = bot.command("/ask", f"token={TOKEN} " + "why " * 600, "C0ASK")
        assert "at most 2,000" in response.json()["text"]
        invalid = bot.wait_audits("slash.ask", 2)[1]
        assert invalid.outcome == "invalid" and TOKEN not in json.dumps([invalid.target, invalid.detail])


def test_ask_follows_the_permissions_once_they_are_set(slack: SlackStandIn, tmp_path: Path) -> None:
    with running(slack, tmp_path, NO_MODEL, permissions=ASK_PERMISSIONS) as bot:
        response, _ = bot.command("/ask", "what does xid 79 mean", "C0ASKDENY")
        ack = response.json()
        assert ack["response_type"] == "ephemeral" and ack["text"].startswith(":no_entry: Not allowed")
        assert "C0ASKDENY" in ack["text"] and "U0ALICE" in ack["text"]
        (entry,) = bot.wait_audits("slash.ask", 1)
        assert (entry.outcome, entry.target) == ("refused", "what does xid 79 mean")
        # Bob has a grant of his own, so he may ask anywhere; the listed channel may ask whoever asks.
        _, bob = bot.command("/ask", "what does xid 79 mean", "C0ASKDENY", user="U0BOB")
        _, alice = bot.command("/ask", "what does xid 79 mean", "C0ASK")
        for url in (bob, alice):
            assert f"`{XID_CITE}`" in message_text(bot.responses(url)[0])
        assert bot.commands("ask_refused") == 1 and bot.commands("ask") == 2
