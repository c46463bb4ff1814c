"""Stored triage runs read back from the database, as the report's buttons and "Save as drill" need them."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import ValidationError
from sqlalchemy.orm import Session

from bot.store.models import Incident, TriageRun
from collectors.models import Artifact, Target, artifact_adapter
from playbooks.report import Report


@dataclass
class Run:
    """A triage run as the buttons need it, read from the database."""

    row: TriageRun
    incident: Incident | None
    report: Report | None

    @property
    def target(self) -> Target:
        return Target.model_validate(self.row.target or {})

    @property
    def namespace(self) -> str | None:
        return self.target.namespace or (self.incident.namespace if self.incident else None)

    @property
    def live(self) -> bool:
        """Whether a re-run can ask the cluster again; pasted evidence has no target."""
        t = self.target
        return bool(t.namespace and (t.service or t.pod or t.node))

    @property
    def title(self) -> str:
        return self.incident.title if self.incident else f"triage run {self.row.id}"

    def artifacts(self) -> list[Artifact]:
        return [artifact_adapter().validate_python(a) for a in self.row.artifacts or []]


class ActionError(ValueError):
    """A click the bot cannot act on; the message is shown to the clicker alone."""

    def __init__(self, message: str, outcome: str = "invalid") -> None:
        super().__init__(message)
        self.outcome = outcome


def load_run(session: Session, value: str) -> Run:
    if not value.isdigit():
        raise ActionError("This button carries no triage run id; it belongs to a report that was not stored.")
    row = session.get(TriageRun, int(value))
    if row is None:
        raise ActionError(f"Triage run {value} is not in the database (deleted, or another triagebot's).")
    incident = session.get(Incident, row.incident_id) if row.incident_id is not None else None
    try:
        report = Report.model_validate(row.report) if row.report else None
    except ValidationError:
        report = None  # stored by an older version; the buttons that need it say so
    return Run(row=row, incident=incident, report=report)
