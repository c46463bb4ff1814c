"""The triagebot command line. User mistakes get one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from bot.cli import flags
from bot.cli import live as live_cli
from bot.cli.arguments import (
    add_ask_arguments,
    add_drill_arguments,
    add_eval_arguments,
    add_interview_arguments,
)
from bot.cli.errors import LiveUsageError, OutputError, UsageError
from bot.cli.flags import FORMATS, add_explain_flag, add_redact_flag, add_summary_flag
from bot.cli.memory import add_memory_parsers, cmd_digest, cmd_postmortem
from collectors.kinds import ArtifactKind
from playbooks.files import playbook_files
from playbooks.problems import PlaybookError

# Each command imports what it needs when it runs: `--version` and a one-line `analyze` must not pay for the
# Kubernetes client, the Slack app or the drills.


class _HelpFormatter(argparse.HelpFormatter):
    """Help wrapped at spaces only: argparse's default breaks at hyphens too, splitting ids such as error-rate."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


class _Parser(argparse.ArgumentParser):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="triagebot", description="Evidence-first triage for GPU Kubernetes clusters.")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    analyze = sub.add_parser("analyze", help="triage pasted evidence from files or stdin (-)")
    analyze.add_argument("files", nargs="+", metavar="FILE")
    analyze.add_argument("--format", choices=FORMATS, default="text")
    analyze.add_argument("--kind", choices=[str(k) for k in ArtifactKind], help="skip detection: all input is KIND")
    analyze.add_argument("--symptom", action="append", default=[], metavar="PLAYBOOK",
                         help="run this playbook whatever its trigger says (repeatable): "
                              + ", ".join(p.stem for p in playbook_files()))
    analyze.add_argument("-n", "--namespace")
    analyze.add_argument("--service")
    add_summary_flag(analyze)
    add_redact_flag(analyze)
    add_explain_flag(analyze)
    flags.add_recall_flag(analyze)

    rp = sub.add_parser("replay", help="replay a recorded incident through the playbooks")
    rp.add_argument("incident", nargs="?", metavar="INCIDENT_DIR")
    rp.add_argument("--all", action="store_true", help="replay every bundled incident and compare to ground truth")
    rp.add_argument("--format", choices=FORMATS, default="text")
    rp.add_argument("--chart", metavar="PNG", type=Path,
                    help="write the leading hypothesis's chart here, drawn as live triage draws it")
    add_summary_flag(rp)
    add_redact_flag(rp)
    add_explain_flag(rp)

    pb = sub.add_parser("playbooks", help="lint, list or show playbooks")
    pbsub = pb.add_subparsers(dest="action", required=True, parser_class=_Parser)
    lint = pbsub.add_parser("lint", help="check playbook files: schema, CEL, fact names, reachability")
    lint.add_argument("paths", nargs="*", metavar="FILE_OR_DIR")
    pbsub.add_parser("list", help="list playbooks and their hypotheses")
    show = pbsub.add_parser("show", help="show one playbook's tree")
    show.add_argument("id")
    pbsub.add_parser("schema", help="print the playbook JSON Schema")

    live_cli.add_parsers(sub)
    live_cli.add_agent_parser(sub)
    live_cli.add_serve_parser(sub)

    facts = sub.add_parser("facts", help="print the fact vocabulary")
    facts.add_argument("--markdown", action="store_true", help="as docs/facts.md")

    interview = sub.add_parser("interview", help="a mock-interview question, graded against expected points")
    add_interview_arguments(interview)

    drill = sub.add_parser("drill", help="train on a recorded incident: ask for evidence, propose, declare; "
                                         "`drill save INCIDENT` makes a drill of a stored incident")
    add_drill_arguments(drill)

    # --- ask (issue #7): retrieval over playbooks, Xid catalog, question bank and docs ---
    ask = sub.add_parser("ask", help="answer a question from the playbooks, the Xid catalog, the question bank "
                                     "and the docs, citing the passages")
    add_ask_arguments(ask)
    # --- end ask ---

    add_memory_parsers(sub)  # postmortem, digest

    ev = sub.add_parser("eval", help="accuracy over real-world cases (tests/realworld): per symptom, optionally "
                                     "written as docs/accuracy.md")
    add_eval_arguments(ev)
    return parser


def version() -> str:
    from bot import __version__

    return __version__

def cmd_analyze(args: argparse.Namespace) -> int:
    _no_collection_at_exit()
    from bot.cli.analyze import cmd_analyze as run

    return run(args)


def cmd_replay(args: argparse.Namespace) -> int:
    _no_collection_at_exit()
    from bot.cli.analyze import cmd_replay as run

    return run(args)


_exit_freeze: list[bool] = []


