"""`triagebot drill [ID|random]`: a recorded incident as a training drill in the terminal.

Reading and printing live here; the drill itself is drills.session, so the chat surface and this loop behave
the same. The session is saved after every step, so `--resume SESSION` picks a drill up after a restart.
"""

from __future__ import annotations

import argparse
import getpass
import random
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rich.console import Console

from bot.cli.arguments import DEFAULT_CHANNEL
from bot.render.drills.debrief import render_debrief
from bot.render.drills.drill_terminal import (
    artifact_in_full,
    command_help,
    history_table,
    hypotheses_table,
    incident_list,
    leaderboard_table,
    prompt,
    recap,
    render_view,
    say,
    sources_table,
)
from bot.render.drills.recorded_chart import drill_chart
from drills import session as drill
from drills.debrief import Debrief
from drills.errors import DrillError
from drills.recorded.catalog import Catalog, load_catalog, locate
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident, IncidentError, load_incident
from drills.recorded.picker import pick
from drills.session import DrillSession
from drills.store import SessionStore

if TYPE_CHECKING:
    from bot.assist.llm import Assistant

InputFn = Callable[[str], str]



class DrillUsageError(ValueError):
    """A mistake in the command line (unknown incident, session or filter); printed in one line, exit 2."""


def open_store(path: Path | None) -> SessionStore:
    # Imported here: SQLAlchemy is only needed once a drill actually runs.
    from sqlalchemy.exc import SQLAlchemyError

    from bot.state import default_db_path
    from bot.store.drill_sessions import SqlSessionStore

    where = path or default_db_path()
    try:
        return SqlSessionStore.from_path(where)
    except (OSError, SQLAlchemyError) as err:
        raise DrillUsageError(f"cannot open the drill database {where}: {err}") from None


def _trainee(args: argparse.Namespace) -> str:
    if getattr(args, "trainee", None):
        return str(args.trainee)
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name in some containers
        return "trainee"


def run_drill(args: argparse.Namespace, console: Console, input_fn: InputFn = input,
              store: SessionStore | None = None, assistant: Assistant | None = None,
              saved_dir: Path | None = None) -> int:
    """`assistant`: the model that writes the debrief's notes; by default the one the settings name (if any).
    `saved_dir`: the drills dir of saved incidents; by default the settings' (TRIAGEBOT_DRILLS_DIR)."""
    action = getattr(args, "incident", None)
    if action == "save":
        return _save(args, console)
    if getattr(args, "stored", None) or getattr(args, "output", None) or getattr(args, "ground_truth", None) \
            or getattr(args, "force", False):
        raise DrillUsageError("INCIDENT, --output, --ground-truth and --force go with `triagebot drill save`")
    saved_dir = saved_dir if saved_dir is not None else configured_drills_dir()
    if action == "list":
        incident_list(load_incident_catalog(saved_dir), getattr(args, "difficulty", None), getattr(args, "tag", None),
              console)
        return 0
    store = store or open_store(getattr(args, "db", None))
    if action == "history":
        trainee = _trainee(args)
        history_table(store.list_by_trainee(trainee), trainee, console)
        return 0
    if action == "leaderboard":
        channel = getattr(args, "channel", None) or DEFAULT_CHANNEL
        leaderboard_table(store.leaderboard(channel), channel, console)
        return 0
    # Before the drill starts: a model that cannot be built is a one-line error now, not after the debrief.
    assistant = assistant if assistant is not None else configured_assistant()
    if getattr(args, "resume", None):
        session, incident = _resume(store, args.resume, getattr(args, "trainee", None), saved_dir)
        if session.finished and session.score is None:
            raise DrillUsageError(f"drill {session.id} was given up, so it has no debrief; start another with "
                                  "`triagebot drill random`")
        if session.finished:
            _debrief(drill.debrief(session, incident), assistant, console)
            _chart(incident, getattr(args, "chart", None), console)
            return 0
        render_view(drill.page_view(session, incident), console)
        recap(session, console)
    else:
        session, incident = _start(store, args, console, saved_dir)
    return _loop(session, incident, store, console, input_fn, assistant, getattr(args, "chart", None))


