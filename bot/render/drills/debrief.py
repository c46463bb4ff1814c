"""A drill's debrief for a terminal: verdict, score, the playbook tree, the ideal path and what evidence meant."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from drills.debrief import Debrief

_STATUS_STYLE = {"confirmed": "bold green", "likely": "green", "unknown": "yellow", "ruled-out": "red",
                 "not explored": "dim"}


def clock(seconds: int) -> str:
    minutes, rest = divmod(seconds, 60)
    return f"{minutes}m{rest:02d}s"


def render_debrief(d: Debrief, console: Console) -> None:
    mark = {"right": ("RIGHT", "bold green"), "right branch": ("RIGHT BRANCH", "yellow"), "wrong": ("WRONG", "red")}
    word, style = mark[d.outcome]
    head = Text()
    head.append(f"{word}: ", style=style)
    head.append(f"you declared {d.declared}; the root cause is {d.truth}.\n")
    head.append(f"{d.declared_note}\n\n", style="dim")
    head.append(d.truth_claim + "\n\n", style="bold")
    head.append(d.explanation)
    console.print(Panel(head, title=Text(f"Debrief: {d.title}"), subtitle=f"{d.incident_id} ({d.difficulty})",
                        expand=True))

    score = Table(title=f"Score {d.score.total}/100")
    for column in ("part", "points", "max", "why"):
        score.add_column(column)
    for part in d.score.parts:
        score.add_row(part.name, str(part.points), str(part.max), Text(part.why))
    console.print(score)

    tree = Tree(Text(f"{d.playbook} playbook (statuses from the whole recording)", style="bold"))
    parents: list[Tree] = [tree]
    for node in d.tree:
        del parents[node.depth + 1:]
        label = Text(f"{node.id}  ")
        label.append(node.status, style=_STATUS_STYLE.get(node.status, ""))
        for flag, text in ((node.truth, "root cause"), (node.declared, "you declared"), (node.proposed, "proposed")):
            if flag:
                label.append(f"  [{text}]", style="bold" if text == "root cause" else "cyan")
        parents.append(parents[-1].add(label))
    console.print(tree)

    path = Table(title=f"Ideal path (par {clock(d.par_seconds)}) and yours ({clock(d.clock_seconds)})",
                 expand=True)
    for column in ("", "source", "cost", "shows about the root cause"):
        path.add_column(column, overflow="fold")
    for step in d.ideal_path:
        path.add_row("ideal", step.label, f"{step.cost_seconds} s", Text("; ".join(step.shows)))
    for step in d.your_path:
        tag = "yours*" if step.discriminating else "yours"
        path.add_row(tag, step.label, f"{step.cost_seconds} s", Text("; ".join(step.shows)))
    console.print(path)
    console.print(Text("* discriminating: on some smallest set of sources that separates the root cause.",
                       style="dim"))

    meaning = Table(title="What each piece of evidence meant", expand=True)
    for column in ("artifact", "source", "meant"):
        meaning.add_column(column, overflow="fold")
    for item in d.evidence:
        name = Text(item.artifact, style="" if item.revealed else "dim")
        if not item.revealed:
            name.append(" (not requested)")
        said = f"unavailable: {item.unavailable}" if item.unavailable else "\n".join(item.meanings)
        meaning.add_row(name, item.source, Text(said))
    console.print(meaning)
    console.print(Panel(Group(*(Text(f"- {r}") for r in d.references)), title="References", expand=True))
