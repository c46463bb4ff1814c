"""The triagebot command line. User mistakes get one line on stderr and exit code 2."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from bot.cli import live as live_cli
from bot.cli.report_output import OutputError, add_explain_flag, emit
from collectors.flight_dumps import bundle, is_pickle, rank_of_name
from collectors.models import Artifact, ArtifactKind
from collectors.paste import PasteError, artifacts_from_text
from collectors.redact import redact_json
from drills.incident import IncidentError, incident_dirs, load_incident
from drills.replay import replay, summary_rows
from playbooks.loader import PlaybookError
from playbooks.pipeline import analyse
from playbooks.report import Report, Target

if TYPE_CHECKING:
    pass

FORMATS = ("text", "json", "markdown")
MAX_INPUT_BYTES = 64 * 1024 * 1024


class UsageError(Exception):
    """A mistake by the user: reported in one line, exit code 2."""


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
                              + ", ".join(bundled_playbook_ids()))
    analyze.add_argument("-n", "--namespace")
    analyze.add_argument("--service")
    add_summary_flag(analyze)
    add_redact_flag(analyze)
    add_explain_flag(analyze)

    rp = sub.add_parser("replay", help="replay a recorded incident through the playbooks")
    rp.add_argument("incident", nargs="?", metavar="INCIDENT_DIR")
    rp.add_argument("--all", action="store_true", help="replay every bundled incident and compare to ground truth")
    rp.add_argument("--format", choices=FORMATS, default="text")
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

    from bot.cli.interview import add_arguments as interview_arguments

    interview = sub.add_parser("interview", help="a mock-interview question, graded against expected points")
    interview_arguments(interview)

    from bot.cli.drill import add_arguments as drill_arguments

    drill = sub.add_parser("drill", help="train on a recorded incident: ask for evidence, propose, declare; "
                                         "`drill save INCIDENT` makes a drill of a stored incident")
    drill_arguments(drill)

    # --- ask (issue #7): retrieval over playbooks, Xid catalog, question bank and docs ---
    from bot.cli.ask import add_arguments as ask_arguments

    ask = sub.add_parser("ask", help="answer a question from the playbooks, the Xid catalog, the question bank "
                                     "and the docs, citing the passages")
    ask_arguments(ask)
    # --- end ask ---

    from bot.cli.evaluate import add_arguments as eval_arguments

    ev = sub.add_parser("eval", help="accuracy over real-world cases (tests/realworld): per symptom, optionally "
                                     "written as docs/accuracy.md")
    eval_arguments(ev)
    return parser


def add_summary_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--summary", action="store_true",
                        help="add a short narrative: the configured model's (checked), else the rules'")


def add_redact_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-redact", action="store_true",
                        help="print secrets found in the evidence as they are (local use only; redacted by default)")


def redacted(report: Report, args: argparse.Namespace) -> Report:
    """The report as it may be printed: every string in it (excerpts, commands, facts) with secrets masked,
    unless --no-redact. The report, not the input, is redacted: it is all the CLI prints, and it is small where
    the input can be 200,000 lines."""
    if getattr(args, "no_redact", False):
        return report
    return Report.model_validate(redact_json(report.model_dump(mode="json")))


def bundled_playbook_ids() -> list[str]:
    """The bundled playbooks' ids, for --help: each file is named after its id (test_cli_usage checks it), and
    listing the folder costs nothing, where loading the playbooks would cost every command its start-up."""
    folder = Path(__file__).resolve().parents[2] / "playbooks"
    return sorted(p.stem for p in folder.glob("*.yaml") if not p.name.startswith("_"))


def check_symptoms(symptoms: list[str]) -> None:
    """--symptom names a playbook; a name that is none is a usage error listing the valid ones."""
    from playbooks.pipeline import default_playbooks

    valid = sorted(p.spec.id for p in default_playbooks())
    unknown = [s for s in symptoms if s not in valid]
    if unknown:
        raise UsageError(f"--symptom {unknown[0]}: no such playbook; expected one of: {', '.join(valid)}")


def version() -> str:
    """The installed distribution's version; in a source checkout that is not installed, pyproject's."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("triagebot")
    except PackageNotFoundError:
        import tomllib

        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        try:
            return str(tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"])
        except (OSError, KeyError, tomllib.TOMLDecodeError):
            return "unknown"


def _read(name: str) -> str:
    """The input as text; over-size (file or stdin alike) and binary input are one-line errors."""
    label = "<stdin>" if name == "-" else name
    if name == "-":
        data = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise UsageError(f"{label} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; paste the relevant part")
        return _text(data, label)
    path = Path(name)
    try:
        if path.is_dir():
            raise UsageError(f"{name} is a folder; for a recorded incident use `triagebot replay {name}`")
        if path.stat().st_size > MAX_INPUT_BYTES:
            raise UsageError(f"{name} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
        return _text(path.read_bytes(), label)
    except OSError as err:
        raise UsageError(f"cannot read {name}: {err.strerror or err}") from None


def _text(data: bytes, label: str) -> str:
    """Decoded text; a stray bad byte is replaced, but input that is mostly not text is refused."""
    head = data[:65536]
    if head and (head.count(0) > len(head) // 100 or
                 head.decode("utf-8", errors="replace").count("\ufffd") > len(head) // 10):
        raise UsageError(f"{label} is not text (binary data); expected pasted evidence such as kubectl output, "
                         "a log or JSON")
    return data.decode("utf-8", errors="replace")


def _dump_files(name: str) -> list[tuple[str, bytes]] | None:
    """Flight Recorder dumps named on the command line: a pickle file, or a folder of per-rank dumps (pickles or
    their JSON form); None when `name` is neither, so it is read as text."""
    if name == "-":
        return None
    path = Path(name)
    try:
        if path.is_dir():
            files = sorted(p for p in path.iterdir() if p.is_file() and rank_of_name(p.name) is not None)
            if not files:
                raise UsageError(f"{name} is a folder with no Flight Recorder dumps (nccl_trace_rank_<r>); "
                                 f"for a recorded incident use `triagebot replay {name}`")
            if sum(p.stat().st_size for p in files) > MAX_INPUT_BYTES:
                raise UsageError(f"the dumps in {name} are larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
            return [(p.name, p.read_bytes()) for p in files]
        with path.open("rb") as handle:
            head = handle.read(3)
        if is_pickle(head + b"\0"):
            if path.stat().st_size > MAX_INPUT_BYTES:
                raise UsageError(f"{name} is larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB")
            return [(path.name, path.read_bytes())]
    except OSError as err:
        raise UsageError(f"cannot read {name}: {err.strerror or err}") from None
    return None


def cmd_analyze(args: argparse.Namespace) -> int:
    check_symptoms(args.symptom)
    target = Target(namespace=args.namespace, service=args.service)
    emit(redacted(analyse(_analyze_inputs(args), target, symptoms=args.symptom), args), args.format,
         summary=args.summary, explain=args.explain)
    return 0


def _analyze_inputs(args: argparse.Namespace) -> Iterator[Artifact]:
    """The artifacts of every input, one file at a time: a file is read only once the one before is parsed, so
    several big files are never all in memory."""
    dumps: list[tuple[str, bytes]] = []
    kind = ArtifactKind(args.kind) if args.kind else None
    for name in args.files:
        label = "<stdin>" if name == "-" else name
        found = _dump_files(name)
        if found is not None:
            dumps += found
            continue
        try:
            pieces = artifacts_from_text(_read(name), label, source="file" if name != "-" else "paste", kind=kind)
        except PasteError as err:
            raise UsageError(str(err)) from None
        pieces.reverse()
        while pieces:  # handed over one by one, so a parsed piece is not kept alive here
            yield pieces.pop()
    if dumps:  # every rank's dump in one artifact: the wave front needs them together
        text, refused = bundle(dumps)
        if refused:
            raise UsageError(refused[0])
        yield Artifact(id="flight-recorder", kind=ArtifactKind.FLIGHT_RECORDER, source="file",
                       command=" ".join(["triagebot analyze", *(n for n in args.files)]), content=text)


def cmd_replay(args: argparse.Namespace) -> int:
    if args.all:
        rows = summary_rows(incident_dirs())
        if args.format == "json":
            import json

            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        else:
            from bot.render.replay_table import render_summary

            render_summary(rows)
        return 0 if all(r["match"] for r in rows) else 1
    if not args.incident:
        raise UsageError("replay needs INCIDENT_DIR or --all")
    try:
        incident = load_incident(Path(args.incident))
    except IncidentError as err:
        raise UsageError(str(err)) from None
    emit(redacted(replay(incident), args), args.format, summary=args.summary, explain=args.explain)
    return 0


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
            "ask": cmd_ask, "eval": cmd_eval}


# Made before memory runs out and written with os.write, so saying it allocates nothing that could fail again.
_OUT_OF_MEMORY = (b"triagebot: error: out of memory: this input needs more memory than the process may use; "
                  b"analyse fewer or smaller files at a time (split a big log into parts, e.g. split -l 200000)\n")


def main(argv: Sequence[str] | None = None) -> int:
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
    except (UsageError, live_cli.LiveUsageError, OutputError) as err:
        sys.stderr.write(f"triagebot: error: {err}\n")
        return 2
    except PlaybookError as err:
        sys.stderr.write(f"triagebot: error: broken playbook: {err}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0

