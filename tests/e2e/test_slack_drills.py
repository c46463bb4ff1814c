"""`/drill` end to end: signed requests into the real Starlette app under uvicorn, posts out to the Slack stand-in,
sessions in a SQLite file. Nothing in slack-bolt or slack-sdk is mocked.

Posts are paced to one per second per channel (as Slack paces them), so every test works in a channel of its own
and fires its clicks without waiting for each post; it waits for the audit lines (written when a step is applied)
and then once for the thread. `drill save` runs the real CLI against a database filled through bot.store.repo.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr
from sqlalchemy import select

from bot.cli.main import main
from bot.config import Settings
from bot.context import build_context
from bot.policy import Permissions
from bot.render.drills.recorded_chart import recorded_chart
from bot.slack.drill_grammar import DrillCommand, DrillCommandError, ThreadReply, Who, parse_command, thread_reply
from bot.slack.drill_service import SlackDrills
from bot.store import outbox, repo
from bot.store.db import make_engine, migrate, session_factory
from bot.store.drill_sessions import SqlSessionStore
from bot.store.models import AuditEntry, OutboxItem
from collectors.models import Artifact, ArtifactKind, Target
from drills import exact
from drills.questions import load_bank
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.picker import list_incidents, pick
from playbooks.pipeline import analyse
from tests.harness.bot_server import serve_bot
from tests.harness.slack_bot import SlackBot, actions, message_text
from tests.standins.slack_api import (
    TEAM_DOMAIN,
    Message,
    SlackStandIn,
    block_action_body,
    event_body,
    message_event,
)

SECRET = "5e1f0c2a9b7d4e3f8a6c1b0d2e4f6a8c"
CHANNELS = ("C0DRILL", "C0GIVEUP", "C0RESUME", "C0IVIEW", "C0SAVED")
USERS = {"U0ALICE": "alice", "U0BOB": "bob", "U0CAROL": "carol"}
POSTS = 25.0  # seconds: a drill's dozen paced posts, with room for a loaded machine
QUESTION = "time-slicing-vs-mig"
FIXTURES = Path(__file__).parents[1] / "fixtures" / "parsers"


class Bot(SlackBot):
    """The running bot, with helpers that act the way Slack does."""

    def slash(self, text: str, channel: str, user: str = "U0ALICE") -> tuple[httpx.Response, str]:
        return self.command("/drill", text, channel, user)

    def start(self, text: str, channel: str, user: str = "U0ALICE") -> Message:
        """Run a /drill that posts a thread root; the new root."""
        before = len(self.roots(channel))
        response, _ = self.slash(text, channel, user)
        assert response.status_code == 200 and not response.content
        self.slack.wait_for(lambda: len(self.roots(channel)) > before, timeout=POSTS)
        return self.roots(channel)[-1]

    def click(self, action_id: str, root: Message, user: str = "U0ALICE") -> str:
        """Click a button on the root; the click's response_url (where ephemeral answers go)."""
        value = next(e["value"] for e in actions(root) if e["action_id"] == action_id)
        url = self.slack.response_url(channel=root.channel, message_ts=root.ts, user_id=user)
        body = block_action_body(action_id, value, channel_id=root.channel, user_id=user, message_ts=root.ts,
                                 response_url=url, message_text=root.text, message_blocks=root.blocks,
                                 trigger_id=f"trigger-{time.monotonic_ns()}")
        assert self.send(body).status_code == 200
        return url

    def choose(self, action_id: str, root: Message, hypothesis: str, user: str = "U0ALICE") -> dict[str, Any]:
        """Click Propose or Declare, and submit the modal with `hypothesis` chosen; the modal as opened."""
        before = len(self.slack.modals)
        self.click(action_id, root, user)
        self.slack.wait_for(lambda: len(self.slack.modals) > before)
        modal = self.slack.modals[-1]
        self.choose_in_modal(modal, hypothesis, user)
        return modal

    def reply(self, channel: str, root: Message, text: str, user: str = "U0ALICE", ts: str | None = None) -> str:
        """A person's reply in the thread, and the message event Slack sends for it; the reply's ts."""
        ts = ts or self.slack.post_user_message(channel, text, user=user, thread_ts=root.ts).ts
        event = message_event(text, user=user, channel=channel, ts=ts, thread_ts=root.ts)
        assert self.send(event_body(event), form=False).status_code == 200
        return ts

    def files(self, root: Message) -> dict[str, bytes]:
        return {f.name: f.bytes for f in self.slack.files if f.thread_ts == root.ts}

    def ephemeral(self, url: str) -> str:
        self.slack.wait_for(lambda: bool(self.slack.response_urls[url]), timeout=10)
        return str(self.slack.response_urls[url][-1]["text"])


