"""Block Kit for /drill: the drill page and its replies, the debrief, the hypothesis form, interview steps.

Pure: views and debriefs in, slack_sdk blocks out. The handlers (bot/slack/drills.py) register the action ids
defined here.
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
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

from bot.render.drills.debrief import render_debrief
from bot.render.slack import STATUS_EMOJI, mrkdwn_escape
from drills import session as drill
from drills.debrief import Debrief, PathStep
from drills.grading import Grade
from drills.hypotheses import HypothesisRef
from drills.interview import InterviewSession, Step
from drills.questions import Question
from drills.session import DrillSession
from drills.sources import SOURCES

EVIDENCE_PREFIX = "drill_evidence:"  # + source id: one action id per source button
HINT_ACTION, PROPOSE_ACTION, DECLARE_ACTION, GIVE_UP_ACTION = "drill_hint", "drill_propose", "drill_declare", \
    "drill_give_up"
HYPOTHESIS_CALLBACK = "drill_hypothesis_submit"
HYPOTHESIS_BLOCK, HYPOTHESIS_SELECT = "hypothesis", "hypothesis"
# Slack: 3000 characters per section text, 75 per option text, 100 options per group. Sections stay under the
# limit with room for the "cut" note; a message's blocks stay far below Slack's ~13k characters of JSON.
_SECTION, _OPTION_TEXT, _GROUP_OPTIONS = 2900, 75, 100
_ARTIFACT_LINES = 20


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
    chart: bytes | None = None  # a PNG under it, as under a live triage's report (bot/render/chart.py)


def _md(text: str) -> MarkdownTextObject:
    return MarkdownTextObject(text=text)


def _fit(text: str, limit: int = _SECTION) -> str:
    text = text.strip()
    if len(text) <= limit:
        return text
    head = text[: limit - 20]
    # At a line break (else a space): a command or an id is shown whole or not at all.
    at = head.rfind("\n") if "\n" in head else head.rfind(" ")
    return (head[:at] if at > 0 else head).rstrip() + "\n_…cut_"


def _section(text: str) -> SectionBlock:
    return SectionBlock(text=_md(_fit(text)))


def _context(text: str) -> ContextBlock:
    return ContextBlock(elements=[_md(_fit(text))])


def clock(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest:02d}s"


def _quote(text: str) -> str:
    return "\n".join(f"> {mrkdwn_escape(line)}" for line in text.splitlines() or [""])


def block_dicts(blocks: list[Block]) -> list[dict[str, Any]]:
    for block in blocks:
        block.validate_json()
    return [b.to_dict() for b in blocks]


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
             f"{clock(view.clock_seconds)})"]
    for artifact in view.artifacts[:_ARTIFACT_LINES]:
        about = ", ".join(x for x in (artifact.kind, artifact.subject) if x)
        if artifact.unavailable is not None:
            lines.append(f"• `{mrkdwn_escape(artifact.id)}` ({mrkdwn_escape(about)}): unavailable: "
                         f"{mrkdwn_escape(artifact.unavailable)}")
        else:
            count = len(artifact.content.splitlines())
            # The command whole (it is copied and run); _section keeps the block within Slack's limit.
            lines.append(f"• `{mrkdwn_escape(artifact.id)}` ({mrkdwn_escape(about)}): {count:,} lines"
                         + (f", `$ {mrkdwn_escape(artifact.command)}`" if artifact.command else ""))
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
        _context(f"+{view.cost_seconds} s, drill clock {clock(view.clock_seconds)}")])


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
        _section(f"*Ideal path* (par {clock(d.par_seconds)}): {path(d.ideal_path)}\n"
                 f"*Your path* ({clock(d.clock_seconds)}): {path(d.your_path)}\n"
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


def question_blocks(question: Question, sid: str, user: str) -> list[Block]:
    return [
        HeaderBlock(text=":studio_microphone: Interview question"),
        _section(mrkdwn_escape(question.question)),
        _context(f"{question.topic} · {question.difficulty} · {question.kind} · `{question.id}` · for "
                 f"<@{user}>"),
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
    lines += [f":information_source: {mrkdwn_escape(n)}" for n in g.notes]
    return "\n".join(lines)


def _step_text(step: Step, question: Question, session: InterviewSession) -> str:
    """One step in mrkdwn, worded as the terminal words it (bot/cli/interview.py)."""
    if step.kind == "feedback" and step.grade is not None:
        so_far = " so far" if session.turns and session.turns[-1].kind == "follow-up" else ""
        added = [p.point for p in question.expected_points if p.id in step.newly_covered]
        extra = "".join(f"\n+ {mrkdwn_escape(a)}" for a in added)
        head = f"*Coverage{so_far} {step.grade.score}/100: {step.grade.verdict}*"
        return head + (f"\nYour follow-up answer added:{extra}" if added else "") + "\n" + _points(step.grade)
    if step.kind == "exact":
        n, of = step.position or (1, 1)
        return (f"*Exact follow-up {n}/{of} (from the playbook):* {mrkdwn_escape(step.text)}\n"
                "_Reply in this thread with the letters, or Skip._")
    if step.kind == "exact-result":
        return f"*{mrkdwn_escape(step.text)}*"
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
        if session.exact_scores:
            scores = ", ".join(f"{v}/100" for v in session.exact_scores)
            parts.append(f"*Exact follow-ups {scores}; score {step.score}/100* (they count for a quarter)")
        if g.missed:
            parts.append("Still missing:\n" + "\n".join(f"• {mrkdwn_escape(p.point)}" for p in g.missed))
    parts.append("_Source: " + mrkdwn_escape("; ".join(question.source)) + "_")
    if question.related_playbook:
        parts.append(f"_Related playbook: `triagebot playbooks show {question.related_playbook}`_")
    return "\n".join(parts)


def interview_reply(steps: list[Step], question: Question, session: InterviewSession) -> Reply:
    blocks: list[Block] = [_section(_step_text(s, question, session)) for s in steps]
    return Reply(text=steps[0].text[:200] if steps else "…", blocks=blocks)


def debrief_reply(d: Debrief, session_id: str, chart: bytes | None = None) -> Reply:
    """`chart`: the leading hypothesis's chart, drawn as live triage draws it (bot/render/drills/recorded_chart.py)."""
    return Reply(text=f"Debrief: {d.outcome}, {d.score.total}/100", blocks=debrief_blocks(d),
                 upload=Upload("debrief.txt", f"Debrief of drill {session_id}", debrief_text(d)), chart=chart)


def gave_up_reply(user: str, answer: str, explanation: str, ideal: str, par_seconds: int,
                  chart: bytes | None = None) -> Reply:
    """`chart`: the answer's picture, as under the debrief."""
    return Reply(text="Gave up", chart=chart, blocks=[
        _section(f":white_flag: <@{user}> gave up. {mrkdwn_escape(answer)}"),
        _section(mrkdwn_escape(explanation)),
        _context(f"Ideal path: {ideal} (par {clock(par_seconds)}). `/drill start` for another.")])


def closed_root(blocks: list[dict[str, Any]], note: str) -> list[dict[str, Any]]:
    """A finished exercise's root: its buttons go, a closing note comes."""
    kept = [b for b in blocks if b.get("type") != "actions"]
    return [*kept, ContextBlock(elements=[_md(note)]).to_dict()]
