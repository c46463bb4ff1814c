"""`/drill` in Slack: recorded-incident drills and mock-interview questions, each in a thread of its own.

The drill and the interview themselves are the UI-neutral cores (drills.session, drills.interview); this module
reads Slack's requests, keeps the sessions, and says what happened in the thread. It mirrors the terminal
front-ends (bot/cli/drill.py, bot/cli/interview.py): same steps, same words for the same things.

How a drill looks: `/drill start` posts the page as a thread root with one button per evidence source, plus
Hint, Propose, Declare and Give up. Every click answers in the thread. Button values carry the session id, so a
click finds its drill without a lookup table; the thread root is the outbox item `drill:<id>:root`.

Persistence: drill sessions live in `drill_sessions` (bot/store/drill_sessions.py) on the bot's own engine, so a
restarted (or another) replica continues any drill. Interviews have their own table, `interview_sessions`
(bot/store/interviews.py). An interview's thread is found from its root's outbox result (the ts Slack gave it) the
first time the interviewee replies there, then remembered in the session's payload.

Ordering, since a session save and the outbox are two transactions: a step first queues its posts under keys
derived from the session *before* the step (`drill:<id>:<step number>:<action>`), then saves the new session.
If the process dies in between, the same click computes the same keys again and the outbox posts nothing twice.
Steps on one session run one at a time in this process (a striped lock); across replicas a trainee clicking two
buttons within milliseconds on two replicas could lose one step, which only costs that click.
"""

from __future__ import annotations

import functools
import io
import json
import logging
import random
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from rich.console import Console
from slack_bolt import Ack, App, Respond
from slack_sdk import WebClient
from slack_sdk.models.blocks import (
    ActionsBlock,
    Block,
    ButtonElement,
    ContextBlock,
    HeaderBlock,
    InputBlock,
    MarkdownTextObject,
    Option,
    OptionGroup,
    SectionBlock,
    StaticSelectElement,
)
from slack_sdk.models.views import View as ModalView
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot import drill_catalog
from bot.assist.grade import model_grader
from bot.assist.narrate import narrate_debrief
from bot.context import BotContext
from bot.posts import evidence_text
from bot.render.debrief import render_debrief
from bot.render.slack import STATUS_EMOJI, mrkdwn_escape
from bot.render.slack_assist import narrative_payload
from bot.slack import flows
from bot.store import outbox, repo
from bot.store.drill_sessions import SqlSessionStore
from bot.store.interviews import InterviewRecord, InterviewStore
from bot.store.models import OutboxItem
from collectors.redact import redact_text
from drills import catalog, interview
from drills import hints as hint_texts
from drills import session as drill
from drills.debrief import Debrief, PathStep
from drills.errors import DrillError
from drills.evidence import evidence_for
from drills.grading import Grade
from drills.hypotheses import HypothesisRef
from drills.incident import Incident, IncidentError, load_incident
from drills.interview import InterviewSession, Step
from drills.interview_pick import HINT, QUIT, SKIP, PickError, choose
from drills.key import answer_key
from drills.key import ground_truth as recorded_truth
from drills.picker import DIFFICULTIES, parse_start, pick
from drills.questions import Question, QuestionBank, QuestionBankError, load_bank
from drills.session import DrillSession
from drills.sources import BY_ID, SOURCES

log = logging.getLogger("triagebot.slack.drills")

COMMAND = "/drill"
USAGE = "/drill start [incident-id|random] [easy|medium|hard] [tag] | interview [topic] | leaderboard | history | help"
EVIDENCE_PREFIX = "drill_evidence:"  # + source id: one action id per source button
EVIDENCE_ACTIONS = re.compile(r"^drill_evidence:[a-z-]+$")
HINT_ACTION, PROPOSE_ACTION, DECLARE_ACTION, GIVE_UP_ACTION = "drill_hint", "drill_propose", "drill_declare", \
    "drill_give_up"
HYPOTHESIS_CALLBACK = "drill_hypothesis_submit"
HYPOTHESIS_BLOCK, HYPOTHESIS_SELECT = "hypothesis", "hypothesis"
INTERVIEW_BUTTONS = re.compile(r"^interview_(hint|skip|model_answer)$")
ANY_TEXT = re.compile(r"\S")  # thread replies with something in them; bolt's app.message matches on text
MAX_FOLLOW_UPS = 1
HISTORY_LIMIT = 15
ROOT_IN_FLIGHT_WAIT = 3.0  # seconds a reply waits for its thread's root to be recorded
# Slack: 3000 characters per section text, 75 per option text, 100 options per group. Sections stay under the
# limit with room for the "cut" note; a message's blocks stay far below Slack's ~13k characters of JSON.
_SECTION, _OPTION_TEXT, _GROUP_OPTIONS = 2900, 75, 100
_ARTIFACT_LINES = 20
_STRIPES = 64

HELP = f"""\
*/drill*: train on recorded incidents and mock-interview questions, each in a thread of its own.
• `/drill start [incident-id|random] [easy|medium|hard] [tag]`: a bundled incident, or one saved from a report \
with *Save as drill*. You are paged, and see only the page. Ask for \
evidence one source at a time with the buttons (each costs time on the drill clock), propose hypotheses (the \
answer says what *your* evidence shows), then declare the root cause: score and debrief follow in the thread. \
Hints cost 5 points a level; Give up shows the answer. `--seed N` repeats a random pick.
• `/drill interview [topic] [easy|medium|hard]`: a question in a thread. Reply in the thread to answer; the \
answer is graded against the points a good one makes, then a follow-up. Buttons (or the replies \
`hint`, `skip`, `quit`): Hint, Skip, Model answer.
• `/drill leaderboard`: this channel's ranking (best score per incident, summed).
• `/drill history`: your drills, with links to their threads; an open one continues where you left it.
Usage: `{USAGE}`"""


# --------------------------------------------------------------------------------------------------------------
# Parsing /drill
# --------------------------------------------------------------------------------------------------------------