@contextmanager
def running(slack: SlackStandIn, database: Path) -> Iterator[Bot]:
    settings = Settings(slack_bot_token=SecretStr(slack.token), slack_signing_secret=SecretStr(SECRET),
                        slack_api_url=slack.api_url, database_url=f"sqlite:///{database}",
                        webhook_token=SecretStr("w" * 24), drills_dir=database.parent / "drills",
                        # Save as drill is a report button: it needs the run's namespace granted to the channel.
                        permissions=Permissions(channels={"C0SAVED": ["ml"]}))
    ctx = build_context(settings)
    with serve_bot(ctx) as (url, http):
        yield Bot(url=url, slack=slack, ctx=ctx, http=http, secret=SECRET, wait=POSTS)


@pytest.fixture(scope="module")
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=CHANNELS, users=USERS, burst=50) as stand_in:
        yield stand_in


@pytest.fixture(scope="module")
def bot(slack: SlackStandIn, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Bot]:
    with running(slack, tmp_path_factory.mktemp("slack-drills") / "bot.sqlite") as running_bot:
        yield running_bot


def _session_id(root: Message) -> str:
    return str(actions(root)[0]["value"])


# ------------------------------------------------------------------------------------------------------------
# Drills
# ------------------------------------------------------------------------------------------------------------


def test_help_and_mistakes_are_answered_privately(bot: Bot) -> None:
    response, _ = bot.slash("help", "C0DRILL")
    assert response.json()["response_type"] == "ephemeral"
    assert "/drill start [incident-id|random]" in response.json()["text"]
    response, _ = bot.slash("begin", "C0DRILL")
    assert "unknown `/drill begin`" in response.json()["text"]
    response, url = bot.slash("start no-such-incident-at-all hard extra", "C0DRILL")
    assert response.status_code == 200
    assert "unexpected 'extra'" in bot.ephemeral(url)
    assert bot.wait_audits("slash.drill", 3)[-1].outcome == "invalid"
    assert not bot.roots("C0DRILL")


@dataclass
class Drilled:
    root: Message
    session_id: str
    proposal_modal: dict[str, Any]


@pytest.fixture(scope="module")
def ideal(bot: Bot) -> Drilled:
    """Alice drills oom-trainer-limit along the ideal path, proposes a rival, takes a hint, declares the truth."""
    root = bot.start("start oom-trainer-limit", "C0DRILL")
    bot.click("drill_evidence:pod-status", root)
    bot.click("drill_evidence:metrics", root)
    modal = bot.choose("drill_propose", root, "oom-killed/node-oom")
    bot.click("drill_hint", root)
    # Every step is applied (audited) before the declaration, whatever order the pool ran them in.
    bot.wait_audits("button.drill_evidence", 2)
    bot.wait_audits("button.drill_propose_submit", 1)
    bot.wait_audits("button.drill_hint", 1)
    bot.choose("drill_declare", root, "oom-killed/host-memory-underestimated")
    return Drilled(root=root, session_id=_session_id(root), proposal_modal=modal)


