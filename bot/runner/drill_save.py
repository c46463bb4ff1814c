"""Saving a triage run as a recorded incident that drills can load: the Slack button and `triagebot drill save`."""

from __future__ import annotations

import difflib
import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from bot.config import Settings
from bot.runner import drill_catalog
from bot.runner.runs import Run, load_run
from bot.store import repo
from bot.store.db import make_engine, missing_sqlite_file, session_factory
from bot.store.models import AlertGroup, Feedback, TriageRun
from bot.store.models import Incident as StoredIncident
from collectors.alert_target import ALERT_SOURCE, target_for
from collectors.models import Artifact, Missing
from collectors.redact import redact, redact_json
from drills.hypotheses import index
from drills.recorded.catalog import CatalogError, check_new_id, load_catalog
from drills.recorded.incident import GroundTruth
from drills.recorded.record import RecordError, write_incident
from playbooks.pipeline import default_playbooks


class SaveError(ValueError):
    """A stored incident that cannot be saved as a drill; the message says why, in one line."""


def drills_dir(settings: Settings) -> Path:
    """Where saved drills go: `drills_dir`, else next to the default database (bot.runner.drill_catalog decides)."""
    return drill_catalog.drills_dir(settings)


def ground_truth(session: Session, run: Run) -> GroundTruth | None:
    """From the latest feedback on the incident: the corrected hypothesis, or the confirmed leader."""
    if run.row.incident_id is None:
        return None
    latest = session.scalars(select(Feedback).where(Feedback.incident_id == run.row.incident_id)
                             .order_by(Feedback.created_at.desc(), Feedback.id.desc()).limit(1)).first()
    if latest is None:
        return None
    if latest.verdict == "wrong":
        if not (latest.right_playbook and latest.right_hypothesis):
            return None
        return GroundTruth(playbook=latest.right_playbook, hypothesis=latest.right_hypothesis,
                           explanation=latest.note or f"Corrected in Slack by {latest.user_id}.")
    lead = run.report.leading() if run.report else None
    if lead is None:
        return None
    return GroundTruth(playbook=lead[0].playbook, hypothesis=lead[1].id,
                       explanation=latest.note or f"Confirmed in Slack by {latest.user_id}.")


def no_evidence(run: Run) -> str | None:
    """Why the run cannot be a drill (one line), or None. A run that read nothing from its sources, or only the
    alert that started it, has nothing to triage in a drill or to replay."""
    read = [a for a in run.artifacts() if a.unavailable is None and a.source != ALERT_SOURCE]
    if read:
        return None
    missing = [str(m.get("source", "")) for m in run.row.missing or []]
    why = f" (not read: {', '.join(missing[:3])}{', …' if len(missing) > 3 else ''})" if missing else ""
    return (f"triage run {run.row.id} read no evidence{why}, nothing beyond the alert; triage it again once its "
            "sources answer, then save")


def started_by(session: Session, run: Run) -> dict[str, Any] | None:
    """The Alertmanager notification that opened the run's incident, as stored (redacted at the door)."""
    if run.row.incident_id is None:
        return None
    group = session.scalars(select(AlertGroup).where(AlertGroup.incident_id == run.row.incident_id)
                            .order_by(AlertGroup.id).limit(1)).first()
    payload = group.last_payload if group is not None else None
    return redact_json(payload) if isinstance(payload, dict) else None


def _leads(artifacts: list[Artifact]) -> list[str]:
    """The symptoms of the alert the triage read, which led its report (bot/runner/triage.py run_triage): the replay
    lets them lead too, or it may not reach the leader on-call saw."""
    alert = next((a for a in artifacts if a.source == ALERT_SOURCE and a.unavailable is None), None)
    if alert is None:
        return []
    try:
        body = json.loads(alert.content)
    except ValueError:
        return []
    if not isinstance(body, dict):
        return []
    # As the alert flow chose them (bot/webhook/alert_flow.py): the group's common labels, else its first alert's.
    labels = body.get("commonLabels") or (body.get("alerts") or [{}])[0].get("labels") or {}
    return list(target_for({str(k): str(v) for k, v in labels.items()}).symptoms)


def write_run_as_drill(folder: Path, run: Run, truth: GroundTruth | None, *, page: str, title: str,
                       tags: list[str], alert: dict[str, Any] | None = None) -> Path:
    """The run's artifacts as a recorded incident (Save as drill, and `triagebot drill save`), with `alert`, the
    notification that opened the incident, kept beside them. Raises SaveError for a run with no evidence."""
    problem = no_evidence(run)
    if problem is not None:
        raise SaveError(problem)
    # Stored runs are redacted already; redacting again is cheap and covers rows stored before a rule existed.
    artifacts = [redact(a) for a in run.artifacts()]
    # The playbooks the report ran, forced again on replay: an alert's name may have forced one whose trigger
    # does not fire on the evidence, and without it the replay would not be the report on-call saw.
    return write_incident(folder, artifacts, run.target, run.row.started_at, page=page, title=title,
                          missing=[Missing.model_validate(m) for m in run.row.missing or []],
                          ground_truth=truth, tags=tags, symptoms=run.report.symptoms if run.report else [],
                          leads=_leads(artifacts), alert=alert)