class DrillCommandError(ValueError):
    """A /drill the bot cannot act on; the message says what was expected."""


Action = Literal["help", "start", "interview", "leaderboard", "history"]
_ACTIONS: dict[str, Action] = {a: a for a in ("help", "start", "interview", "leaderboard", "history")}


@dataclass(frozen=True)
class DrillCommand:
    action: Action
    words: tuple[str, ...] = ()
    seed: int | None = None


def parse_command(text: str) -> DrillCommand:
    """What a /drill text asks for. Pure, so it runs before the ack."""
    words = text.split()
    if not words or words[0].lower() in ("help", "-h", "--help", "?"):
        return DrillCommand("help")
    action = _ACTIONS.get(words[0].lower())
    if action is None:
        raise DrillCommandError(f"unknown `/drill {words[0]}`. Usage: `{USAGE}`")
    rest, seed = _split_seed(words[1:])
    if action in ("leaderboard", "history") and rest:
        raise DrillCommandError(f"`/drill {action}` takes nothing after it. Usage: `{USAGE}`")
    return DrillCommand(action, tuple(rest), seed)


def _split_seed(words: list[str]) -> tuple[list[str], int | None]:
    """`--seed N`, `--seed=N` or `seed=N`, as the terminal's --seed: a repeatable random pick."""
    rest: list[str] = []
    seed: str | None = None
    it = iter(words)
    for word in it:
        lowered = word.lower()
        if lowered == "--seed":
            seed = next(it, "")
        elif lowered.startswith(("--seed=", "seed=")):
            seed = word.partition("=")[2]
        else:
            rest.append(word)
    if seed is None:
        return rest, None
    if not re.fullmatch(r"-?\d{1,18}", seed):
        raise DrillCommandError(f"--seed needs a whole number, not {seed!r}")
    return rest, int(seed)


# --------------------------------------------------------------------------------------------------------------
# Stores
# --------------------------------------------------------------------------------------------------------------


class _Locks:
    """Striped locks: steps on one session apply one after another in this process; memory stays bounded."""

    def __init__(self, stripes: int = _STRIPES) -> None:
        self._locks = [threading.Lock() for _ in range(stripes)]

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._locks[hash(key) % len(self._locks)]:
            yield


def _incident(incident_id: str, saved_dir: Path) -> Incident:
    """A bundled or saved incident by id: found without listing the catalog, read once per process."""
    folder = catalog.locate(incident_id, saved_dir)
    try:
        stamp = (folder / "incident.yaml").stat().st_mtime_ns
    except OSError as err:
        raise IncidentError(f"{folder}: cannot read ({err.strerror or err})") from None
    return _read_incident(str(folder), stamp)


@functools.lru_cache(maxsize=32)
def _read_incident(folder: str, stamp: int) -> Incident:
    """Keyed on incident.yaml's mtime too: a saved drill deleted and saved again under its id is read afresh."""
    del stamp
    incident = load_incident(Path(folder))
    evidence_for(incident)  # parse and index now, so no step pays for it
    return incident


# --------------------------------------------------------------------------------------------------------------
# What a step posts
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Upload:
    filename: str
    title: str
    content: str


@dataclass(frozen=True)
class Reply:
    text: str  # the notification fallback
    blocks: list[Block]
    upload: Upload | None = None


@dataclass(frozen=True)
class Outcome:
    """What a step shows: thread replies, the audit detail, and whether the exercise ended."""

    replies: list[Reply]
    detail: dict[str, Any]
    finished: str | None = None  # a closing note for the root message, whose buttons then go
    note: str | None = None  # to the clicker alone


def _md(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text)


def _fit(text: str, limit: int = _SECTION) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 20].rstrip() + "\n_…cut_"


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=_md(_fit(text)))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[_md(_fit(text))])


def _clock(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest:02d}s"


def _quote(text: str) -> str:
    return "\n".join(f"> {mrkdwn_escape(line)}" for line in text.splitlines() or [""])


def _dicts(blocks: list[Block]) -> list[dict[str, Any]]:
    for block in blocks:
        block.validate_json()
    return [b.to_dict() for b in blocks]


def step_prefix(session: DrillSession, action: str) -> str:
    """The outbox key prefix of a step's posts: from the session before the step (see the module doc)."""
    return f"drill:{session.id}:{len(session.timeline)}:{action}"


def _queue(db: Session, root: OutboxItem, prefix: str, outcome: Outcome) -> None:
    """The step's replies (and files) in the root's thread, and the root without buttons when it ended."""
    for n, reply in enumerate(outcome.replies):
        outbox.enqueue(db, f"{prefix}:{n}", root.channel, "chat.postMessage",
                       {"kind": "drill", "text": reply.text, "blocks": _dicts(reply.blocks), "in_thread": True},
                       depends_on=root)
        if reply.upload is not None:
            outbox.enqueue(db, f"{prefix}:{n}:file", root.channel, "files.upload_v2",
                           {"kind": "drill-file", "in_thread": True, "filename": reply.upload.filename,
                            "title": reply.upload.title, "content": reply.upload.content}, depends_on=root)
    if outcome.finished is not None:
        kept = [b for b in root.payload.get("blocks") or [] if b.get("type") != "actions"]
        closed = [*kept, ContextBlock(elements=[_md(outcome.finished)]).to_dict()]
        outbox.enqueue(db, f"{root.idempotency_key}:closed", root.channel, "chat.update",
                       {"kind": "drill-root", "text": root.payload.get("text", ""), "blocks": closed},
                       depends_on=root)


# --------------------------------------------------------------------------------------------------------------
# Rendering: drills
# --------------------------------------------------------------------------------------------------------------


def _button(text: str, action_id: str, value: str, style: str | None = None) -> ButtonElement:
    return ButtonElement(text=text, action_id=action_id, value=value, style=style)