def test_the_root_shows_the_page_and_nothing_more(bot: Bot, ideal: Drilled) -> None:
    incident = load_incident(INCIDENT_DIR / "oom-trainer-limit")
    shown = message_text(ideal.root)
    assert incident.meta.page.strip().splitlines()[0] in shown
    assert "service=training-job" in shown
    for secret in (incident.meta.title, incident.meta.id, "limit-too-low", "host-memory-underestimated", "oom-killed/"):
        assert secret not in shown
    ids = {e["action_id"] for e in actions(ideal.root)}
    assert {"drill_evidence:pod-status", "drill_evidence:kernel-log", "drill_evidence:conntrack"} <= ids
    assert {"drill_hint", "drill_propose", "drill_declare", "drill_give_up"} <= ids
    assert bot.audited("slash.drill")[-1].detail["incident"] == "oom-trainer-limit"


def test_a_drill_in_a_thread_from_evidence_to_debrief(bot: Bot, ideal: Drilled) -> None:
    replies = bot.wait_said("C0DRILL", ideal.root, 5)
    texts = [message_text(m) for m in replies]
    evidence = [t for t in texts if ":mag_right:" in t]
    assert len(evidence) == 2 and any("pod status" in t for t in evidence) and any("metrics" in t for t in evidence)
    assert any("+60 s" in t for t in evidence) and any("+90 s" in t for t in evidence)
    files = bot.files(ideal.root)
    assert b"OOMKilled" in files["pod-status.txt"] and "metrics.txt" in files
    # The raw text is uploaded, never pasted into the blocks.
    assert all("OOMKilled" not in json.dumps(m.blocks) for m in replies if ":mag_right:" in message_text(m))
    assert len(replies) == 5  # two evidence summaries, the proposal, the hint, the debrief

    proposal = next(t for t in texts if "You proposed" in t)
    assert "oom-killed/node-oom" in proposal and "limit-too-low" not in proposal
    assert "host-memory-underestimated" not in proposal
    options = [o["value"] for g in ideal.proposal_modal["blocks"][1]["element"]["option_groups"] for o in g["options"]]
    # every playbook's
    assert {"latency/dns", "oom-killed/node-oom", "oom-killed/limit-too-low",
            "oom-killed/host-memory-underestimated"} <= set(options)
    assert any("Hint 1/3" in t for t in texts)

    debrief = next(m for m in replies if "Debrief:" in message_text(m))
    stored = SqlSessionStore(bot.ctx.engine).load(ideal.session_id)
    assert stored is not None and stored.finished and stored.score is not None
    # The ideal path with a proposal (30 s) and a hint (5 points): 50 + 20 + 15 + 8 (150 s par / 180 s) + 0 = 93.
    assert stored.score.total == 93 and sorted(stored.revealed_sources) == ["metrics", "pod-status"]
    assert f"Debrief: {stored.score.total}/100" in message_text(debrief) and "Right" in message_text(debrief)
    assert "Ideal path" in message_text(debrief) and "pod status" in message_text(debrief)
    bot.slack.wait_for(lambda: "debrief.txt" in bot.files(ideal.root), timeout=POSTS)
    assert b"What each piece of evidence meant" in bot.files(ideal.root)["debrief.txt"]
    # The root loses its buttons and says how it ended.
    bot.slack.wait_for(lambda: bool(ideal.root.edits), timeout=POSTS)
    assert not actions(ideal.root) and f"{stored.score.total}/100" in message_text(ideal.root)
    assert bot.audited("button.drill_declare_submit")[-1].detail["outcome"] == "right"


