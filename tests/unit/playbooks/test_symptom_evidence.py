"""A message that shows a symptom runs that symptom's playbook (`evidence.symptoms`, loader.symptom_trigger), and
every catalog entry that names a symptom names a playbook that exists."""

from __future__ import annotations

import pytest

from collectors.catalogs.signals import signals
from collectors.factset import FactSet
from collectors.models import Citation, Fact
from playbooks.cel_expr import activation
from playbooks.engine import triggered
from playbooks.loader import load_playbooks
from playbooks.model import SYMPTOMS

PLAYBOOKS = {p.spec.id: p for p in load_playbooks()}


def _context(symptoms: list[str]) -> object:
    fact = Fact(name="evidence.symptoms", value=symptoms, parser="signals",
                citation=Citation(artifact="paste.txt", start=1, end=1))
    return activation(FactSet([fact]).cel_context())


def test_every_symptom_a_signal_names_is_a_playbook() -> None:
    named = {s.spec.symptom for s in signals() if s.spec.symptom is not None}
    assert named <= set(SYMPTOMS) <= set(PLAYBOOKS)


@pytest.mark.parametrize("symptom", sorted(PLAYBOOKS))
def test_a_shown_symptom_runs_its_playbook_and_no_other(symptom: str) -> None:
    ran = {pid for pid, p in PLAYBOOKS.items() if triggered(p, _context([symptom]))}
    assert ran == {symptom}