def configured_assistant() -> Assistant:
    """The model the settings name (NO_MODEL when llm_provider is unset); a ConfigError is a usage error."""
    from bot.assist.llm import assistant_from
    from bot.config import ConfigError, load_settings

    try:
        return assistant_from(load_settings())
    except ConfigError as err:
        raise DrillUsageError(str(err)) from None


def configured_drills_dir() -> Path:
    """The drills dir the settings name (a ConfigError is a usage error)."""
    from bot.config import ConfigError, load_settings
    from bot.runner.drill_catalog import drills_dir

    try:
        return drills_dir(load_settings())
    except ConfigError as err:
        raise DrillUsageError(str(err)) from None


def load_incident_catalog(saved_dir: Path) -> Catalog:
    try:
        return load_catalog(saved_dir)
    except IncidentError as err:  # a broken bundled incident; broken saved ones are only left out
        raise DrillUsageError(str(err)) from None


def _debrief(d: Debrief, assistant: Assistant, console: Console) -> None:
    """The debrief, then (with a model configured) the notes on it: the debrief never waits for the model."""
    render_debrief(d, console)
    if assistant.enabled and assistant.summaries:
        from bot.assist.narrate import narrate_debrief
        from bot.render.narrative import print_narrative

        with console.status("Asking the model for notes on your drill…"):
            narrative = narrate_debrief(d, assistant)
        print_narrative(narrative, console, heading="Coach's notes")


def _chart(incident: Incident, path: Path | None, console: Console) -> None:
    """With --chart: the leading hypothesis's chart, as live triage posts it, written where the trainee asked (a
    terminal cannot show a picture)."""
    if path is None:
        return
    png = drill_chart(incident)
    if png is None:
        say(console, "No chart: the leading hypothesis declares no series, or the recording has none.")
        return
    try:
        path.write_bytes(png)
    except OSError as err:
        raise DrillUsageError(f"cannot write the chart to {path}: {err.strerror or err}") from None
    say(console, f"The chart of the leading hypothesis is in {path}.")


def _save(args: argparse.Namespace, console: Console) -> int:
    """`triagebot drill save INCIDENT`: the report's "Save as drill" button, from the command line."""
    from bot.config import ConfigError, load_settings
    from bot.runner.drill_save import SaveError, save_stored_incident

    if not getattr(args, "stored", None):
        raise DrillUsageError("usage: triagebot drill save INCIDENT [-o DIR] [--ground-truth PLAYBOOK/HYPOTHESIS] "
                              "[--force]")
    try:
        saved = save_stored_incident(load_settings(), args.stored, args.output, args.ground_truth,
                                     actor=f"cli:{_trainee(args)}", force=bool(getattr(args, "force", False)))
    except (SaveError, ConfigError) as err:
        raise DrillUsageError(str(err)) from None
    truth = (f"ground truth {saved.truth.playbook}/{saved.truth.hypothesis}" if saved.truth else
             "no ground truth yet: pass --ground-truth, or mark the diagnosis wrong in Slack first")
    drill_id = saved.folder.name
    how = (f"Drill it with `triagebot drill {drill_id}` or `/drill start {drill_id}`; replay it with "
           if saved.in_catalog and saved.truth else
           "It is outside the drills dir, so drills do not list it; replay it with " if not saved.in_catalog else
           "It cannot be drilled until it has a ground truth; replay it with ")
    say(console, f"Saved {saved.incident_key} (triage run {saved.run_id}, {saved.artifacts} artifacts) as "
                       f"{drill_id} in {saved.folder}; {truth}. {how}`triagebot replay {saved.folder}`.")
    return 0


def _prepare(incident: Incident) -> None:
    """Compile the playbooks and index the incident before the page shows, so no drill step pays for it."""
    evidence_for(incident)