def test_the_debrief_posts_the_leaders_chart_as_a_triage_report_does(bot: Bot, ideal: Drilled) -> None:
    """The chart live triage would have posted under its report, uploaded in the drill's thread the same way."""
    bot.slack.wait_for(lambda: "chart.png" in bot.files(ideal.root), timeout=POSTS)
    png = bot.files(ideal.root)["chart.png"]
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"container_memory_working_set_bytes via prom-memory-working-set-range.json" in png  # its provenance
    assert png == recorded_chart(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    [upload] = [f for f in bot.slack.files if f.thread_ts == ideal.root.ts and f.name == "chart.png"]
    assert upload.title == "The series behind the leading hypothesis"


def test_a_finished_drill_and_someone_elses_drill_refuse_clicks(bot: Bot, ideal: Drilled) -> None:
    ideal_root = Message(channel="C0DRILL", ts=ideal.root.ts, text="", user="U0BOT",
                         blocks=[{"type": "actions", "elements": [
                             {"type": "button", "action_id": "drill_hint", "value": ideal.session_id}]}])
    assert "is finished" in bot.ephemeral(bot.click("drill_hint", ideal_root))
    assert "U0ALICE>'s drill" in bot.ephemeral(bot.click("drill_hint", ideal_root, user="U0BOB"))
    assert [e.outcome for e in bot.audited("button.drill_hint")[-2:]] == ["invalid", "invalid"]


def test_a_random_drill_declared_wrong_scores_low(bot: Bot, ideal: Drilled) -> None:
    expected = pick(list_incidents(), "random", "easy", None, rng=random.Random(7), avoid=[])
    root = bot.start("start random easy --seed 7", "C0DRILL", user="U0BOB")
    assert expected.page.strip().splitlines()[0] in message_text(root)
    truth = expected.ground_truth
    assert truth is not None
    wrong = "latency/dns" if truth.playbook != "latency" else "pending/quota-exceeded"
    bot.choose("drill_declare", root, wrong, user="U0BOB")
    replies = bot.wait_said("C0DRILL", root, 1)
    assert "Wrong" in message_text(replies[0]) and f"`{truth.playbook}/{truth.hypothesis}`" in message_text(replies[0])
    stored = SqlSessionStore(bot.ctx.engine).load(_session_id(root))
    assert stored is not None and stored.score is not None and stored.score.total <= 10


def test_leaderboard_and_history(bot: Bot, ideal: Drilled) -> None:
    bot.wait_audits("button.drill_declare_submit", 2)  # alice's and bob's drills are both scored
    _, url = bot.slash("leaderboard", "C0DRILL")
    board = bot.ephemeral(url)
    assert board.index("<@U0ALICE>") < board.index("<@U0BOB>")
    _, elsewhere = bot.slash("leaderboard", "C0GIVEUP")
    assert "No finished drills in this channel" in bot.ephemeral(elsewhere)
    _, url = bot.slash("history", "C0GIVEUP")
    history = bot.ephemeral(url)
    assert ideal.session_id in history and "oom-trainer-limit" in history
    assert "oom-killed/host-memory-underestimated" in history
    assert f"https://{TEAM_DOMAIN}.slack.com/archives/C0DRILL/p{ideal.root.ts.replace('.', '')}" in history
    assert [e.target for e in bot.audited("slash.drill")[-3:]] == ["leaderboard", "leaderboard", "history"]


def test_give_up_shows_the_answer_and_ends_the_drill_unscored(bot: Bot) -> None:
    root = bot.start("start pending-quota-exhausted", "C0GIVEUP", user="U0CAROL")
    bot.click("drill_give_up", root, user="U0CAROL")
    reply = bot.wait_said("C0GIVEUP", root, 1)[0]
    assert "gave up" in message_text(reply) and "pending/quota-exceeded" in message_text(reply)
    # The answer comes with its chart: the quota's used share reaching the hard limit.
    bot.slack.wait_for(lambda: "chart.png" in bot.files(root), timeout=POSTS)
    assert b"kube_resourcequota via prom-quota-used-ratio-range.json" in bot.files(root)["chart.png"]
    stored = SqlSessionStore(bot.ctx.engine).load(_session_id(root))
    assert stored is not None and stored.finished and stored.score is None
    _, url = bot.slash("history", "C0GIVEUP", user="U0CAROL")
    assert "gave up" in bot.ephemeral(url)


def test_a_drill_continues_after_a_restart(slack: SlackStandIn, tmp_path: Path) -> None:
    database = tmp_path / "restart.sqlite"
    with running(slack, database) as first:
        root = first.start("start crashloop-bad-config", "C0RESUME")
        first.click("drill_evidence:app-logs", root)
        first.wait_said("C0RESUME", root, 1)
    # A new BotContext (and app, and poster) on the same database: the buttons of the old thread still work.
    with running(slack, database) as second:
        second.choose("drill_declare", root, "crash-loop/bad-config")
        replies = second.wait_said("C0RESUME", root, 2)
        assert "Debrief: 100/100" in message_text(replies[1])
        stored = SqlSessionStore(second.ctx.engine).load(_session_id(root))
        assert stored is not None and stored.revealed_sources == ["app-logs"] and stored.score is not None


# ------------------------------------------------------------------------------------------------------------
# Interviews
# ------------------------------------------------------------------------------------------------------------


def test_an_interview_answered_in_the_thread(bot: Bot) -> None:
    question = load_bank().get(QUESTION)
    assert question is not None
    root = bot.start(f"interview {QUESTION}", "C0IVIEW")
    assert question.question[:60] in message_text(root)
    assert {e["action_id"] for e in actions(root)} == {"interview_hint", "interview_skip", "interview_model_answer"}

    bot.reply("C0IVIEW", root, "Time-slicing is fine, I think.", user="U0BOB")  # not the interviewee: ignored
    answer = ("Time-slicing advertises several replicas of one GPU so pods take turns on it; MIG is a hardware "
              "partition that gives each slice its own memory and compute.")
    ts = bot.reply("C0IVIEW", root, answer)
    graded = bot.wait_said("C0IVIEW", root, 1)[0]
    text = message_text(graded)
    assert "Coverage 50/100: partial" in text
    points = {p.id: p.point for p in question.expected_points}
    assert f":white_check_mark: {points['mig-hardware']}" in text and f":x: {points['when']}" in text
    assert "Follow-up 1/1" in text and question.follow_ups[0] in text
    bot.reply("C0IVIEW", root, answer, ts=ts)  # Slack delivers the same event again: graded once
    bot.wait_audits("message.interview_answer", 1)

    bot.click("interview_hint", root)
    bot.wait_audits("button.interview_hint", 1)
    bot.click("interview_model_answer", root)
    said = bot.wait_said("C0IVIEW", root, 3)
    assert f"Hint 1/{len(question.hints)}" in message_text(said[1]) and question.hints[0] in message_text(said[1])
    assert "Model answer" in message_text(said[2]) and "Overall coverage 50/100" in message_text(said[2])
    assert f"hints used 1/{len(question.hints)}" in message_text(said[2])
    bot.slack.wait_for(lambda: bool(root.edits), timeout=POSTS)
    assert not actions(root)
    assert len(bot.audited("message.interview_answer")) == 1
    bot.reply("C0IVIEW", root, "One more thought.")  # after the model answer: nothing more to grade
    time.sleep(0.5)
    assert len(bot.said("C0IVIEW", root)) == 3 and len(bot.audited("message.interview_answer")) == 1


def test_exact_follow_ups_are_answered_in_the_thread(bot: Bot) -> None:
    question = load_bank().get("ddp-init-hang")
    assert question is not None
    first, second = exact.for_question(question)
    root = bot.start("interview ddp-init-hang", "C0IVIEW")
    bot.reply("C0IVIEW", root, question.model_answer)
    said = bot.wait_said("C0IVIEW", root, 1)
    assert "Exact follow-up 1/2 (from the playbook)" in message_text(said[0])
    bot.reply("C0IVIEW", root, first.letters(first.answer))
    said = bot.wait_said("C0IVIEW", root, 2)
    assert "100/100" in message_text(said[1]) and "Exact follow-up 2/2" in message_text(said[1])
    bot.reply("C0IVIEW", root, second.letters(second.answer))
    said = bot.wait_said("C0IVIEW", root, 3)
    assert "100/100" in message_text(said[2]) and "Follow-up 1/1" in message_text(said[2])  # then the bank's own
    bot.click("interview_model_answer", root)
    said = bot.wait_said("C0IVIEW", root, 4)
    assert "Exact follow-ups 100/100, 100/100; score" in message_text(said[3])


def test_a_reply_that_beats_the_record_of_its_root_still_counts(tmp_path: Path) -> None:
    """Slack shows the root before the poster records its ts; a reply in that window waits for the record."""
    ctx = build_context(Settings(database_url=f"sqlite:///{tmp_path / 'race.sqlite'}"), start_poster=False)
    try:
        drills = SlackDrills(ctx)
        assert drills.start_interview(DrillCommand("interview", (QUESTION,)), Who("U0ALICE", "C0RACE")) is None
        (root,) = outbox.claim(ctx.factory, "poster-1", datetime.now(UTC))  # in flight: "sending", no ts yet

        def recorded() -> None:
            time.sleep(0.3)
            with ctx.factory.begin() as db:
                assert outbox.mark_sent(db, root.id, "poster-1", {"ts": "100.000100", "channel": "C0RACE"})

        threading.Thread(target=recorded).start()
        answer = ThreadReply(channel="C0RACE", thread_ts="100.000100", ts="100.000200", user="U0ALICE",
                             text="MIG is a hardware partition.")
        assert drills.answer(answer) is None
        with ctx.factory() as db:
            graded = db.scalars(select(OutboxItem).where(OutboxItem.idempotency_key.endswith(":answer:0"))).all()
        assert len(graded) == 1 and "Coverage" in json.dumps(graded[0].payload)
        # A reply in some other thread, with no root in flight, is turned away at once.
        started = time.monotonic()
        assert drills.answer(ThreadReply(channel="C0RACE", thread_ts="99.0", ts="99.1", user="U0ALICE",
                                         text="unrelated")) is None
        assert time.monotonic() - started < 1.0
    finally:
        ctx.close()


# ------------------------------------------------------------------------------------------------------------
# From production to drill: Save as drill, then /drill start
# ------------------------------------------------------------------------------------------------------------


def _store_run(bot: Bot) -> int:
    """A stored triage of oom-trainer-limit's evidence, confirmed correct in Slack; returns the run id."""
    recorded = load_incident(INCIDENT_DIR / "oom-trainer-limit")
    target = recorded.meta.target
    report = analyse(recorded.artifacts, target, missing=recorded.meta.missing)
    with bot.ctx.factory.begin() as db:
        incident, _ = repo.open_incident(db, "slash:saved-drill", title="training-job in ml", source="slash",
                                         namespace=target.namespace, target=target, channel="C0SAVED")
        run = repo.record_triage_run(db, incident_id=incident.id, target=target, trigger="slash", status="ok",
                                     started_at=recorded.meta.captured_at, report=report,
                                     artifacts=recorded.artifacts, missing=report.missing)
        repo.add_feedback(db, incident_id=incident.id, user_id="U0ALICE", verdict="correct", triage_run_id=run.id)
        return run.id


def test_a_run_saved_as_drill_is_drilled_with_drill_start(bot: Bot) -> None:
    run_id = _store_run(bot)
    # Save as drill, clicked on the report (a message in the channel whose thread gets the note).
    report = bot.slack.post_user_message("C0SAVED", "the triage report")
    url = bot.slack.response_url(channel="C0SAVED", message_ts=report.ts)
    body = block_action_body("triage_save_drill", str(run_id), channel_id="C0SAVED", message_ts=report.ts,
                             response_url=url)
    assert bot.send(body).status_code == 200
    assert bot.wait_audits("button.save_drill", 1)[-1].outcome == "ok"
    drill_id = f"slack-run-{run_id}"
    bot.slack.wait_for(lambda: any(f"/drill start {drill_id}" in m.text
                                   for m in bot.slack.thread("C0SAVED", report.ts)), timeout=POSTS)

    counts = {a: len(bot.audited(a)) for a in ("button.drill_evidence", "button.drill_hint")}
    root = bot.start(f"start {drill_id}", "C0SAVED")
    assert bot.audited("slash.drill")[-1].detail["incident"] == drill_id
    shown = message_text(root)
    assert "Slack: training-job in ml" in shown and drill_id not in shown  # the page, not the id
    bot.click("drill_evidence:pod-status", root)
    bot.click("drill_evidence:metrics", root)
    bot.click("drill_hint", root)
    bot.wait_audits("button.drill_evidence", counts["button.drill_evidence"] + 2)
    bot.wait_audits("button.drill_hint", counts["button.drill_hint"] + 1)
    # The saved run's lead is the refinement its evidence confirms as firmly as its parent (ranking rule 7).
    bot.choose("drill_declare", root, "oom-killed/host-memory-underestimated")
    texts = [message_text(m) for m in bot.wait_said("C0SAVED", root, 4)]
    assert any("OOMKilled" in t or "pod status" in t for t in texts)
    assert any("Hint 1/3" in t and "Direction:" in t for t in texts)
    debrief = next(t for t in texts if "Debrief:" in t)
    assert "Debrief: 95/100" in debrief and "Right" in debrief and drill_id in debrief
    stored = SqlSessionStore(bot.ctx.engine).load(_session_id(root))
    assert stored is not None and stored.incident_id == drill_id and stored.score is not None
    assert stored.score.total == 95

    _, board = bot.slash("leaderboard", "C0SAVED")
    assert "<@U0ALICE>: *95* points" in bot.ephemeral(board)
    # A random pick sees it as well: it is the only incident tagged "slack".
    bot.start("start random slack", "C0SAVED", user="U0BOB")
    assert bot.audited("slash.drill")[-1].detail["incident"] == drill_id


# ------------------------------------------------------------------------------------------------------------
# From production to drill: triagebot drill save
# ------------------------------------------------------------------------------------------------------------

PLANTED = ("hunter2-db-password", "abcdefghijklmnop0123456789")


def _stored_incident(database: Path, verdict: str) -> tuple[int, str, str]:
    """An incident with one stored run whose artifacts carry secrets (as a row stored before redaction might)."""
    describe = (FIXTURES / "describe_pod" / "oomkilled.txt").read_text()
    describe += f"    Environment:\n      DB_PASSWORD:  {PLANTED[0]}\n"
    dmesg = f"[ 1.0] curl -H 'Authorization: Bearer {PLANTED[1]}' http://10.0.0.1/\n"
    artifacts = [Artifact(id="describe-pod.txt", kind=ArtifactKind.DESCRIBE_POD, subject="checkout",
                          content=describe, captured_at=datetime.now(UTC)),
                 Artifact(id="dmesg.txt", kind=ArtifactKind.KERNEL_LOG, subject="node-a", content=dmesg,
                          captured_at=datetime.now(UTC))]
    target = Target(namespace="shop", service="checkout")
    report = analyse(artifacts, target)
    lead = report.leading()
    assert lead is not None
    engine = make_engine(f"sqlite:///{database}")
    migrate(engine)
    with session_factory(engine).begin() as db:
        incident, _ = repo.open_incident(db, f"slash:{verdict}", title="checkout in shop", source="slash",
                                         namespace="shop", target=target, channel="C0OPS")
        run = repo.record_triage_run(db, incident_id=incident.id, target=target, trigger="slash", status="ok",
                                     started_at=datetime.now(UTC), report=report, artifacts=artifacts)
        right = ("oom-killed", "limit-too-low") if verdict == "wrong" else (None, None)
        repo.add_feedback(db, incident_id=incident.id, user_id="U0ALICE", verdict=verdict, triage_run_id=run.id,
                          right_playbook=right[0], right_hypothesis=right[1], note="Heap grew past the limit.")
        found = (incident.id, incident.key, f"{lead[0].playbook}/{lead[1].id}")
    engine.dispose()
    return found


def test_drill_save_writes_a_redacted_drill_with_the_feedback_as_ground_truth(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id, key, _ = _stored_incident(database, "wrong")
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    folder = tmp_path / "saved-checkout"
    assert main(["drill", "save", str(incident_id), "-o", str(folder)]) == 0
    assert str(folder) in capsys.readouterr().out
    saved = load_incident(folder)
    assert saved.meta.ground_truth is not None
    assert (saved.meta.ground_truth.playbook, saved.meta.ground_truth.hypothesis) == ("oom-killed", "limit-too-low")
    assert saved.meta.ground_truth.explanation == "Heap grew past the limit."
    assert saved.meta.target.service == "checkout" and {a.id for a in saved.artifacts} == {"describe-pod.txt",
                                                                                           "dmesg.txt"}
    written = "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    assert "OOMKilled" in written and "<redacted>" in written
    for secret in PLANTED:
        assert secret not in written

    # By key, with the ground truth given on the command line.
    other = tmp_path / "by-key"
    assert main(["drill", "save", key, "-o", str(other), "--ground-truth", "oom-killed/node-oom"]) == 0
    truth = load_incident(other).meta.ground_truth
    assert truth is not None and (truth.playbook, truth.hypothesis) == ("oom-killed", "node-oom")
    engine = make_engine(f"sqlite:///{database}")
    with session_factory(engine)() as db:
        audits = list(db.scalars(select(AuditEntry).where(AuditEntry.action == "cli.drill_save")))
    engine.dispose()
    assert [a.target for a in audits] == [key, key] and audits[0].actor.startswith("cli:")


def test_drill_save_confirmed_feedback_uses_the_leading_hypothesis(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id, _, leader = _stored_incident(database, "correct")
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    assert main(["drill", "save", str(incident_id), "-o", str(tmp_path / "drill")]) == 0
    truth = load_incident(tmp_path / "drill").meta.ground_truth
    assert truth is not None and f"{truth.playbook}/{truth.hypothesis}" == leader


@pytest.mark.parametrize(("argv", "expected"), [
    (["drill", "save", "999"], "no stored incident '999'"),
    (["drill", "save", "1", "--ground-truth", "oom-killed/limit-too-lo"], "did you mean oom-killed/limit-too-low"),
    (["drill", "save"], "usage: triagebot drill save INCIDENT"),
    (["drill", "oom-trainer-limit", "-o", "x"], "go with `triagebot drill save`"),
])
def test_drill_save_mistakes_are_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], argv: list[str],
                                                      expected: str) -> None:
    database = tmp_path / "bot.sqlite"
    _stored_incident(database, "wrong")
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1


def test_drill_save_without_a_database_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'absent.sqlite'}")
    assert main(["drill", "save", "1"]) == 2
    assert "no bot database at" in capsys.readouterr().err
    assert not (tmp_path / "absent.sqlite").exists()


