"""A graded answer in the terminal: the expected points with what earned each, then any wrong claims."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from drills.grading import Grade


def grade_table(grade: Grade, said_header: str = "you said") -> Table:
    table = Table(show_header=True, expand=True, box=None)
    table.add_column("", width=2)
    table.add_column("expected point", overflow="fold")
    table.add_column(said_header, overflow="fold")
    for p in grade.points:
        mark = Text("✓", style="green") if p.covered else Text("✗", style="red")
        said = p.shown if p.covered else ("named, then dismissed" if p.dismissed else "")
        table.add_row(mark, Text(p.point), Text(said, style="magenta" if p.by == "model" else "dim"))
    return table


def print_grade_details(grade: Grade, console: Console, said_header: str = "you said") -> None:
    console.print(grade_table(grade, said_header))
    for w in grade.wrong_claims:
        console.print(Text(f"Wrong claim: {w.claim} (in “{w.evidence}”)", style="red"))
    for note in grade.notes:
        console.print(Text(f"Note: {note}", style="yellow"))


def render_grade(result: Grade, console: Console) -> None:
    console.print(Text(f"Score {result.score}/100: {result.verdict}", style="bold"))
    print_grade_details(result, console, said_header="earned by")