def _start(store: SessionStore, args: argparse.Namespace, console: Console,
           saved_dir: Path) -> tuple[DrillSession, Incident]:
    trainee = _trainee(args)
    mine = store.list_by_trainee(trainee)
    seed = getattr(args, "seed", None)
    try:
        found = load_incident_catalog(saved_dir)
        meta = pick(found.metas(), getattr(args, "incident", None), getattr(args, "difficulty", None),
                    getattr(args, "tag", None), rng=random.Random(seed) if seed is not None else None,
                    avoid=[s.incident_id for s in mine if s.finished])
        incident = load_incident(found.folder(meta.id))
        _prepare(incident)
        session, view = drill.start(incident, trainee, getattr(args, "channel", None) or DEFAULT_CHANNEL)
    except (DrillError, IncidentError) as err:
        raise DrillUsageError(str(err)) from None
    store.save(session)
    open_ones = [s.id for s in mine if not s.finished]
    if open_ones:
        say(console, f"You have {len(open_ones)} unfinished drill(s); resume one with "
                           f"`triagebot drill --resume {open_ones[0]}`.", style="dim")
    render_view(view, console)
    say(console, f"Drill {session.id}. Ask for evidence, propose hypotheses, declare the root cause. "
                       "Type `help` for commands.", style="dim")
    return session, incident


def _resume(store: SessionStore, session_id: str, trainee: str | None,
            saved_dir: Path) -> tuple[DrillSession, Incident]:
    session = store.load(session_id)
    if session is None:
        raise DrillUsageError(f"no saved drill {session_id!r}; list yours with `triagebot drill history`")
    if trainee and session.trainee != trainee:
        raise DrillUsageError(f"drill {session_id} belongs to {session.trainee}, not {trainee}")
    try:
        incident = load_incident(locate(session.incident_id, saved_dir))
    except (IncidentError, DrillError) as err:
        raise DrillUsageError(f"drill {session_id}: {err}") from None
    _prepare(incident)
    return session, incident


def _loop(session: DrillSession, incident: Incident, store: SessionStore, console: Console,
          input_fn: InputFn, assistant: Assistant, chart_to: Path | None = None) -> int:
    while True:
        try:
            line = input_fn(prompt(session.clock_seconds))
        except (EOFError, KeyboardInterrupt):
            line = "quit"
        command, _, arg = line.strip().partition(" ")
        command, arg = command.lower(), arg.strip()
        if not command:
            continue
        try:
            if command in ("quit", "q", "exit"):
                store.save(session)
                say(console, f"Saved. Resume with: triagebot drill --resume {session.id}", style="bold")
                return 0
            if command in ("help", "?"):
                command_help(console)
            elif command in ("sources", "s"):
                sources_table(session, console)
            elif command in ("hypotheses", "hyps"):
                hypotheses_table(incident, console)
            elif command == "show":
                _show(session, incident, arg, console)
            elif command in ("evidence", "ev", "e"):
                session, view = drill.request_evidence(session, incident, _need(arg, "evidence SOURCE"))
                store.save(session)
                render_view(view, console)
            elif command in ("propose", "p"):
                session, view = drill.propose(session, incident, _need(arg, "propose HYPOTHESIS"))
                store.save(session)
                render_view(view, console)
            elif command == "hint":
                session, view = drill.hint(session, incident)
                store.save(session)
                render_view(view, console)
            elif command in ("declare", "d"):
                playbook, _, hypothesis = _need(arg, "declare PLAYBOOK/HYPOTHESIS").rpartition("/")
                session, debrief = drill.declare(session, incident, playbook, hypothesis)
                store.save(session)
                _debrief(debrief, assistant, console)
                _chart(incident, chart_to, console)
                return 0
            else:
                say(console, f"Unknown command {command!r}; type `help`.", style="red")
        except DrillError as err:
            say(console, str(err), style="red")


def _need(arg: str, usage: str) -> str:
    if not arg:
        raise DrillError(f"usage: {usage}")
    return arg


def _show(session: DrillSession, incident: Incident, artifact_id: str, console: Console) -> None:
    found = next((a for a in incident.artifacts if a.id == artifact_id), None)
    if found is None or artifact_id not in session.revealed_artifacts:
        raise DrillError(f"no revealed artifact {artifact_id!r}; revealed: "
                         + (", ".join(session.revealed_artifacts) or "none yet"))
    artifact_in_full(found, console)
