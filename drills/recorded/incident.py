"""Recorded incidents: a folder with incident.yaml and artifacts/ holding raw captures."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from collectors.detect import detect_kind
from collectors.flight_dumps import bundle, is_pickle, rank_of_name
from collectors.models import Artifact, ArtifactKind, Missing, Target
from collectors.yaml_safe import safe_load

INCIDENT_DIR = Path(__file__).parents[1] / "incidents"
INDEX_NAMES = ("index.yaml", "index.yml")
SERIES_DIR = "series"  # range series for the chart, beside the evidence (docs/drills.md, "Chart series")
MAX_ARTIFACT_BYTES = 20 * 1024 * 1024


class IncidentError(ValueError):
    """A recorded incident that cannot be read; the message says what was expected."""


class GroundTruth(BaseModel):
    model_config = ConfigDict(extra="forbid")

    playbook: str
    hypothesis: str
    explanation: str


class IncidentMeta(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str
    title: str
    page: str = Field(description="The alert or complaint exactly as on-call saw it.")
    target: Target
    captured_at: datetime
    difficulty: Literal["easy", "medium", "hard"]
    tags: list[str] = Field(default_factory=list)
    sources: list[str] = Field(default_factory=list)
    ground_truth: GroundTruth | None = Field(
        None, description="The real cause; absent for a fresh recording until someone says what it was.")
    missing: list[Missing] = Field(default_factory=list, description="Sources the recording could not read.")
    must_not_confirm: list[str] = Field(
        default_factory=list, description="playbook/hypothesis ids a correct triage must not confirm.")
    also_true: list[str] = Field(
        default_factory=list, description="playbook/hypothesis ids the story makes true beside the ground truth "
        "(a contributing cause the same evidence confirms, such as the CPU throttling that stretched a model load): "
        "a replay may confirm them without contradicting the truth.")
    source: list[str] = Field(default_factory=list, description="Seed scenarios or references it is built from.")
    symptoms: list[str] = Field(
        default_factory=list, description="Playbooks the triage ran (an alert's name can force one whose trigger "
        "does not fire); a replay forces them too, so a saved triage replays to the report on-call saw.")
    leads: list[str] = Field(
        default_factory=list, description="The symptoms of the alert that started a saved triage: they lead its "
        "report, as they led the live one (playbooks.pipeline.alert_leads).")


class IndexEntry(BaseModel):
    """How one artifact was captured. `file` is absent when the source was unavailable."""

    model_config = ConfigDict(extra="forbid")

    file: str | None = None
    kind: ArtifactKind | None = None  # detected from the content when absent
    subject: str = ""
    source: str = "recording"
    command: str = ""
    captured_at: datetime | None = None
    unavailable: str | None = None
    first_line: int | None = Field(None, ge=1, description="The line of its paste the file starts at, when it is a "
                                   "piece cut from a longer paste: citations count the paste's lines.")


class Incident(BaseModel):
    path: str
    meta: IncidentMeta
    artifacts: list[Artifact]
    # Range answers kept for the chart only: never evidence, so drills never reveal them and replays never read
    # facts from them.
    series: list[Artifact] = Field(default_factory=list)

    def chart_inputs(self) -> list[Artifact]:
        """What the chart code looks in, as live triage hands it its fetched artifacts: the evidence, then the
        recorded chart series."""
        return [*self.artifacts, *self.series]


def _read_yaml(path: Path) -> object:
    try:
        return safe_load(path.read_text(encoding="utf-8"))
    except OSError as err:
        raise IncidentError(f"{path}: cannot read ({err.strerror or err})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise IncidentError(f"{path}: not valid YAML ({str(err).splitlines()[0]})") from None


def _validation_message(path: Path, err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "document"
    return f"{path}: {where}: {first['msg']}"


def load_incident(folder: Path) -> Incident:
    """Read a recorded incident; files in artifacts/ missing from the index are detected by content."""
    folder = Path(folder)
    meta_path = folder / "incident.yaml"
    if not meta_path.is_file():
        raise IncidentError(f"{folder}: not a recorded incident (expected incident.yaml and artifacts/)")
    try:
        meta = IncidentMeta.model_validate(_read_yaml(meta_path))
    except ValidationError as err:
        raise IncidentError(_validation_message(meta_path, err)) from None
    artifacts_dir = folder / "artifacts"
    entries = _index(artifacts_dir)
    artifacts: list[Artifact] = []
    listed: set[str] = set()
    dumps = _flight_recorder_dumps(artifacts_dir)
    for entry in entries:
        if entry.file is None:
            if entry.kind is None:
                raise IncidentError(f"{artifacts_dir}: an entry without a file needs a kind and a reason")
            artifacts.append(Artifact(id=f"{entry.kind}:{entry.subject}", kind=entry.kind, subject=entry.subject,
                                      source=entry.source, command=entry.command,
                                      captured_at=entry.captured_at or meta.captured_at,
                                      unavailable=entry.unavailable or "not captured"))
            continue
        listed.add(entry.file)
        if entry.file in dumps:
            continue  # read with the other ranks' dumps, below
        content = _read_artifact(artifacts_dir / entry.file)
        kind = entry.kind or detect_kind(content)
        if kind is None:
            raise IncidentError(f"{artifacts_dir / entry.file}: kind not given and not recognisable")
        artifacts.append(Artifact(id=entry.file, kind=kind, subject=entry.subject, source=entry.source,
                                  command=entry.command, captured_at=entry.captured_at or meta.captured_at,
                                  content=content, first_line=entry.first_line or 1))
    if dumps:
        artifacts.append(_dump_artifact(dumps, artifacts_dir, meta.captured_at))
    for path in sorted(artifacts_dir.glob("*")) if artifacts_dir.is_dir() else []:
        if path.is_file() and path.name not in listed and path.name not in INDEX_NAMES and path.name not in dumps:
            content = _read_artifact(path)
            kind = detect_kind(content)
            if kind is not None:
                artifacts.append(Artifact(id=path.name, kind=kind, source="recording", content=content,
                                          captured_at=meta.captured_at))
    return Incident(path=str(folder), meta=meta, artifacts=artifacts, series=_series(folder / SERIES_DIR, meta))


def _series(series_dir: Path, meta: IncidentMeta) -> list[Artifact]:
    """The chart series in series/: each file a Prometheus range API answer, listed in series/index.yaml with the
    PromQL that produced it (the renderer matches a series by its artifact id or by what its query reads)."""
    out: list[Artifact] = []
    for entry in _index(series_dir):
        if entry.file is None or (entry.kind or ArtifactKind.PROMETHEUS_QUERY) != ArtifactKind.PROMETHEUS_QUERY:
            raise IncidentError(f"{series_dir}: a chart series entry needs a file and is a prometheus-query")
        out.append(Artifact(id=entry.file, kind=ArtifactKind.PROMETHEUS_QUERY, subject=entry.subject,
                            source=entry.source, command=entry.command,
                            captured_at=entry.captured_at or meta.captured_at,
                            content=_read_artifact(series_dir / entry.file)))
    return out


def _flight_recorder_dumps(artifacts_dir: Path) -> dict[str, bytes]:
    """Flight Recorder pickles dropped into artifacts/ as PyTorch wrote them (nccl_trace_rank_<r>), by name."""
    found: dict[str, bytes] = {}
    for path in sorted(artifacts_dir.glob("*")) if artifacts_dir.is_dir() else []:
        if path.is_file() and rank_of_name(path.name) is not None:
            try:
                with path.open("rb") as handle:
                    head = handle.read(3)
                if is_pickle(head + b"\0"):
                    found[path.name] = _read_bytes(path)
            except OSError as err:
                raise IncidentError(f"{path}: cannot read ({err.strerror or err})") from None
    return found


def _dump_artifact(dumps: dict[str, bytes], artifacts_dir: Path, captured_at: datetime) -> Artifact:
    """Every rank's dump as one artifact (the wave front needs them together), loaded with the restricted
    unpickler: a dump that names any class is an error, never run."""
    text, refused = bundle(list(dumps.items()))
    if refused:
        raise IncidentError(f"{artifacts_dir}/{refused[0]}")
    return Artifact(id="flight-recorder", kind=ArtifactKind.FLIGHT_RECORDER, source="recording",
                    command=f"Flight Recorder dumps: {', '.join(sorted(dumps))}", captured_at=captured_at,
                    content=text)


def _index(artifacts_dir: Path) -> list[IndexEntry]:
    for name in INDEX_NAMES:
        path = artifacts_dir / name
        if path.is_file():
            raw = _read_yaml(path)
            if not isinstance(raw, list):
                raise IncidentError(f"{path}: expected a list of artifact entries")
            try:
                return [IndexEntry.model_validate(item) for item in raw]
            except ValidationError as err:
                raise IncidentError(_validation_message(path, err)) from None
    return []


def _read_artifact(path: Path) -> str:
    return _read_bytes(path).decode("utf-8", errors="replace")


def _read_bytes(path: Path) -> bytes:
    try:
        if path.stat().st_size > MAX_ARTIFACT_BYTES:
            raise IncidentError(f"{path}: larger than {MAX_ARTIFACT_BYTES // (1024 * 1024)} MiB")
        return path.read_bytes()
    except OSError as err:
        raise IncidentError(f"{path}: cannot read ({err.strerror or err})") from None


def incident_dirs(root: Path = INCIDENT_DIR) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "incident.yaml").is_file()) if root.is_dir() else []