def replace_folder(folder: Path, write: Callable[[], object]) -> None:
    """`write` the folder anew in place of a saved drill (--force): the old one is moved aside first and put back
    if writing fails. Only a recorded incident's folder (one with incident.yaml) is replaced."""
    if not (folder / "incident.yaml").is_file():
        raise SaveError(f"{folder} is not a saved drill (no incident.yaml); --force only replaces saved drills")
    aside = folder.with_name(f".{folder.name}.replaced")
    shutil.rmtree(aside, ignore_errors=True)
    folder.rename(aside)
    try:
        write()
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        aside.rename(folder)
        raise
    shutil.rmtree(aside, ignore_errors=True)


def check_drill_folder(folder: Path) -> None:
    """A saved drill's id is its folder's name: refuse one `triagebot drill` or `/drill start` could not use,
    or that a bundled incident has (CatalogError)."""
    check_new_id(folder.name, load_catalog(None).bundled_ids())


@dataclass(frozen=True)
class Saved:
    folder: Path
    incident_key: str
    run_id: int
    truth: GroundTruth | None
    artifacts: int
    in_catalog: bool  # in the drills dir, so `triagebot drill <folder name>` and `/drill start` find it


def save_stored_incident(settings: Settings, reference: str, output: Path | None, truth_text: str | None,
                         actor: str, force: bool = False) -> Saved:
    """The latest triage run of a stored incident (id or key) as a recorded incident, like Save as drill; `force`
    replaces a drill saved in that folder before."""
    if (missing := missing_sqlite_file(settings.database_url)) is not None:
        raise SaveError(f"no bot database at {missing}; set TRIAGEBOT_DATABASE_URL to the bot's")
    engine = make_engine(settings.database_url)
    try:
        with session_factory(engine).begin() as db:
            incident = _stored_incident(db, reference)
            row = db.scalars(select(TriageRun).where(TriageRun.incident_id == incident.id)
                             .order_by(TriageRun.id.desc()).limit(1)).first()
            if row is None:
                raise SaveError(f"incident {incident.key} has no triage run to save")
            run = load_run(db, str(row.id))
            truth = _given_truth(truth_text, actor) if truth_text else ground_truth(db, run)
            folder = output or drills_dir(settings) / f"incident-{incident.id}"
            check_drill_folder(folder)
            taken = folder.exists() and any(folder.iterdir())
            if taken and not force:
                raise SaveError(f"{folder} exists and is not empty; add --force to replace it")
            when = f"{row.started_at:%Y-%m-%d %H:%M} UTC"
            alert = started_by(db, run)

            def write() -> None:
                write_run_as_drill(folder, run, truth, page=_page(alert, run.title, incident.source, when),
                                   title=f"Saved from the bot's database: {run.title}",
                                   tags=["saved", incident.source], alert=alert)

            if taken:
                replace_folder(folder, write)
            else:
                write()
            repo.audit(db, actor=actor, action="cli.drill_save", target=incident.key,
                       detail={"run": row.id, "folder": str(folder),
                               "ground_truth": f"{truth.playbook}/{truth.hypothesis}" if truth else None})
            return Saved(folder=folder, incident_key=incident.key, run_id=row.id, truth=truth,
                         artifacts=len(run.artifacts()), in_catalog=drill_catalog.is_saved_location(folder, settings))
    except (RecordError, CatalogError, OSError) as err:
        raise SaveError(str(err)) from None
    except SQLAlchemyError as err:
        raise SaveError(f"cannot read the bot's database: {str(err).splitlines()[0]}") from None
    finally:
        engine.dispose()


def _page(alert: dict[str, Any] | None, title: str, source: str, when: str) -> str:
    """What on-call saw: the alert's name and summary when an alert opened the incident, else the run's title."""
    alerts = (alert or {}).get("alerts") or [{}]
    labels = (alert or {}).get("commonLabels") or alerts[0].get("labels") or {}
    annotations = (alert or {}).get("commonAnnotations") or alerts[0].get("annotations") or {}
    name, summary = labels.get("alertname"), annotations.get("summary") or annotations.get("description")
    if not name:
        return f"{title} ({source}, {when})"
    return f"[FIRING:{len(alerts)}] {name}" + (f": {summary}" if summary else "") + f" ({when})"


def _stored_incident(db: Session, reference: str) -> StoredIncident:
    by = StoredIncident.id == int(reference) if reference.isdigit() else StoredIncident.key == reference
    found = db.scalars(select(StoredIncident).where(by)).first()
    if found is None:
        raise SaveError(f"no stored incident {reference!r} (give its id or key, e.g. slash:...; the App Home "
                        "lists recent ones)")
    return found


def _given_truth(text: str, actor: str) -> GroundTruth:
    refs = index(default_playbooks())
    key = text.strip().lower()
    if key not in refs:
        close = difflib.get_close_matches(key, list(refs), n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `triagebot playbooks list` shows them"
        raise SaveError(f"--ground-truth {text!r} is not a playbook/hypothesis{hint}")
    playbook, _, hypothesis = key.partition("/")
    return GroundTruth(playbook=playbook, hypothesis=hypothesis,
                       explanation=f"Given by {actor} with `triagebot drill save --ground-truth`.")
