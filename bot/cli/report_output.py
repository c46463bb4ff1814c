"""Writing a report where the command line asked for it: text, markdown or JSON, with an optional narrative."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from bot.cli.errors import OutputError
from playbooks.report import Report

if TYPE_CHECKING:
    from bot.assist.narrate import Narrative


def emit(report: Report, fmt: str, *, summary: bool = False, explain: bool = False, recall: bool = False) -> None:
    """The report in `fmt`; with `summary`, followed by its narrative (a model's, when one is configured); with
    `recall`, followed by what came back from the bot's database (bot/cli/recall.py).

    `explain` adds the trace to the terminal report; JSON always carries it (`trace`), markdown ends with it.
    """
    narrative = _narrative(report) if summary else None
    recurrence = None
    if recall:  # the database and the recurrence words are loaded only when asked for
        from bot.cli.recall import recall_for_report

        recurrence = recall_for_report(report)
    if fmt == "json" and narrative is None and recurrence is None:
        sys.stdout.write(report.to_json() + "\n")
    elif fmt == "json":
        data = json.loads(report.to_json())
        if narrative is not None:
            data["narrative"] = {**narrative.model_dump(), "label": narrative.label}
        if recurrence is not None:
            data["recurrence"] = recurrence.to_json()
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    elif fmt == "markdown":
        from bot.render.markdown import render_markdown  # each format loads its own renderer (JSON needs none)

        sys.stdout.write(render_markdown(report))
        if narrative is not None:
            from bot.render.narrative import narrative_markdown

            sys.stdout.write("\n" + narrative_markdown(narrative))
        if recurrence:
            from bot.render.memory.recurrence import recurrence_markdown

            sys.stdout.write("\n" + recurrence_markdown(recurrence))
    else:
        from bot.render.terminal import render_terminal  # rich, for the terminal only

        render_terminal(report, explain=explain)
        if narrative is not None:
            from bot.render.narrative import print_narrative

            print_narrative(narrative)
        if recurrence is not None:
            from bot.render.memory.recurrence import print_recurrence

            print_recurrence(recurrence)


def _narrative(report: Report) -> Narrative:
    from bot.assist.llm import assistant_from
    from bot.assist.narrate import narrate_report
    from bot.config import ConfigError, load_settings

    try:
        assistant = assistant_from(load_settings())
    except ConfigError as err:
        raise OutputError(str(err)) from None
    return narrate_report(report, assistant)
