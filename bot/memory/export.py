"""Labelled incidents as candidate regression cases: `triagebot eval --production --export DIR`.

Each labelled run (its latest label, as `eval --production` counts it) becomes a folder in the tests/realworld
layout, `DIR/<playbook>/prod-incident-<id>-run-<run>/`: `evidence.txt` holds the run's stored artifacts (redacted
when stored, and again here) as the report's evidence file shows them, and `case.yaml` expects the label as the
leader. `triagebot eval DIR` reads the folder as it reads the real-world corpus. A label that names no hypothesis
(free text) or a run that read nothing has no case; the export says which and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.delivery.words import evidence_text
from bot.memory.labels import labels_since
from bot.memory.production import Label, latest_per_run
from bot.store.models import TriageRun
from collectors.models import Artifact, artifact_adapter
from collectors.redact import redact


@dataclass(frozen=True)
class CandidateCase:
    folder: str  # "<playbook>/prod-incident-<id>-run-<run>"
    case: dict[str, Any]  # case.yaml
    evidence: str


@dataclass(frozen=True)
class Skipped:
    run_id: int
    why: str


def _artifacts(run: TriageRun) -> list[Artifact]:
    out: list[Artifact] = []
    for raw in run.artifacts or []:
        try:
            artifact = artifact_adapter().validate_python(raw)
        except ValidationError:
            continue  # stored by an older version in another shape: the rest still make a case
        if artifact.unavailable is None and artifact.content.strip():
            # Stored runs are redacted already; again, for rows stored before a rule existed.
            out.append(redact(artifact))
    return out


def _case(label: Label, run: TriageRun, leader: str) -> dict[str, Any]:
    said = label.said or "no verdict"
    concluded = (f"{label.by} confirmed the report's verdict, {leader}, in Slack on {label.at:%Y-%m-%d}."
                 if label.right else
                 f"{label.by} said in Slack on {label.at:%Y-%m-%d} that the cause was {leader}; the report led "
                 f"with {said}.")
    return {"source": f"triagebot production: incident {run.incident_id}, triage run {run.id} "
                      f"({run.started_at:%Y-%m-%d %H:%M} UTC)",
            "where": "the run's stored artifacts, redacted, as its evidence file",
            "concluded": concluded, "negative": False,
            "expect": {"symptoms": [leader.split("/", 1)[0]], "leader": leader}}


def candidate_cases(session: Session, since: datetime) -> tuple[list[CandidateCase], list[Skipped]]:
    """Every run labelled since `since`, as a case, or why it cannot be one."""
    labels = sorted(latest_per_run(labels_since(session, since)), key=lambda lb: lb.run_id)
    runs = {r.id: r for r in session.scalars(select(TriageRun).where(TriageRun.id.in_([lb.run_id for lb in labels])))}
    cases: list[CandidateCase] = []
    skipped: list[Skipped] = []
    for label in labels:
        run = runs.get(label.run_id)
        leader = label.said if label.right else label.was
        if run is None:
            continue
        if leader is None:
            skipped.append(Skipped(run.id, "the label names no hypothesis (free text, or a verdict of none)"))
            continue
        artifacts = _artifacts(run)
        if not artifacts:
            skipped.append(Skipped(run.id, "the run stored no evidence that was read"))
            continue
        cases.append(CandidateCase(folder=f"{leader.split('/', 1)[0]}/prod-incident-{run.incident_id}-run-{run.id}",
                                   case=_case(label, run, leader), evidence=evidence_text(artifacts)))
    return cases, skipped


def write_cases(cases: list[CandidateCase], root: Path) -> list[Path]:
    """Write each case's folder under `root` (a folder written before is replaced: the latest label wins)."""
    written: list[Path] = []
    for case in cases:
        folder = root / case.folder
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "evidence.txt").write_text(case.evidence, encoding="utf-8")
        (folder / "case.yaml").write_text(yaml.safe_dump(case.case, sort_keys=False, allow_unicode=True, width=100),
                                          encoding="utf-8")
        written.append(folder)
    return written
