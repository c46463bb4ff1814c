"""Writing a report where the command line asked for it: text, markdown or JSON, with an optional narrative."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from bot.cli.errors import OutputError
from bot.render.markdown import render_markdown
from bot.render.terminal import render_terminal
from playbooks.report import Report

if TYPE_CHECKING:
    from bot.assist.narrate import Narrative


def emit(report: Report, fmt: str, *, summary: bool = False, explain: bool = False) -> None:
    """The report in `fmt`; with `summary`, followed by its narrative (a model's, when one is configured).

    `explain` adds the trace to the terminal report; JSON always carries it (`trace`), markdown ends with it.
    """
    narrative = _narrative(report) if summary else None
    if fmt == "json":
        if narrative is not None:
            from bot.render.narrative import report_json_with

            sys.stdout.write(report_json_with(report, narrative) + "\n")
        else:
            sys.stdout.write(report.to_json() + "\n")
    elif fmt == "markdown":
        sys.stdout.write(render_markdown(report))
        if narrative is not None:
            from bot.render.narrative import narrative_markdown

            sys.stdout.write("\n" + narrative_markdown(narrative))
    else:
        render_terminal(report, explain=explain)
        if narrative is not None:
            from bot.render.narrative import print_narrative

            print_narrative(narrative)


def _narrative(report: Report) -> Narrative:
    from bot.assist.llm import assistant_from
    from bot.assist.narrate import narrate_report
    from bot.config import ConfigError, load_settings

    try:
        assistant = assistant_from(load_settings())
    except ConfigError as err:
        raise OutputError(str(err)) from None
    return narrate_report(report, assistant)
