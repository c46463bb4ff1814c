"""Every playbook's table of cases (playbooks/cases/<playbook>.yaml), judged by the engine with one meaning.

A case declares a situation as facts. Each hypothesis it names must have exactly the named status; one it does not
name must not hold (confirmed or likely), so a rule that starts firing where it should not fails the table. The
named leader must lead, and a leader that holds must cite the facts behind it.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from collectors.factset import FactSet
from playbooks.cel_expr import activation
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.loader import PLAYBOOK_DIR, playbook_files
from playbooks.pipeline import default_playbooks
from playbooks.report import Target
from tests.unit.playbooks.conftest import build_facts, bundled_playbook

CASES_DIR = PLAYBOOK_DIR / "cases"
STATUSES = ("confirmed", "likely", "unknown", "ruled-out")


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    why: str = ""
    facts: dict[str, Any]
    # Facts among `facts` that the paste only says in words (parser `stated:`): likely at most, never a rule-out.
    stated: list[str] = Field(default_factory=list)
    expect: dict[str, str]
    leader: str
    # Whether the playbook runs on these facts among all bundled playbooks: its trigger, or the one derived from
    # its hypotheses' discriminating facts (playbooks/loader.py derived_trigger). Unchecked when absent.
    runs: bool | None = None


class CaseFile(BaseModel):
    model_config = ConfigDict(extra="forbid")
    playbook: str
    target: dict[str, str] = Field(default_factory=dict)
    cases: list[Case] = Field(min_length=1)


def _facts(case: Case) -> FactSet:
    """The case's facts; those it lists under `stated` read as a sentence would give them."""
    given = build_facts(case.facts)
    out = FactSet()
    for name in given.names():
        merged = given.get(name)
        for fact in merged.sources if merged else []:
            out.add(replace(fact, parser="stated:case") if name in case.stated else fact)
    return out


def _load(path: Path) -> CaseFile:
    return CaseFile.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))


FILES = {path.stem: _load(path) for path in sorted(CASES_DIR.glob("*.yaml"))}
ALL = [(name, case) for name, table in FILES.items() for case in table.cases]


def test_every_playbook_has_a_table_and_every_table_a_playbook() -> None:
    assert set(FILES) == {p.stem for p in playbook_files()}
    assert all(table.playbook == name for name, table in FILES.items())


def test_case_ids_are_unique_within_a_table() -> None:
    for name, table in FILES.items():
        ids = [c.id for c in table.cases]
        assert len(ids) == len(set(ids)), name


def test_cases_name_only_real_hypotheses_and_statuses() -> None:
    for name, table in FILES.items():
        known = {h.id for h, _ in bundled_playbook(name).spec.walk()}
        for case in table.cases:
            assert set(case.expect) <= known, (name, case.id, set(case.expect) - known)
            assert case.leader in known, (name, case.id)
            assert set(case.expect.values()) <= set(STATUSES), (name, case.id)
            assert set(case.stated) <= set(case.facts), (name, case.id)


@pytest.mark.parametrize(("name", "case"), ALL, ids=[f"{name}:{case.id}" for name, case in ALL])
def test_case(name: str, case: Case) -> None:
    compiled = bundled_playbook(name)
    facts = _facts(case)
    if case.runs is not None:
        bundled = next(p for p in default_playbooks() if p.spec.id == name)
        assert triggered(bundled, activation(facts.cel_context())) is case.runs
    finding = evaluate(compiled, facts, template_variables(Target(**FILES[name].target), facts))
    got = {h.id: h.status for h in finding.hypotheses}
    for hid, status in case.expect.items():
        assert got.get(hid) == status, (hid, got)
    surprises = {h: s for h, s in got.items() if h not in case.expect and s in ("confirmed", "likely")}
    assert not surprises, surprises
    leader = finding.best_supported() or next(h for h in finding.hypotheses if h.status != "ruled-out")
    assert leader.id == case.leader, [(h.id, h.status, h.score) for h in finding.hypotheses]
    if leader.status in ("confirmed", "likely"):
        assert leader.because, "a holding hypothesis must cite the facts behind it"
