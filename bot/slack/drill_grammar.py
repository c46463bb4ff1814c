"""What /drill and its forms say: the command grammar, the hypothesis form's submission, thread replies.

Pure, so it runs before the ack.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from bot.render.drills.slack_drill import HYPOTHESIS_BLOCK, HYPOTHESIS_SELECT
from bot.slack.triage_grammar import slack_unescape
from collectors.redact import redact_text

COMMAND = "/drill"
USAGE = "/drill start [incident-id|random] [easy|medium|hard] [tag] | interview [topic] | leaderboard | history | help"

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
                       text=redact_text(slack_unescape(text)))