def page_blocks(view: drill.View, session: DrillSession) -> list[Block]:
    """The thread root: the page as on-call saw it, and the buttons. Nothing about the incident beyond the page."""
    page = view.page
    if page is None:
        raise ValueError("page_blocks needs the page view")
    target = "  ".join(f"{k}={mrkdwn_escape(v)}" for k, v in page.target.items())
    sid = session.id
    return [
        HeaderBlock(text=":rotating_light: You have been paged"),
        _section(_quote(page.text)),
        _context(f"Paged {page.time:%Y-%m-%d %H:%M} UTC · {target}"),
        _context(f"Drill `{sid}` for <@{session.trainee}>. Ask for evidence one source at a time (each costs time "
                 "on the drill clock), propose hypotheses, then declare the root cause. Each hint level costs 5 "
                 "points."),
        ActionsBlock(block_id="drill_evidence", elements=[
            _button(f"{s.label} · {s.cost_seconds} s", EVIDENCE_PREFIX + s.id, sid) for s in SOURCES]),
        ActionsBlock(block_id="drill_actions", elements=[
            _button("Hint", HINT_ACTION, sid), _button("Propose…", PROPOSE_ACTION, sid),
            _button("Declare…", DECLARE_ACTION, sid, "primary"), _button("Give up", GIVE_UP_ACTION, sid, "danger")]),
    ]


def evidence_reply(view: drill.View, raw: str) -> Reply:
    """A short summary of what the source holds; the raw text goes into a file, never into blocks."""
    lines = [f":mag_right: *{mrkdwn_escape(view.title)}* (+{view.cost_seconds} s, drill clock "
             f"{_clock(view.clock_seconds)})"]
    for artifact in view.artifacts[:_ARTIFACT_LINES]:
        about = ", ".join(x for x in (artifact.kind, artifact.subject) if x)
        if artifact.unavailable is not None:
            lines.append(f"• `{mrkdwn_escape(artifact.id)}` ({mrkdwn_escape(about)}): unavailable: "
                         f"{mrkdwn_escape(artifact.unavailable)}")
        else:
            count = len(artifact.content.splitlines())
            lines.append(f"• `{mrkdwn_escape(artifact.id)}` ({mrkdwn_escape(about)}): {count:,} lines"
                         + (f", `$ {mrkdwn_escape(artifact.command[:120])}`" if artifact.command else ""))
    if len(view.artifacts) > _ARTIFACT_LINES:
        lines.append(f"… and {len(view.artifacts) - _ARTIFACT_LINES} more, all in the file")
    lines += [mrkdwn_escape(t) for t in view.text]
    source = view.source or "evidence"
    readable = any(a.unavailable is None for a in view.artifacts)
    blocks: list[Block] = [_section("\n".join(lines))]
    if readable:
        blocks.append(_context(f"The raw text is in `{source}.txt` below."))
    upload = Upload(f"{source}.txt", f"{view.title}: recorded evidence", raw) if readable else None
    return Reply(text=f"{view.title} revealed", blocks=blocks, upload=upload)


def proposal_reply(view: drill.View) -> Reply:
    answer = view.answer
    verdict = answer.verdict if answer else "answer"
    icon = {"supported": ":large_green_circle:", "ruled-out": ":red_circle:"}.get(verdict, ":large_yellow_circle:")
    text = " ".join(view.text)
    return Reply(text=f"{view.title}: {verdict}", blocks=[
        _section(f"{icon} *You proposed* `{mrkdwn_escape(view.title)}`\n{mrkdwn_escape(text)}"),
        _context(f"+{view.cost_seconds} s, drill clock {_clock(view.clock_seconds)}")])


def hint_reply(view: drill.View) -> Reply:
    return Reply(text=view.title, blocks=[
        _section(f":bulb: *{mrkdwn_escape(view.title)}* (5 points)\n{mrkdwn_escape(' '.join(view.text))}")])


_OUTCOME = {"right": ":white_check_mark: Right", "right branch": ":large_yellow_circle: Right branch",
            "wrong": ":x: Wrong"}


def debrief_blocks(d: Debrief) -> list[Block]:
    """The debrief's decisions in blocks; the per-artifact meanings and references go into debrief.txt."""
    score = "\n".join(f"• {p.name}: *{p.points}*/{p.max}: {mrkdwn_escape(p.why)}" for p in d.score.parts)
    tree = "\n".join(
        "\u2003" * node.depth + f"{STATUS_EMOJI.get(node.status, ':white_small_square:')} `{node.id}` {node.status}"
        + "".join(f" _({flag})_" for on, flag in ((node.truth, "root cause"), (node.declared, "you declared"),
                                                  (node.proposed, "proposed")) if on)
        for node in d.tree)

    def path(steps: list[PathStep]) -> str:
        return " → ".join(s.label + (" †" if s.discriminating else "") for s in steps) or "nothing"

    return [
        HeaderBlock(text=f"Debrief: {d.score.total}/100"[:150]),
        # No italics around the notes: fact names hold underscores, which would end them early.
        _section(f"*{_OUTCOME[d.outcome]}*: you declared `{d.declared}`; the root cause is `{d.truth}`.\n"
                 f"{mrkdwn_escape(d.declared_note)}"),
        _section(f"*{mrkdwn_escape(d.truth_claim)}*\n{mrkdwn_escape(d.explanation)}"),
        _section(f"*Score {d.score.total}/100*\n{score}"),
        _section(f"*{d.playbook} playbook* (statuses from the whole recording)\n{tree}"),
        _section(f"*Ideal path* (par {_clock(d.par_seconds)}): {path(d.ideal_path)}\n"
                 f"*Your path* ({_clock(d.clock_seconds)}): {path(d.your_path)}\n"
                 "† discriminating: on some smallest set of sources that separates the root cause."),
        _context(f"What each piece of evidence meant and the references are in `debrief.txt`. "
                 f"Incident `{d.incident_id}` ({d.difficulty}): {mrkdwn_escape(d.title)}."),
    ]


def debrief_text(d: Debrief) -> str:
    """The whole debrief as the terminal prints it, as plain text for a file."""
    buffer = io.StringIO()
    render_debrief(d, Console(file=buffer, width=120, color_system=None, force_terminal=False))
    return buffer.getvalue()


