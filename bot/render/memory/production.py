"""`triagebot eval --production`: accuracy from on-call feedback, and the cases `--export` wrote, in the terminal."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from bot.memory.export import Skipped
from bot.memory.production import ProductionAccuracy, Tally

MAX_ROWS = 20


def _table(title: str, first: str, rows: list[Tally]) -> Table:
    table = Table(title=title)
    for col in (first, "labelled", "right", "accuracy"):
        table.add_column(col, justify="left" if col == first else "right")
    for t in rows[:MAX_ROWS]:
        table.add_row(t.key, str(t.labelled), str(t.right), f"{t.percent} %")
    return table


def render_production(result: ProductionAccuracy, since_text: str, console: Console) -> None:
    if not result.labelled:
        console.print(f"No feedback in the last {since_text}: nothing to measure. Labels come from the report's "
                      "Mark resolved and Wrong diagnosis buttons.", highlight=False)
        return
    console.print(f"Production accuracy over the last {since_text}: {result.right} of {result.labelled} labelled "
                  f"verdicts right ({result.percent} %).", highlight=False)
    console.print(_table("By playbook (worst first)", "playbook", result.by_playbook))
    console.print(_table("By leading hypothesis (worst first)", "what we said", result.by_hypothesis))
    if result.confusions:
        table = Table(title="Confusions: what we said, and what it was")
        for col in ("what we said", "what it was", "times"):
            table.add_column(col, justify="right" if col == "times" else "left")
        for said, was, n in result.confusions[:MAX_ROWS]:
            table.add_row(said, was, str(n))
        console.print(table)


def render_export(written: list[Path], skipped: list[Skipped], root: Path, since_text: str, console: Console) -> None:
    """What `eval --production --export` wrote, what it could not, and how to run the cases."""
    console.print(f"{len(written)} labelled incident(s) of the last {since_text} written as cases under {root}.",
                  highlight=False)
    for folder in written:
        console.print(f"  {folder}", highlight=False)
    for skip in skipped:
        console.print(f"  skipped triage run {skip.run_id}: {skip.why}", highlight=False)
    if written:
        console.print(f"Check them with `triagebot eval {root}`; move the ones worth keeping into tests/realworld/.",
                      highlight=False)