# ------------------------------------------------------------------------------------------------------------
# Parsing (no server)
# ------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "expected"), [
    ("", DrillCommand("help")),
    ("start", DrillCommand("start")),
    ("start random easy oom --seed 3", DrillCommand("start", ("random", "easy", "oom"), 3)),
    ("START oom-trainer-limit seed=9", DrillCommand("start", ("oom-trainer-limit",), 9)),
    ("interview networking --seed=2", DrillCommand("interview", ("networking",), 2)),
    ("history", DrillCommand("history")),
])
def test_parse_drill_commands(text: str, expected: DrillCommand) -> None:
    assert parse_command(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("play", "unknown `/drill play`"),
    ("leaderboard now", "takes nothing after it"),
    ("start --seed x", "--seed needs a whole number"),
])
def test_parse_drill_command_mistakes(text: str, expected: str) -> None:
    with pytest.raises(DrillCommandError, match=expected):
        parse_command(text)


def test_only_peoples_thread_replies_are_answers() -> None:
    base = message_event("my answer", channel="C0IVIEW", ts="2.0", thread_ts="1.0")
    assert thread_reply(base) is not None
    assert thread_reply(message_event("top level", channel="C0IVIEW", ts="2.0")) is None
    assert thread_reply({**base, "bot_id": "B0BOT"}) is None
    assert thread_reply({**base, "subtype": "message_changed"}) is None
    unescaped = thread_reply({**base, "text": "a &lt; b &amp;&amp; c"})
    assert unescaped is not None and unescaped.text == "a < b && c"