def hypothesis_modal(action: Literal["propose", "declare"], session_id: str,
                     refs: dict[str, HypothesisRef]) -> dict[str, Any]:
    """A select of every hypothesis of every playbook: listing only this incident's tree would give it away."""
    by_book: dict[str, list[Option]] = {}
    for ref in refs.values():
        label = ("\u2003" * ref.depth + ref.id)[:_OPTION_TEXT]
        by_book.setdefault(ref.playbook, []).append(Option(value=ref.key, text=label))
    groups = [OptionGroup(label=f"Playbook {book}"[:_OPTION_TEXT], options=options[:_GROUP_OPTIONS])
              for book, options in by_book.items()]
    propose = action == "propose"
    explain = ("What does the evidence you have revealed say about a hypothesis? Costs 30 s on the drill clock; "
               "the answer speaks only about the one you choose." if propose else
               "Your root cause. Declaring ends the drill: the score and the debrief follow in the thread.")
    view = ModalView(
        type="modal", callback_id=HYPOTHESIS_CALLBACK, title="Propose a hypothesis" if propose else "Declare the cause",
        submit="Propose" if propose else "Declare", close="Cancel",
        private_metadata=json.dumps({"session": session_id, "action": action}),
        blocks=[_section(explain),
                InputBlock(block_id=HYPOTHESIS_BLOCK, label="Hypothesis (playbook / hypothesis)",
                           element=StaticSelectElement(action_id=HYPOTHESIS_SELECT, placeholder="Choose a hypothesis",
                                                       option_groups=groups))])
    view.validate_json()
    return view.to_dict()


@dataclass(frozen=True)
class HypothesisChoice:
    session_id: str
    action: Literal["propose", "declare"]
    hypothesis: str  # playbook/hypothesis


def read_hypothesis_submission(view: dict[str, Any]) -> HypothesisChoice | dict[str, str]:
    """The choice in a submitted Propose/Declare modal, or errors per block for Slack to show."""
    values = (view.get("state") or {}).get("values") or {}
    chosen = ((values.get(HYPOTHESIS_BLOCK) or {}).get(HYPOTHESIS_SELECT) or {}).get("selected_option") or {}
    hypothesis = str(chosen.get("value") or "")
    if not hypothesis:
        return {HYPOTHESIS_BLOCK: "Choose a hypothesis."}
    try:
        meta = json.loads(view.get("private_metadata") or "{}")
        session_id, action = str(meta["session"]), meta["action"]
    except (ValueError, KeyError, TypeError):
        return {HYPOTHESIS_BLOCK: "This form lost track of its drill; close it and click the button again."}
    if action not in ("propose", "declare"):
        return {HYPOTHESIS_BLOCK: "This form lost track of its drill; close it and click the button again."}
    return HypothesisChoice(session_id=session_id, action=action, hypothesis=hypothesis)


# --------------------------------------------------------------------------------------------------------------
# Rendering: interviews
# --------------------------------------------------------------------------------------------------------------


def question_blocks(question: Question, record: InterviewRecord) -> list[Block]:
    sid = record.id
    return [
        HeaderBlock(text=":studio_microphone: Interview question"),
        _section(mrkdwn_escape(question.question)),
        _context(f"{question.topic} · {question.difficulty} · {question.kind} · `{question.id}` · for "
                 f"<@{record.user}>"),
        _context("Answer by replying in this thread, in one message; replies `hint`, `skip` and `quit` work like "
                 "the buttons. A point counts when your answer claims it and says why or how; naming a term, "
                 "or dismissing it, earns nothing, and a wrong claim costs points."),
        ActionsBlock(block_id="interview_actions", elements=[
            _button("Hint", "interview_hint", sid), _button("Skip", "interview_skip", sid),
            _button("Model answer", "interview_model_answer", sid)]),
    ]


def _points(g: Grade) -> str:
    lines = [(f":white_check_mark: {mrkdwn_escape(p.point)}" + (f" _(you said: {mrkdwn_escape(p.shown)})_"
                                                                if p.shown else ""))
             if p.covered else f":x: {mrkdwn_escape(p.point)}" + (" _(named, then dismissed)_" if p.dismissed else "")
             for p in g.points]
    lines += [f":warning: Wrong claim: {mrkdwn_escape(w.claim)} _(you said: “{mrkdwn_escape(w.evidence)}”)_"
              for w in g.wrong_claims]
    return "\n".join(lines)


def _step_text(step: Step, question: Question, session: InterviewSession) -> str:
    """One step in mrkdwn, worded as the terminal words it (bot/cli/interview.py)."""
    if step.kind == "feedback" and step.grade is not None:
        so_far = " so far" if session.turns and session.turns[-1].kind == "follow-up" else ""
        added = [p.point for p in question.expected_points if p.id in step.newly_covered]
        extra = "".join(f"\n+ {mrkdwn_escape(a)}" for a in added)
        head = f"*Coverage{so_far} {step.grade.score}/100: {step.grade.verdict}*"
        return head + (f"\nYour follow-up answer added:{extra}" if added else "") + "\n" + _points(step.grade)
    if step.kind == "follow-up":
        n, of = step.position or (1, 1)
        return f"*Follow-up {n}/{of}:* {mrkdwn_escape(step.text)}\n_Reply in this thread to answer it, or Skip._"
    if step.kind == "hint":
        n, of = step.position or (1, 1)
        return f":bulb: *Hint {n}/{of}:* {mrkdwn_escape(step.text)}"
    if step.kind == "model-answer":
        return _model_answer(step, question, session)
    return mrkdwn_escape(step.text)


