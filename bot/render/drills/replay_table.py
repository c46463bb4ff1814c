"""The recorded incidents replayed against their ground truth, one incident a line.

Not a table: a table fits its columns to the terminal by folding every id mid-word, and an incident id is what a
reader copies next (`triagebot replay drills/incidents/ID`). Each line goes out whole for the terminal to fold.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text


def summary_lines(rows: list[dict[str, Any]]) -> list[Text]:
    out = [Text("Recorded incidents replayed through the playbooks", style="bold")]
    for row in rows:
        line = Text()
        line.append("✔ " if row["match"] else "✘ ", style="green" if row["match"] else "red")
        line.append(str(row["id"]), style="bold")
        line.append(f" ({row['difficulty']}): ")
        if row["match"]:
            line.append(f"{row['leading']} {row['status']}")
        else:
            line.append(f"expected {row['expected']}, led by {row['leading'] or 'nothing'} {row['status']}".rstrip())
            if row["contradictions"]:
                line.append(f"; {', '.join(row['contradictions'])}", style="red")
        out.append(line)
    matched = sum(1 for r in rows if r["match"])
    out.append(Text(f"{matched}/{len(rows)} incidents lead with their ground-truth hypothesis."))
    return out


def render_summary(rows: list[dict[str, Any]], console: Console | None = None) -> None:
    out = console or Console()
    for line in summary_lines(rows):
        out.print(line, soft_wrap=True, highlight=False)
