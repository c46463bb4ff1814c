"""Helpers for the playbook tests beyond the case tables (playbooks/cases/, tests/unit/playbooks/test_cases.py)."""

from __future__ import annotations

from typing import Any

from collectors.factset import FactSet
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.loader import PLAYBOOK_DIR, CompiledPlaybook, check_file
from playbooks.report import Finding, Target
from tests.unit.playbooks.conftest import build_facts, bundled_playbook


def judge(playbook: str, facts: dict[str, Any], target: Target | None = None) -> Finding:
    compiled = bundled_playbook(playbook)
    fact_set: FactSet = build_facts(facts)
    target = target or Target(namespace="ml", pod="trainer-0", node="gpu-node-7", service="checkout")
    return evaluate(compiled, fact_set, template_variables(target, fact_set))


def fires(playbook: str, facts: dict[str, Any]) -> bool:
    return triggered(bundled_playbook(playbook), build_facts(facts).cel_context())


def linted_with_sources(playbook: str) -> CompiledPlaybook:
    """The bundled playbook, compiled with no lint problem and every hypothesis at every depth citing a source."""
    compiled, problems = check_file(PLAYBOOK_DIR / f"{playbook}.yaml")
    assert compiled is not None and problems == []
    for h, _ in compiled.spec.walk():
        assert h.source and all(s.strip() for s in h.source)
    return compiled


def rendered_cleanly(finding: Finding) -> bool:
    """No template syntax left in any text a person reads."""
    return all("{{" not in text and "{%" not in text
               for h in finding.hypotheses for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations])