def _model_answer(step: Step, question: Question, session: InterviewSession) -> str:
    parts = [f"*Model answer*\n{mrkdwn_escape(step.text)}"]
    g = step.grade
    if g is None:
        parts.append("_Not answered._")
    else:
        parts.append(f"*Overall coverage {g.score}/100 ({g.verdict})*; hints used "
                     f"{session.hints_used}/{len(question.hints)}")
        if g.missed:
            parts.append("Still missing:\n" + "\n".join(f"• {mrkdwn_escape(p.point)}" for p in g.missed))
    parts.append("_Source: " + mrkdwn_escape("; ".join(question.source)) + "_")
    if question.related_playbook:
        parts.append(f"_Related playbook: `triagebot playbooks show {question.related_playbook}`_")
    return "\n".join(parts)


def interview_reply(steps: list[Step], question: Question, session: InterviewSession) -> Reply:
    blocks: list[Block] = [_section(_step_text(s, question, session)) for s in steps]
    return Reply(text=steps[0].text[:200] if steps else "…", blocks=blocks)


# --------------------------------------------------------------------------------------------------------------
# The flows
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Who:
    user: str
    channel: str


@dataclass(frozen=True)
class ThreadReply:
    """A person's message in a thread, which may be an answer to an interview question."""

    channel: str
    thread_ts: str
    ts: str
    user: str
    text: str


def thread_reply(event: dict[str, Any]) -> ThreadReply | None:
    """The message event as a thread reply by a person, or None (top-level, edits, bots, no text)."""
    thread_ts, ts = event.get("thread_ts"), event.get("ts")
    if not thread_ts or not ts or thread_ts == ts or event.get("bot_id"):
        return None
    if event.get("subtype") not in (None, "thread_broadcast"):
        return None
    user, channel, text = event.get("user"), event.get("channel"), event.get("text")
    if not (user and channel and isinstance(text, str) and text.strip()):
        return None
    # Redacted at the door: an answer is stored with the interview and may be shown to a model.
    return ThreadReply(channel=str(channel), thread_ts=str(thread_ts), ts=str(ts), user=str(user),
                       text=redact_text(flows.slack_unescape(text)))


DrillStep = Callable[[DrillSession, Incident], tuple[DrillSession, Outcome]]
InterviewStepFn = Callable[[InterviewSession, Question], tuple[InterviewSession, list[Step]]]


