"""The terminal drill: the page, revealed evidence, the command help and the tables, drawn with rich.

bot/cli/drill.py reads the trainee's commands and calls these; the drill itself is drills.session.
"""

from __future__ import annotations

from rich.console import Console
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from bot.render.drills.debrief import clock
from collectors.models import Artifact
from drills.recorded.catalog import Catalog
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident
from drills.session import DrillSession, View
from drills.sources import BY_ID, SOURCES
from drills.store import LeaderboardRow

MAX_ARTIFACT_LINES = 200
_VERDICT_STYLE = {"supported": "green", "ruled-out": "red", "untestable": "yellow", "inconclusive": "yellow"}
HELP = [
    ("sources", "list evidence sources, what each costs on the drill clock, and what you have seen"),
    ("evidence SOURCE", "reveal the recorded evidence of one source, e.g. `evidence kernel log` (costs time)"),
    ("show ARTIFACT", "print a revealed artifact in full"),
    ("hypotheses", "list every playbook's hypothesis ids"),
    ("propose HYPOTHESIS", "ask what your evidence says about a hypothesis, e.g. `propose oom-killed/node-oom`"),
    ("hint", "a graded hint: direction, then evidence, then the answer (each level costs 5 points)"),
    ("declare PLAYBOOK/HYPOTHESIS", "name the root cause; the drill ends with the debrief"),
    ("quit", "save and leave; resume later with --resume"),
]


def prompt(clock_seconds: int) -> str:
    """The drill's input prompt with its clock, as `drill 1:05> `. Not `[0m00s]`: a "[0m" at a line's start reads
    as a broken colour code (ESC[0m, the ANSI reset, without its ESC), and input() prints the prompt raw."""
    minutes, seconds = divmod(clock_seconds, 60)
    return f"drill {minutes}:{seconds:02d}> "


def say(console: Console, text: str, style: str = "") -> None:
    """One line as it is: no rich markup read from evidence or names."""
    console.print(Text(text, style=style))


def render_view(view: View, console: Console) -> None:
    if view.kind == "page" and view.page is not None:
        page = view.page
        target = "  ".join(f"{k}={v}" for k, v in page.target.items())
        console.print(Panel(Text(page.text), title=f"PAGE  {page.time:%Y-%m-%d %H:%M} UTC",
                            subtitle=Text(target), border_style="red", expand=True))
        return
    if view.kind == "evidence":
        for artifact in view.artifacts:
            title = Text(f"{artifact.id}  ({artifact.kind}, {artifact.subject or 'no subject'})")
            if artifact.unavailable is not None:
                _artifact(console, title, artifact.command,
                          Text(f"unavailable: {artifact.unavailable}", style="yellow"))
                continue
            _artifact(console, title, artifact.command, excerpt(artifact.content, artifact.id))
    for line in view.text:
        style = _VERDICT_STYLE.get(view.answer.verdict, "") if view.answer else "yellow" if view.hint_level else ""
        console.print(Text(line, style=style))
    if view.kind in ("evidence", "proposal"):
        cost = f"+{view.cost_seconds} s, " if view.cost_seconds else ""
        console.print(Text(f"({cost}drill clock {clock(view.clock_seconds)})", style="dim"))


def excerpt(content: str, artifact_id: str) -> Text:
    lines = content.splitlines()
    if len(lines) <= MAX_ARTIFACT_LINES:
        return Text(content.rstrip("\n"))
    text = Text("\n".join(lines[:MAX_ARTIFACT_LINES]))
    text.append(f"\n... {len(lines) - MAX_ARTIFACT_LINES} more lines: `show {artifact_id}`", style="dim")
    return text


def _artifact(console: Console, title: Text, command: str, body: Text) -> None:
    """Evidence without a box: a box wraps every long log line mid-token between its borders and cuts a long
    command in its subtitle, and both are what a trainee copies. Each line goes out whole for the terminal to fold."""
    heading = Text("── ", style="dim")
    heading.append_text(title)
    heading.stylize("bold", 3)
    console.print(heading, soft_wrap=True)
    if command:
        console.print(Text(f"$ {command}", style="cyan"), soft_wrap=True, highlight=False)
    for line in body.split("\n"):
        console.print(line, soft_wrap=True, highlight=False)


def artifact_in_full(found: Artifact, console: Console) -> None:
    _artifact(console, Text(found.id), found.command,
              Text(found.content if found.unavailable is None else f"unavailable: {found.unavailable}"))