def _no_collection_at_exit() -> None:
    """A report command's process ends once it has printed, and the interpreter's shutdown then runs full garbage
    collections over every object left: the modules, classes, catalogs and compiled patterns of the start, about
    50,000 objects, a tenth of a one-line `analyze`'s CPU (issue #27) to find a few hundred cycles whose memory
    the operating system takes back anyway. Freezing at exit leaves them out (gc.freeze: objects frozen are
    never collected again); what the command writes is flushed before (its own atexit handlers, logging's and
    the standard streams' flush run regardless). Registered at exit only, so a test that calls main() in
    process keeps collecting as usual until the test run itself ends."""
    if not _exit_freeze:
        _exit_freeze.append(True)
        atexit.register(gc.freeze)


def cmd_playbooks(args: argparse.Namespace) -> int:
    from bot.cli import playbooks as playbook_cmds
    return playbook_cmds.run(args)


def cmd_facts(args: argparse.Namespace) -> int:
    from collectors.vocabulary import VOCABULARY, render_markdown

    if args.markdown:
        sys.stdout.write(render_markdown())
    else:
        for spec in VOCABULARY.values():
            sys.stdout.write(f"{spec.name:40} {spec.type:10} {spec.meaning}\n")
    return 0


def cmd_interview(args: argparse.Namespace) -> int:
    from rich.console import Console

    from bot.assist.grade import model_grader
    from bot.assist.llm import assistant_from
    from bot.cli.interview import InterviewUsageError, run_interview
    from bot.config import ConfigError, load_settings

    try:
        grader = model_grader(assistant_from(load_settings()))
    except ConfigError as err:
        raise UsageError(str(err)) from None
    try:
        return run_interview(args, Console(), input, grader=grader)
    except InterviewUsageError as err:
        raise UsageError(str(err)) from None



def cmd_drill(args: argparse.Namespace) -> int:
    from rich.console import Console

    from bot.cli.drill import DrillUsageError, run_drill

    try:
        return run_drill(args, Console(), input)
    except DrillUsageError as err:
        raise UsageError(str(err)) from None


# --- ask (issue #7) ---
def cmd_ask(args: argparse.Namespace) -> int:
    from bot.cli.ask import AskUsageError, run_ask

    try:
        return run_ask(args)
    except AskUsageError as err:
        raise UsageError(str(err)) from None
# --- end ask ---


def cmd_eval(args: argparse.Namespace) -> int:
    from bot.cli.evaluate import EvalUsageError, run_eval

    try:
        return run_eval(args)
    except EvalUsageError as err:
        raise UsageError(str(err)) from None


COMMANDS = {"analyze": cmd_analyze, "replay": cmd_replay, "playbooks": cmd_playbooks, "facts": cmd_facts,
            "interview": cmd_interview, "triage": live_cli.cmd_triage, "record": live_cli.cmd_record,
            "agent": live_cli.cmd_agent, "serve": live_cli.cmd_serve, "drill": cmd_drill,
            "ask": cmd_ask, "eval": cmd_eval, "postmortem": cmd_postmortem, "digest": cmd_digest}


# Made before memory runs out and written with os.write, so saying it allocates nothing that could fail again.
_OUT_OF_MEMORY = (b"triagebot: error: out of memory: this input needs more memory than the process may use; "
                  b"analyse fewer or smaller files at a time (split a big log into parts, e.g. split -l 200000)\n")


def main(argv: Sequence[str] | None = None) -> int:
    # Start-up makes tens of thousands of long-lived objects (modules, classes, catalogs, compiled patterns), and
    # with the collector's default first threshold (700) its 120 passes were a tenth of a one-line `analyze`'s
    # CPU; collecting after every 10,000 allocations instead makes it 17 passes and a third of the time.
    gc.set_threshold(10_000, *gc.get_threshold()[1:])
    try:
        return _main(argv)
    except MemoryError:
        pass  # leaving the handler drops the exception's traceback, and with it the frames that hold the input
    with contextlib.suppress(OSError):
        os.write(2, _OUT_OF_MEMORY)
    return 2


def _main(argv: Sequence[str] | None) -> int:
    try:
        parser = build_parser()
        args = parser.parse_args(argv)
        if args.version:
            sys.stdout.write(f"triagebot {version()}\n")
            return 0
        if args.command is None:
            raise UsageError(f"a command is required: {', '.join(COMMANDS)} (triagebot --help explains each)")
        return COMMANDS[args.command](args)
    except (UsageError, LiveUsageError, OutputError) as err:
        sys.stderr.write(f"triagebot: error: {err}\n")
        return 2
    except PlaybookError as err:
        sys.stderr.write(f"triagebot: error: broken playbook: {err}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0