class SlackDrills:
    """The drill and interview flows of one bot context: its stores, and the question bank."""

    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self.store = SqlSessionStore(ctx.engine)
        self.interviews = InterviewStore(ctx.engine)
        self.saved_dir = drill_catalog.drills_dir(ctx.settings)  # saved drills, beside the bundled ones
        self._locks = _Locks()
        self.bank: QuestionBank | None = None
        try:
            self.bank = load_bank()
        except QuestionBankError:
            log.exception("the interview question bank does not load; /drill interview is off")

    # -- plumbing ------------------------------------------------------------------------------------------

    def audit(self, who: Who, action: str, target: str | None, detail: dict[str, Any] | None = None,
              outcome: str = "ok") -> None:
        flows.audit(self.ctx, user=who.user, channel=who.channel, action=action, target=target, detail=detail,
                    outcome=outcome)

    def _wake(self) -> None:
        if self.ctx.poster is not None:
            self.ctx.poster.wake()

    def _post_root(self, key: str, channel: str, text: str, blocks: list[Block], who: Who, action: str,
                   target: str, detail: dict[str, Any]) -> None:
        with self.ctx.factory.begin() as db:
            outbox.enqueue(db, key, channel, "chat.postMessage",
                           {"kind": "drill-root", "text": text, "blocks": _dicts(blocks)})
            repo.audit(db, actor=who.user, channel=who.channel, action=action, target=target, detail=detail)
        self._wake()

    def _apply(self, root_key: str, prefix: str, outcome: Outcome, who: Who, action: str, target: str,
               save: Callable[[], None] | None) -> None:
        """Queue the posts and the audit line in one transaction, then save the session (see the module doc)."""
        with self.ctx.factory.begin() as db:
            root = outbox.find(db, root_key)
            if root is None:
                raise DrillError("this exercise's thread was never posted; start another")
            _queue(db, root, prefix, outcome)
            repo.audit(db, actor=who.user, channel=who.channel, action=action, target=target, detail=outcome.detail)
        if save is not None:
            save()
        self._wake()

    # -- drills --------------------------------------------------------------------------------------------

    def start_drill(self, cmd: DrillCommand, who: Who) -> str | None:
        try:
            # Listed afresh on every start: a drill saved a moment ago (here or by `drill save`) is in it.
            metas = catalog.load_catalog(self.saved_dir).metas()
            choice, difficulty, tag = parse_start(cmd.words, metas)
            done = [s.incident_id for s in self.store.list_by_trainee(who.user) if s.finished]
            rng = random.Random(cmd.seed) if cmd.seed is not None else None
            meta = pick(metas, choice, difficulty, tag, rng=rng, avoid=done)
            incident = _incident(meta.id, self.saved_dir)
            session, view = drill.start(incident, who.user, who.channel)
        except (DrillError, IncidentError) as err:
            self.audit(who, "slash.drill", "start", {"words": list(cmd.words), "error": str(err)}, "invalid")
            return f":warning: {err}"
        # Saved before the root is queued: buttons that find no session would be worse than an unused session.
        self.store.save(session)
        first = view.page.text.strip().splitlines()[0] if view.page and view.page.text.strip() else ""
        self._post_root(f"drill:{session.id}:root", who.channel, f"You have been paged: {first}"[:300],
                        page_blocks(view, session), who, "slash.drill", "start",
                        {"session": session.id, "incident": meta.id, "choice": choice, "difficulty": difficulty,
                         "tag": tag, "seed": cmd.seed})
        return None

    def _drill(self, session_id: str, who: Who) -> DrillSession:
        session = self.store.load(session_id)
        if session is None:
            raise DrillError(f"drill {session_id} is not in the database; start one with `/drill start`")
        if session.trainee != who.user:
            raise DrillError(f"this is <@{session.trainee}>'s drill; start your own with `/drill start`")
        if session.finished:
            raise DrillError(f"drill {session_id} is finished; start another with `/drill start`")
        return session

    def _drill_step(self, session_id: str, who: Who, action: str, step: DrillStep) -> str | None:
        name = f"button.drill_{action}"
        with self._locks.hold(session_id):
            try:
                session = self._drill(session_id, who)
                new, outcome = step(session, _incident(session.incident_id, self.saved_dir))
                prefix = step_prefix(session, action)
                self._apply(f"drill:{session_id}:root", prefix, outcome, who, name, f"drill:{session_id}",
                            (lambda: self.store.save(new)) if new is not session else None)
            except (DrillError, IncidentError) as err:
                self.audit(who, name, f"drill:{session_id}", {"error": str(err)}, "invalid")
                return f":warning: {err}"
        return outcome.note

    def evidence(self, session_id: str, source: str, who: Who) -> str | None:
        def step(session: DrillSession, incident: Incident) -> tuple[DrillSession, Outcome]:
            if source in session.revealed_sources:  # asking again is free, and there is nothing new to post
                return session, Outcome([], {"source": source, "again": True},
                                        note=f"You have already seen {BY_ID[source].label} in this thread; "
                                             "no time charged.")
            new, view = drill.request_evidence(session, incident, source)
            raw = evidence_text(evidence_for(incident).artifacts(source))
            return new, Outcome([evidence_reply(view, raw)], {"source": source, "clock": new.clock_seconds})

        return self._drill_step(session_id, who, "evidence", step)

    def hint(self, session_id: str, who: Who) -> str | None:
        def step(session: DrillSession, incident: Incident) -> tuple[DrillSession, Outcome]:
            new, view = drill.hint(session, incident)
            return new, Outcome([hint_reply(view)], {"level": view.hint_level})

        return self._drill_step(session_id, who, "hint", step)

    def hypothesis_form(self, session_id: str, action: Literal["propose", "declare"],
                        who: Who) -> tuple[dict[str, Any] | None, str | None]:
        """The Propose or Declare modal, or why there is none."""
        try:
            session = self._drill(session_id, who)
            refs = evidence_for(_incident(session.incident_id, self.saved_dir)).refs
        except (DrillError, IncidentError) as err:
            self.audit(who, f"button.drill_{action}", f"drill:{session_id}", {"error": str(err)}, "invalid")
            return None, f":warning: {err}"
        self.audit(who, f"button.drill_{action}", f"drill:{session_id}", {"opened": "modal"})
        return hypothesis_modal(action, session_id, refs), None

    def submit_hypothesis(self, choice: HypothesisChoice, who: Who) -> str | None:
        if choice.action == "propose":
            return self._drill_step(choice.session_id, who, "propose_submit", self._propose(choice.hypothesis))
        debriefs: list[tuple[Debrief, str]] = []
        note = self._drill_step(choice.session_id, who, "declare_submit", self._declare(choice.hypothesis, debriefs))
        for debrief, prefix in debriefs:
            self._narrate_debrief(debrief, prefix)
        return note

    def _narrate_debrief(self, d: Debrief, prefix: str) -> None:
        """With a model configured: its notes on the drill (or the rules' when it fails), after the debrief.

        Asked once the debrief is queued, outside any transaction and lock, so a slow model delays only itself.
        """
        assistant = self.ctx.assistant
        if not (assistant.enabled and assistant.summaries):
            return
        try:
            narrative = narrate_debrief(d, assistant)
            payload = narrative_payload(narrative, self.ctx.settings.templates_dir, "debrief_narrative")
            with self.ctx.factory.begin() as db:
                debrief = outbox.find(db, f"{prefix}:0")
                if debrief is None:  # the step was not applied
                    return
                outbox.enqueue(db, f"{prefix}:narrative", debrief.channel, "chat.postMessage",
                               {**payload, "kind": "drill", "in_thread": True, "generated": narrative.generated},
                               depends_on=debrief)
        except Exception:
            log.exception("the debrief narrative of %s failed", prefix)
            return
        self._wake()

    @staticmethod
    def _propose(hypothesis: str) -> DrillStep:
        def step(session: DrillSession, incident: Incident) -> tuple[DrillSession, Outcome]:
            new, view = drill.propose(session, incident, hypothesis)
            verdict = view.answer.verdict if view.answer else None
            return new, Outcome([proposal_reply(view)], {"hypothesis": view.title, "verdict": verdict})

        return step

    @staticmethod
    def _declare(hypothesis: str, debriefs: list[tuple[Debrief, str]] | None = None) -> DrillStep:
        """Declaring ends the drill with the debrief; `debriefs` receives it with its step's outbox prefix."""

        def step(session: DrillSession, incident: Incident) -> tuple[DrillSession, Outcome]:
            playbook, _, hyp = hypothesis.rpartition("/")
            new, d = drill.declare(session, incident, playbook, hyp)
            if debriefs is not None:
                debriefs.append((d, step_prefix(session, "declare_submit")))
            reply = Reply(text=f"Debrief: {d.outcome}, {d.score.total}/100", blocks=debrief_blocks(d),
                          upload=Upload("debrief.txt", f"Debrief of drill {session.id}", debrief_text(d)))
            return new, Outcome([reply], {"declared": d.declared, "outcome": d.outcome, "score": d.score.total},
                                finished=f":checkered_flag: Finished: declared `{d.declared}`, score "
                                         f"*{d.score.total}/100*. The debrief is in the thread.")

        return step

    def give_up(self, session_id: str, who: Who) -> str | None:
        def step(session: DrillSession, incident: Incident) -> tuple[DrillSession, Outcome]:
            evidence = evidence_for(incident)
            key = answer_key(evidence)
            answer = hint_texts.hint(hint_texts.MAX_LEVEL, key, evidence, session.revealed_sources)
            ideal = " → ".join(BY_ID[s].label for s in key.ideal_path)
            # Finished without a score: it is off the leaderboard, and the history says it was given up.
            new = session.model_copy(update={"finished": True, "updated_at": datetime.now(UTC)})
            reply = Reply(text="Gave up", blocks=[
                _section(f":white_flag: <@{who.user}> gave up. {mrkdwn_escape(answer)}"),
                _section(mrkdwn_escape(recorded_truth(incident).explanation)),
                _context(f"Ideal path: {ideal} (par {_clock(key.par_seconds)}). `/drill start` for another.")])
            return new, Outcome([reply], {"truth": key.truth_key}, finished=":white_flag: Given up.")

        return self._drill_step(session_id, who, "give_up", step)

    def leaderboard(self, channel: str) -> str:
        rows = self.store.leaderboard(channel)
        if not rows:
            return "No finished drills in this channel yet. `/drill start` begins one."
        lines = [f"{n}. <@{r.trainee}>: *{r.points}* points · {r.incidents} incident(s) · {r.drills} drill(s) · best "
                 f"{r.best} · average {r.average:.1f}" for n, r in enumerate(rows, start=1)]
        return "*Drill leaderboard for this channel* (points: best score per incident, summed)\n" + "\n".join(lines)

    def history(self, who: Who, team_domain: str) -> str:
        sessions = self.store.list_by_trainee(who.user, HISTORY_LIMIT)
        if not sessions:
            return "You have no drills yet. `/drill start` begins one."
        with self.ctx.factory() as db:
            rows = db.execute(select(OutboxItem.idempotency_key, OutboxItem.result).where(
                OutboxItem.idempotency_key.in_([f"drill:{s.id}:root" for s in sessions]))).all()
        roots = {key: result for key, result in rows}
        lines = []
        for s in sessions:
            result = roots.get(f"drill:{s.id}:root") or {}
            link = flows.message_link(team_domain, s.channel, str(result.get("ts", "")))
            name = f"<{link}|drill {s.id}>" if link else f"drill `{s.id}`"
            lines.append(f"• {name} · {s.started_at:%Y-%m-%d %H:%M} · {_history_state(s)}")
        return "*Your drills* (newest first)\n" + "\n".join(lines)

    # -- interviews ----------------------------------------------------------------------------------------

    def start_interview(self, cmd: DrillCommand, who: Who) -> str | None:
        try:
            question = self._question(cmd)
        except DrillCommandError as err:
            self.audit(who, "slash.drill", "interview", {"words": list(cmd.words), "error": str(err)}, "invalid")
            return f":warning: {err}"
        session, _ = interview.start(question, max_follow_ups=MAX_FOLLOW_UPS)
        now = datetime.now(UTC)
        record = InterviewRecord(id=f"iv-{uuid.uuid4().hex[:12]}", user=who.user, channel=who.channel,
                                 question_id=question.id, started_at=now, updated_at=now, session=session)
        self.interviews.add(record)
        self._post_root(f"interview:{record.id}:root", who.channel, question.question[:300],
                        question_blocks(question, record), who, "slash.drill", "interview",
                        {"session": record.id, "question": question.id, "topic": question.topic})
        return None

    def _question(self, cmd: DrillCommand) -> Question:
        """`[topic] [difficulty]` in any order, or a question id; the terminal's choose() does the picking."""
        if self.bank is None:
            raise DrillCommandError("the interview question bank does not load; the bot's log says why")
        topic = difficulty = question_id = None
        for word in (w.lower() for w in cmd.words):
            if word in DIFFICULTIES:
                difficulty = word
            elif self.bank.get(word) is not None:
                question_id = word
            elif topic is None:
                topic = word
            else:
                raise DrillCommandError(f"unexpected {word!r}: expected `/drill interview [topic] [difficulty]`")
        try:
            return choose(self.bank, topic, difficulty, question_id, cmd.seed)
        except PickError as err:
            raise DrillCommandError(str(err)) from None

    def interview_button(self, record_id: str, action: str, who: Who) -> str | None:
        """Hint, Skip or Model answer (`action` is the part of the action id after `interview_`)."""
        steps: dict[str, InterviewStepFn] = {"hint": interview.hint, "skip": interview.skip,
                                             "model_answer": interview.finish}
        if action not in steps:
            return f":warning: unknown interview button {action!r}"
        return self._interview_step(record_id, who, action, steps[action])

    def answer(self, reply: ThreadReply) -> str | None:
        """A reply in a thread: an answer (or hint/skip/quit) when the thread is the replier's open interview."""
        record = self._interview_in_thread(reply.channel, reply.thread_ts)
        if record is None or record.user != reply.user:
            return None  # another thread, or someone else talking in it: not an answer
        _count(self.ctx, "interview_answer")
        command = reply.text.strip().lower()
        step: InterviewStepFn
        if command in HINT:
            step = interview.hint
        elif command in SKIP:
            step = interview.skip
        elif command in QUIT:
            step = interview.finish
        else:
            # The optional model's second opinion runs under this interview's lock: replies to one interview
            # wait for it, other interviews do not.
            grader = model_grader(self.ctx.assistant)

            def step(session: InterviewSession, question: Question) -> tuple[InterviewSession, list[Step]]:
                return interview.submit(session, question, reply.text, grader=grader)

        return self._interview_step(record.id, Who(reply.user, reply.channel), "answer", step, reply)

    def _interview_in_thread(self, channel: str, thread_ts: str) -> InterviewRecord | None:
        records = self.interviews.open_in(channel)
        known = next((r for r in records if r.thread_ts == thread_ts), None)
        unknown = {f"interview:{r.id}:root": r for r in records if r.thread_ts is None}
        if known is not None or not unknown:
            return known
        # Slack shows a root before the poster has recorded its ts, so a quick reply can beat the record: while
        # a root is in flight, look again for a moment. A root still pending was never seen, so no one waits on it.
        deadline = time.monotonic() + ROOT_IN_FLIGHT_WAIT
        while True:
            with self.ctx.factory() as db:
                rows = db.execute(select(OutboxItem.idempotency_key, OutboxItem.result, OutboxItem.status)
                                  .where(OutboxItem.idempotency_key.in_(list(unknown)))).all()
            found = next((unknown[k] for k, result, _ in rows if (result or {}).get("ts") == thread_ts), None)
            if found is not None or not any(status == "sending" for *_, status in rows) \
                    or time.monotonic() > deadline:
                return found
            time.sleep(0.05)

    def _interview_step(self, record_id: str, who: Who, action: str, step: InterviewStepFn,
                        reply: ThreadReply | None = None) -> str | None:
        name = f"message.interview_{action}" if reply else f"button.interview_{action}"
        with self._locks.hold(record_id):
            record = self.interviews.load(record_id)
            problem = self._interview_problem(record, who)
            if record is None or problem is not None:
                self.audit(who, name, f"interview:{record_id}", {"error": problem}, "invalid")
                return f":warning: {problem}"
            if reply is not None and reply.ts in record.seen:
                return None  # Slack delivered this event again
            question = self.bank.get(record.question_id) if self.bank else None
            if question is None:
                return f":warning: question {record.question_id} is no longer in the bank"
            session, steps = step(record.session, question)
            overall = session.overall()
            outcome = Outcome([interview_reply(steps, question, session)],
                              {"question": question.id, "phase": session.phase,
                               "score": overall.score if overall else None,
                               "chars": len(reply.text) if reply else None},
                              finished=(f":checkered_flag: Finished: coverage *{overall.score if overall else 0}/100*."
                                        if session.phase == "done" else None))
            updated = record.model_copy(update={
                "session": session, "steps": record.steps + 1, "updated_at": datetime.now(UTC),
                "thread_ts": record.thread_ts or (reply.thread_ts if reply else None),
                "seen": [*record.seen, reply.ts][-50:] if reply else record.seen})
            try:
                self._apply(f"interview:{record_id}:root", f"interview:{record_id}:{record.steps}:{action}", outcome,
                            who, name, f"interview:{record_id}", lambda: self.interviews.save(updated))
            except DrillError as err:
                return f":warning: {err}"
        return None

    @staticmethod
    def _interview_problem(record: InterviewRecord | None, who: Who) -> str | None:
        if record is None:
            return "this interview is not in the database; start one with `/drill interview`"
        if record.user != who.user:
            return f"this is <@{record.user}>'s interview; start your own with `/drill interview`"
        if record.session.phase == "done":
            return "this interview is finished; start another with `/drill interview`"
        return None