def command_help(console: Console) -> None:
    table = Table(show_header=False, box=None)
    for command, what in HELP:
        table.add_row(Text(command, style="bold"), Text(what))
    console.print(table)


def sources_table(session: DrillSession, console: Console) -> None:
    table = Table(title=f"Evidence sources (drill clock {clock(session.clock_seconds)})")
    for column in ("source", "what", "cost", "on call you would", "seen"):
        table.add_column(column, no_wrap=column == "source")  # typed back as `evidence SOURCE`: kept whole
    for source in SOURCES:
        seen = "yes" if source.id in session.revealed_sources else ""
        table.add_row(source.id, source.label, f"{source.cost_seconds} s", Text(source.how), seen)
    console.print(table)


def hypotheses_table(incident: Incident, console: Console) -> None:
    # Every playbook, not just this incident's: listing one tree would give the symptom away.
    evidence = evidence_for(incident)
    by_book: dict[str, list[str]] = {}
    for ref in evidence.refs.values():
        by_book.setdefault(ref.playbook, []).append(ref.id)
    table = Table(title="Hypotheses (propose or declare them as playbook/hypothesis)", expand=True)
    table.add_column("playbook")
    table.add_column("hypotheses", overflow="fold")
    for book, ids in by_book.items():
        table.add_row(book, ", ".join(ids))
    console.print(table)


def recap(session: DrillSession, console: Console) -> None:
    seen = ", ".join(BY_ID[s].label for s in session.revealed_sources) or "nothing yet"
    console.print(Text(f"Resumed drill {session.id}: clock {clock(session.clock_seconds)}, seen {seen}, "
                       f"{len(session.proposals)} proposal(s), hints used {session.hint_level}/3.", style="dim"))
    for p in session.proposals:
        console.print(Text(f"  {p.answer.hypothesis}: {p.answer.message}",
                           style=_VERDICT_STYLE.get(p.answer.verdict, "")))


def incident_list(found: Catalog, difficulty: str | None, tag: str | None, console: Console) -> None:
    """Every incident there is to drill, bundled and saved, with its origin; only the ids, as a title or a
    ground truth would give the answer away."""
    table = Table(title=f"Recorded incidents (saved ones from {found.saved_dir})")
    for column in ("id", "origin", "difficulty", "tags", "drillable"):
        # The id is what a trainee copies next (`triagebot drill ID`): never folded; the other columns give way.
        table.add_column(column, overflow="fold", no_wrap=column == "id")
    shown = 0
    for entry in found.entries:
        meta = entry.meta
        if (difficulty and meta.difficulty != difficulty) or (tag and tag not in meta.tags):
            continue
        shown += 1
        table.add_row(meta.id, entry.origin, meta.difficulty, ", ".join(meta.tags),
                      "yes" if meta.ground_truth else Text("no: no ground_truth yet", style="yellow"))
    console.print(table)
    saved = sum(1 for e in found.entries if e.origin == "saved")
    console.print(Text(f"{shown} shown; {len(found.entries) - saved} bundled, {saved} saved. "
                       "Drill one with `triagebot drill ID`.", style="dim"))
    for problem in found.problems:
        console.print(Text(f"left out: {problem}", style="yellow"))


def history_table(sessions: list[DrillSession], trainee: str, console: Console) -> None:
    table = Table(title=f"Drills of {trainee}")
    for column in ("session", "started", "incident", "state", "declared", "score"):
        # Ids are copied (`triagebot drill --resume SESSION`): kept whole, the other columns give way.
        table.add_column(column, no_wrap=column in ("session", "incident", "declared"))
    for s in sessions:
        state = "finished" if s.finished else f"open ({clock(s.clock_seconds)})"
        table.add_row(s.id, f"{s.started_at:%Y-%m-%d %H:%M}", s.incident_id, state, s.declared or "",
                      str(s.score.total) if s.score else "")
    console.print(table)


def leaderboard_table(rows: list[LeaderboardRow], channel: str, console: Console) -> None:
    table = Table(title=f"Leaderboard: {channel} (points = best score per incident, summed)")
    for column in ("#", "trainee", "points", "incidents", "drills", "best", "average"):
        table.add_column(column)
    for rank, row in enumerate(rows, start=1):
        table.add_row(str(rank), row.trainee, str(row.points), str(row.incidents), str(row.drills), str(row.best),
                      f"{row.average:.1f}")
    console.print(table)
