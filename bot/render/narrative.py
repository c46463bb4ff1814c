"""A narrative (generated or written by the rules) for the terminal, markdown and JSON, always with its label."""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.text import Text

from bot.assist.narrate import Narrative


def narrative_panel(narrative: Narrative, heading: str = "Summary") -> Group:
    """The text in a panel, and under it (whole, however long) who wrote it: the model, or the rules and why."""
    title = f"{heading} (generated)" if narrative.generated else heading
    return Group(Panel(Text(narrative.text), title=Text(title), expand=True,
                       border_style="magenta" if narrative.generated else "blue"),
                 Text(narrative.label, style="dim"))


def print_narrative(narrative: Narrative, console: Console | None = None, heading: str = "Summary") -> None:
    (console or Console()).print(narrative_panel(narrative, heading))


def narrative_markdown(narrative: Narrative) -> str:
    return f"## Summary\n\n{narrative.text}\n\n_{narrative.label}_\n"