def _history_state(s: DrillSession) -> str:
    """An open drill hides its incident: a random pick's id would give the answer away."""
    if not s.finished:
        return f"open, clock {_clock(s.clock_seconds)}: continue in its thread"
    if s.score is None:
        return f"`{s.incident_id}` · gave up"
    return f"`{s.incident_id}` · declared `{s.declared}` · *{s.score.total}*/100"


# --------------------------------------------------------------------------------------------------------------
# Slack handlers
# --------------------------------------------------------------------------------------------------------------


class Pool(Protocol):
    """bot.slack.app.Later: runs work after the ack and tells the user when it fails."""

    def __call__(self, what: str, respond: Respond | None, work: Callable[[], object]) -> None: ...


def register_drills(app: App, ctx: BotContext, pool: Pool) -> SlackDrills:
    """/drill, its buttons and forms, and thread replies (interview answers)."""
    drills = SlackDrills(ctx)
    _register_command(app, drills, pool)
    _register_buttons(app, drills, pool)
    _register_forms(app, drills, pool)
    _register_replies(app, drills, pool)
    return drills


def _ephemeral(respond: Respond, text: str) -> None:
    try:
        respond(text=text, response_type="ephemeral", replace_original=False)
    except Exception:
        log.exception("could not answer through response_url")


