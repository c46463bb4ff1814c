"""Writing artifacts in the recorded-incident format, so a live triage can be replayed and drilled."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Literal

import yaml

from collectors.models import Artifact, Missing, Target
from drills.recorded.incident import GroundTruth, IncidentMeta, IndexEntry

ALERT_FILE = "alert.json"  # the notification that opened the incident, beside incident.yaml (docs/incidents.md)


class RecordError(ValueError):
    """The output folder cannot be used."""


def write_incident(folder: Path, artifacts: list[Artifact], target: Target, captured_at: datetime, *,
                   page: str, title: str, missing: list[Missing], ground_truth: GroundTruth | None = None,
                   difficulty: Literal["easy", "medium", "hard"] = "medium", tags: list[str] | None = None,
                   symptoms: list[str] | None = None, leads: list[str] | None = None,
                   alert: dict[str, object] | None = None) -> Path:
    """Write incident.yaml and artifacts/ (one file per artifact, named by its id) into a new folder; `alert`, the
    Alertmanager notification that opened the incident, goes beside them as alert.json (kept, not replayed)."""
    folder = Path(folder)
    if folder.exists() and any(folder.iterdir()):
        raise RecordError(f"{folder} exists and is not empty; choose a new folder")
    files = folder / "artifacts"
    files.mkdir(parents=True, exist_ok=True)
    entries: list[IndexEntry] = []
    for artifact in artifacts:
        if artifact.unavailable is not None:
            continue
        if "/" in artifact.id or artifact.id in ("", ".", "..", "index.yaml"):
            raise RecordError(f"artifact id {artifact.id!r} cannot be a file name")
        # newline="" keeps the bytes exactly as captured, so a replay cites the same lines.
        with open(files / artifact.id, "w", encoding="utf-8", newline="") as handle:
            handle.write(artifact.content)
        entries.append(IndexEntry(file=artifact.id, kind=artifact.kind, subject=artifact.subject,
                                  source=artifact.source, command=artifact.command, captured_at=artifact.captured_at,
                                  first_line=artifact.first_line if artifact.first_line > 1 else None))
    meta = IncidentMeta(id=folder.name, title=title, page=page, target=target, captured_at=captured_at,
                        difficulty=difficulty, tags=tags or [], sources=sorted({str(a.kind) for a in artifacts}),
                        ground_truth=ground_truth, missing=missing, symptoms=symptoms or [], leads=leads or [])
    if alert is not None:
        (folder / ALERT_FILE).write_text(json.dumps(alert, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    # incident.yaml last: a folder is listed as an incident once it has one, so a drill catalog read while this
    # runs never sees a half-written incident.
    _dump(files / "index.yaml", [e.model_dump(mode="json", exclude_none=True) for e in entries])
    _dump(folder / "incident.yaml", meta.model_dump(mode="json", exclude_none=True))
    return folder


def _dump(path: Path, data: object) -> None:
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120), encoding="utf-8")
