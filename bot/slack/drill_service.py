"""The /drill service: recorded-incident drills and mock-interview questions, each in a thread of its own.

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
import logging
import random
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from slack_sdk.models.blocks import Block
from sqlalchemy import select

from bot.assist.grade import model_grader
from bot.assist.narrate import narrate_debrief
from bot.context import BotContext
from bot.delivery import Reply as ThreadPost
from bot.delivery import Root, find, queue
from bot.delivery.words import evidence_text
from bot.render.drills.recorded_chart import drill_chart
from bot.render.drills.slack_drill import (
    block_dicts,
    clock,
    debrief_reply,
    evidence_reply,
    gave_up_reply,
    hint_reply,
    hypothesis_modal,
    interview_reply,
    page_blocks,
    proposal_reply,
    question_blocks,
)
from bot.render.slack_assist import narrative_payload
from bot.runner import drill_catalog
from bot.slack.common import audit, count, message_link
from bot.slack.drill_grammar import DrillCommand, DrillCommandError, HypothesisChoice, ThreadReply, Who
from bot.slack.drill_steps import Locks, Outcome, queue_outcome, step_prefix
from bot.store import repo
from bot.store.drill_sessions import SqlSessionStore
from bot.store.interviews import InterviewRecord, InterviewStore
from bot.store.models import OutboxItem
from drills import hints as hint_texts
from drills import interview
from drills import session as drill
from drills.debrief import Debrief
from drills.errors import DrillError
from drills.interview import InterviewSession, Step
from drills.interview_pick import HINT, QUIT, SKIP, PickError, choose
from drills.key import answer_key
from drills.key import ground_truth as recorded_truth
from drills.questions import Question, QuestionBank, QuestionBankError, load_bank
from drills.recorded import catalog
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident, IncidentError, load_incident
from drills.recorded.picker import DIFFICULTIES, parse_start, pick
from drills.session import DrillSession
from drills.sources import BY_ID

log = logging.getLogger("triagebot.slack.drills")

MAX_FOLLOW_UPS = 1
HISTORY_LIMIT = 15
ROOT_IN_FLIGHT_WAIT = 3.0  # seconds a reply waits for its thread's root to be recorded


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


DrillStep = Callable[[DrillSession, Incident], tuple[DrillSession, Outcome]]
InterviewStepFn = Callable[[InterviewSession, Question], tuple[InterviewSession, list[Step]]]


class SlackDrills:
    """The drill and interview flows of one bot context: its stores, and the question bank."""

    def __init__(self, ctx: BotContext) -> None:
        self.ctx = ctx
        self.store = SqlSessionStore(ctx.engine)
        self.interviews = InterviewStore(ctx.engine)
        self.saved_dir = drill_catalog.drills_dir(ctx.settings)  # saved drills, beside the bundled ones
        self._locks = Locks()
        self.bank: QuestionBank | None = None
        try:
            self.bank = load_bank()
        except QuestionBankError:
            log.exception("the interview question bank does not load; /drill interview is off")

    # -- plumbing ------------------------------------------------------------------------------------------

    def audit(self, who: Who, action: str, target: str | None, detail: dict[str, Any] | None = None,
              outcome: str = "ok") -> None:
        audit(self.ctx, user=who.user, channel=who.channel, action=action, target=target, detail=detail,
                    outcome=outcome)

    def _wake(self) -> None:
        if self.ctx.poster is not None:
            self.ctx.poster.wake()

    def _post_root(self, key: str, channel: str, text: str, blocks: list[Block], who: Who, action: str,
                   target: str, detail: dict[str, Any]) -> None:
        with self.ctx.factory.begin() as db:
            queue(db, Root(key=key, channel=channel, kind="drill-root", text=text, blocks=block_dicts(blocks)))
            repo.audit(db, actor=who.user, channel=who.channel, action=action, target=target, detail=detail)
        self._wake()

    def _apply(self, root_key: str, prefix: str, outcome: Outcome, who: Who, action: str, target: str,
               save: Callable[[], None] | None) -> None:
        """Queue the posts and the audit line in one transaction, then save the session (see the module doc)."""
        with self.ctx.factory.begin() as db:
            root = find(db, root_key)
            if root is None:
                raise DrillError("this exercise's thread was never posted; start another")
            queue_outcome(db, root, prefix, outcome)
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
                debrief = find(db, f"{prefix}:0")
                if debrief is None:  # the step was not applied
                    return
                queue(db, ThreadPost(key=f"{prefix}:narrative", channel=debrief.channel, kind="drill",
                                text=payload["text"], blocks=payload["blocks"], parent=debrief,
                                extra={"generated": narrative.generated}))
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
            reply = debrief_reply(d, session.id, drill_chart(incident))
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
            reply = gave_up_reply(who.user, answer, recorded_truth(incident).explanation, ideal, key.par_seconds,
                                  drill_chart(incident))
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
            link = message_link(team_domain, s.channel, str(result.get("ts", "")))
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
                        question_blocks(question, record.id, record.user), who, "slash.drill", "interview",
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
        count(self.ctx, "interview_answer")
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
        return f"open, clock {clock(s.clock_seconds)}: continue in its thread"
    if s.score is None:
        return f"`{s.incident_id}` · gave up"
    return f"`{s.incident_id}` · declared `{s.declared}` · *{s.score.total}*/100"