def _tell(ctx: BotContext, channel: str, user: str, text: str | None) -> None:
    """Privately, where there is no response_url (a submitted modal, a thread reply)."""
    if text and channel and ctx.slack is not None:
        ctx.slack.chat_postEphemeral(channel=channel, user=user, text=text)


def _count(ctx: BotContext, name: str) -> None:
    ctx.metrics.commands.labels(name).inc()


def _who(body: dict[str, Any]) -> Who:
    click = flows.click_from(body)
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
            _count(ctx, "drill_invalid")
            pool("Auditing", None, lambda: drills.audit(who, "slash.drill", flows.quoted(text), {"error": problem},
                                                        "invalid"))
            return
        if cmd.action == "help":
            ack(text=HELP, response_type="ephemeral")
            _count(ctx, "drill_help")
            pool("Auditing", None, lambda: drills.audit(who, "slash.drill", "help"))
            return
        ack()
        _count(ctx, f"drill_{cmd.action}")
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
        _ephemeral(respond, message)


def _value(body: dict[str, Any]) -> tuple[str, str]:
    action = (body.get("actions") or [{}])[0]
    return str(action.get("action_id") or ""), str(action.get("value") or "")


def _register_buttons(app: App, drills: SlackDrills, pool: Pool) -> None:
    ctx = drills.ctx

    def later(name: str, respond: Respond, flow: Callable[[], str | None]) -> None:
        _count(ctx, name)

        def run() -> None:
            message = flow()
            if message:
                _ephemeral(respond, message)

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
        _count(ctx, f"drill_{action}")
        click = flows.click_from(body)
        # On the listener's thread: a trigger_id is good for 3 s, so the modal opens now or never.
        try:
            view, message = drills.hypothesis_form(_value(body)[1], action, Who(click.user, click.channel))
            if view is not None:
                client.views_open(trigger_id=click.trigger_id or "", view=view)
        except Exception as err:
            log.exception("opening the %s form failed", action)
            message = f":x: Opening the form failed on triagebot's side ({type(err).__name__}); try again."
        if message:
            _ephemeral(respond, message)

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
        choice = read_hypothesis_submission(view)
        if isinstance(choice, dict):
            ack(response_action="errors", errors=choice)
            return
        ack()
        _count(ctx, f"drill_{choice.action}_submit")
        user = str((body.get("user") or {}).get("id", ""))

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


