"""A summary table of replayed incidents against their ground truth."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table


def render_summary(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    table = Table(title="Recorded incidents replayed through the playbooks")
    for col in ("incident", "difficulty", "ground truth", "leading hypothesis", "status", ""):
        table.add_column(col, overflow="fold")
    for row in rows:
        mark = "[green]✔[/]" if row["match"] else "[red]✘ " + ", ".join(row["contradictions"]) + "[/]"
        table.add_row(row["id"], row["difficulty"], row["expected"], row["leading"], row["status"], mark)
    out = console or Console()
    out.print(table)
    matched = sum(1 for r in rows if r["match"])
    out.print(f"{matched}/{len(rows)} incidents lead with their ground-truth hypothesis.")
