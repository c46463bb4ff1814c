"""Real-world cases: verbatim pastes from public threads, checked against what the thread concluded."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from collectors.models import ArtifactKind
from collectors.yaml_safe import safe_load
from playbooks.report import Finding, HypothesisResult, Report

Outcome = Literal["confirmed", "likely", "ruled-out", "unknown", "not-run"]


class Expect(BaseModel):
    """What the evidence and the thread say the report must show."""

    model_config = ConfigDict(extra="forbid")

    symptoms: list[str] = Field(default_factory=list)
    not_symptoms: list[str] = Field(default_factory=list)
    facts: dict[str, Any] = Field(default_factory=dict)
    absent_facts: list[str] = Field(default_factory=list)
    hypotheses: dict[str, list[Outcome]] = Field(default_factory=dict)
    leader: str | None = None


class Case(BaseModel):
    """case.yaml: where the text came from, what the thread concluded, what must hold."""

    model_config = ConfigDict(extra="forbid")

    source: str
    where: str = ""
    concluded: str
    negative: bool = False
    # False: the thread names a cause the pasted text shows no sign of, so the case can demand no more of the
    # reader than to keep that cause open. Counted apart in first-sight scores (they measure the thread's
    # knowledge, not the reader's); None where the collector did not say.
    cause_in_paste: bool | None = None
    kind: ArtifactKind | None = None
    expect: Expect


class CaseError(ValueError):
    """A case folder that cannot be read."""


@dataclass
class CaseResult:
    id: str
    symptom: str
    negative: bool
    failures: list[str] = field(default_factory=list)
    cause_in_paste: bool | None = None

    @property
    def passed(self) -> bool:
        return not self.failures


def case_dirs(root: Path) -> list[Path]:
    """Every case folder under root (a folder holding case.yaml), sorted."""
    return sorted(p.parent for p in root.rglob("case.yaml"))


def load_case(folder: Path) -> tuple[Case, str]:
    try:
        raw = safe_load((folder / "case.yaml").read_text(encoding="utf-8"))
        text = (folder / "evidence.txt").read_bytes().decode("utf-8", errors="replace")
    except (OSError, yaml.YAMLError) as err:
        raise CaseError(f"{folder}: {err}") from None
    try:
        return Case.model_validate(raw), text
    except ValidationError as err:
        raise CaseError(f"{folder}/case.yaml: {err}") from None


Analyse = Callable[[str, str, ArtifactKind | None], Report]


def run_case(folder: Path, analyse_text: Analyse) -> CaseResult:
    """Analyse the case's evidence and compare the report with its expectations."""
    symptom = folder.parent.name
    try:
        case, text = load_case(folder)
    except CaseError as err:
        return CaseResult(folder.name, symptom, False, [str(err)])
    result = CaseResult(folder.name, symptom, case.negative, cause_in_paste=case.cause_in_paste)
    try:
        report = analyse_text(text, folder.name, case.kind)
    except ValueError as err:  # a refusal is a failure like any other
        result.failures.append(f"refused: {err}")
        return result
    result.failures = check(case.expect, report)
    return result


def outcomes(report: Report) -> dict[str, Outcome]:
    """`playbook/hypothesis` -> status for every hypothesis the report holds."""
    return {f"{f.playbook}/{h.id}": h.status for f in report.findings for h in f.hypotheses}


def check(expect: Expect, report: Report) -> list[str]:
    """Every expectation that does not hold, as a sentence."""
    failures: list[str] = []
    ran = set(report.symptoms)
    failures += [f"playbook {s} did not run" for s in expect.symptoms if s not in ran]
    failures += [f"playbook {s} ran but should not" for s in expect.not_symptoms if s in ran]
    for name, want in expect.facts.items():
        if name not in report.facts:
            failures.append(f"fact {name} not read (expected {want!r})")
        elif not _fact_matches(want, report.facts[name]):
            failures.append(f"fact {name} = {report.facts[name]!r}, expected {want!r}")
    failures += [f"fact {n} = {report.facts[n]!r} should be absent" for n in expect.absent_facts if n in report.facts]
    statuses = outcomes(report)
    for key, allowed in expect.hypotheses.items():
        playbook = key.split("/", 1)[0]
        got: Outcome = statuses.get(key, "not-run" if playbook not in ran else "unknown")
        if got not in allowed:
            failures.append(f"{key} is {got}, expected {' or '.join(allowed)}")
    if expect.leader is not None:
        lead = report.leading()
        got_leader = f"{lead[0].playbook}/{lead[1].id}" if lead else "nothing"
        if got_leader != expect.leader and expect.leader not in _refined(lead):
            failures.append(f"leader is {got_leader}, expected {expect.leader}")
    return failures


def _refined(lead: tuple[Finding, HypothesisResult] | None) -> set[str]:
    """The causes a lead refines: its ancestors. A thread that names the cause ("the node ran out of memory") is
    met by a lead that says the same more precisely ("and this pod used more than its request")."""
    if lead is None:
        return set()
    finding, hypothesis = lead
    parents = {h.id: h.parent for h in finding.hypotheses}
    found: set[str] = set()
    node = parents.get(hypothesis.id)
    while node is not None and f"{finding.playbook}/{node}" not in found:
        found.add(f"{finding.playbook}/{node}")
        node = parents.get(node)
    return found


def _fact_matches(want: Any, got: Any) -> bool:
    if isinstance(want, list):
        return isinstance(got, list) and all(w in got for w in want)
    if isinstance(want, bool) or isinstance(got, bool):
        return want is got
    if isinstance(want, float) or isinstance(got, float):
        return isinstance(got, int | float) and math.isclose(float(want), float(got), rel_tol=0.01)
    return bool(want == got)


def accuracy_rows(results: list[CaseResult]) -> list[tuple[str, int, int, int]]:
    """(symptom, cases, passed, negatives) per symptom, then the total."""
    rows: list[tuple[str, int, int, int]] = []
    for symptom in sorted({r.symptom for r in results}):
        mine = [r for r in results if r.symptom == symptom]
        rows.append((symptom, len(mine), sum(r.passed for r in mine), sum(r.negative for r in mine)))
    rows.append(("all", len(results), sum(r.passed for r in results), sum(r.negative for r in results)))
    return rows
