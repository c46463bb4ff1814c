"""`triagebot analyze` and `triagebot replay`: a report from pasted evidence or from a recorded incident."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from bot.cli.errors import UsageError
from bot.cli.report_output import emit
from collectors.flight_dumps import bundle, is_pickle, rank_of_name
from collectors.models import Artifact, ArtifactKind
from collectors.paste import PasteError, artifacts_from_text
from collectors.redact import redact_json
from playbooks.pipeline import analyse
from playbooks.report import Report, Target

if TYPE_CHECKING:
    from drills.recorded.incident import Incident

MAX_INPUT_BYTES = 64 * 1024 * 1024


def redacted(report: Report, args: argparse.Namespace) -> Report:
    """The report as it may be printed: every string in it (excerpts, commands, facts) with secrets masked,
    unless --no-redact. The report, not the input, is redacted: it is all the CLI prints, and it is small where
    the input can be 200,000 lines."""
    if getattr(args, "no_redact", False):
        return report
    return Report.model_validate(redact_json(report.model_dump(mode="json")))


def check_symptoms(symptoms: list[str]) -> None:
    """--symptom names a playbook; a name that is none is a usage error listing the valid ones."""
    from playbooks.pipeline import default_playbooks

    valid = sorted(p.spec.id for p in default_playbooks())
    unknown = [s for s in symptoms if s not in valid]
    if unknown:
        raise UsageError(f"--symptom {unknown[0]}: no such playbook; expected one of: {', '.join(valid)}")


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
         summary=args.summary, explain=args.explain, recall=getattr(args, "recall", False))
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
    from drills.recorded.incident import IncidentError, incident_dirs, load_incident
    from drills.recorded.replay import replay, summary_rows

    if args.all:
        rows = summary_rows(incident_dirs())
        if args.format == "json":
            import json

            sys.stdout.write(json.dumps(rows, indent=2) + "\n")
        else:
            from bot.render.drills.replay_table import render_summary

            render_summary(rows)
        return 0 if all(r["match"] for r in rows) else 1
    if not args.incident:
        raise UsageError("replay needs INCIDENT_DIR or --all")
    try:
        incident = load_incident(Path(args.incident))
    except IncidentError as err:
        raise UsageError(str(err)) from None
    report = replay(incident)
    emit(redacted(report, args), args.format, summary=args.summary, explain=args.explain)
    if getattr(args, "chart", None) is not None:
        _write_chart(incident, report, args.chart)
    return 0


def _write_chart(incident: Incident, report: Report, path: Path) -> None:
    """The chart live triage would have posted, into `path`; a note on stderr says where, or why there is none."""
    from bot.render.drills.recorded_chart import recorded_chart

    png = recorded_chart(incident, report)
    if png is None:
        sys.stderr.write("no chart: the leading hypothesis declares no series, or the recording has none\n")
        return
    try:
        path.write_bytes(png)
    except OSError as err:
        raise UsageError(f"cannot write the chart to {path}: {err.strerror or err}") from None
    sys.stderr.write(f"chart: {path}\n")


