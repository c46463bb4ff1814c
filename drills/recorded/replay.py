"""Replaying a recorded incident through the same pipeline a live triage uses, and grading it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from drills.recorded.incident import Incident, load_incident
from playbooks.pipeline import analyse
from playbooks.report import Report


def replay(incident: Incident) -> Report:
    return analyse(incident.artifacts, incident.meta.target, missing=incident.meta.missing,
                   symptoms=incident.meta.symptoms or None, leads=incident.meta.leads or None)


def contradictions(incident: Incident, report: Report) -> list[str]:
    """Confirmed hypotheses that cannot be true together with the ground truth."""
    truth = incident.meta.ground_truth
    if truth is None:
        return []
    forbidden = set(incident.meta.must_not_confirm)
    compatible = set(incident.meta.also_true)
    out: list[str] = []
    for finding in report.findings:
        related = finding.lineage(truth.hypothesis, siblings=True) if finding.playbook == truth.playbook else set()
        for h in finding.hypotheses:
            key = f"{finding.playbook}/{h.id}"
            if h.status != "confirmed" or key in compatible:
                continue
            if key in forbidden or (finding.playbook == truth.playbook and h.id not in related):
                out.append(key)
    return out


def grade(incident: Incident, report: Report) -> dict[str, Any]:
    truth = incident.meta.ground_truth
    expected = f"{truth.playbook}/{truth.hypothesis}" if truth else "-"
    lead = report.leading()
    got = f"{lead[0].playbook}/{lead[1].id}" if lead else "-"
    wrong = contradictions(incident, report)
    return {
        "id": incident.meta.id,
        "difficulty": incident.meta.difficulty,
        "expected": expected,
        "leading": got,
        "status": lead[1].status if lead else "-",
        "contradictions": wrong,
        "match": truth is not None and got == expected and not wrong,
    }


def summary_rows(folders: list[Path]) -> list[dict[str, Any]]:
    rows = []
    for folder in folders:
        incident = load_incident(folder)
        rows.append(grade(incident, replay(incident)))
    return rows
