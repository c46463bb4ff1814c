"""`triagebot ask "QUESTION..."`: search the playbooks, the Xid catalog, the question bank and the docs.

The model (if one is configured) comes from the settings, like every other use of it; `--no-model` only
searches. A bad question or setting is a one-line error (exit 2); no match is an answer, not an error (exit 0).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from bot.cli.arguments import MAX_TOP_K

if TYPE_CHECKING:
    from rich.console import Console



class AskUsageError(ValueError):
    """A mistake in the question or the settings; the CLI prints it in one line, exit 2."""


def run_ask(args: argparse.Namespace, console: Console | None = None) -> int:
    # Imported here: langchain and the retriever cost a few hundred milliseconds that other commands never pay.
    from bot.assist.ask import QuestionError, answer, check_question
    from bot.assist.llm import NO_MODEL, assistant_from
    from bot.assist.search import index_for
    from bot.config import ConfigError, load_settings
    from bot.render.ask import render_ask_json, render_ask_markdown, render_ask_terminal

    question = " ".join(args.question)
    try:
        check_question(question)
    except QuestionError as err:
        raise AskUsageError(str(err)) from None
    if args.top_k is not None and not 1 <= args.top_k <= MAX_TOP_K:
        raise AskUsageError(f"--top-k must be between 1 and {MAX_TOP_K}, not {args.top_k}")
    try:
        settings = load_settings()
        assistant = NO_MODEL if args.no_model else assistant_from(settings)
        index = index_for(settings)
    except ConfigError as err:
        raise AskUsageError(str(err)) from None
    result = answer(question, index, assistant, args.top_k or settings.ask_top_k)
    if args.format == "json":
        sys.stdout.write(render_ask_json(result))
    elif args.format == "markdown":
        sys.stdout.write(render_ask_markdown(result))
    else:
        render_ask_terminal(result, console)
    return 0
