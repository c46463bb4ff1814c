"""The shared body of the table-driven playbook tests for the trees added with issue #16.

A case lists every top-level hypothesis whose status is not `unknown`; hypotheses it does not list must stay
`unknown`, so a case pins the whole tree, and names the hypothesis that must lead.
"""

from __future__ import annotations

from typing import Any

from collectors.factset import FactSet
from playbooks.engine import evaluate, template_variables, triggered
from playbooks.report import Finding, Target
from tests.unit.playbooks.conftest import build_facts, bundled_playbook
from tests.unit.playbooks.verdicts import leader


def judge(playbook: str, facts: dict[str, Any], target: Target | None = None) -> Finding:
    compiled = bundled_playbook(playbook)
    fact_set: FactSet = build_facts(facts)
    target = target or Target(namespace="ml", pod="trainer-0", node="gpu-node-7", service="checkout")
    return evaluate(compiled, fact_set, template_variables(target, fact_set))


def check_case(playbook: str, top_level: list[str], facts: dict[str, Any], expected: dict[str, str],
               lead: str) -> Finding:
    finding = judge(playbook, facts)
    got = {h.id: h.status for h in finding.hypotheses if h.parent is None}
    assert set(got) == set(top_level)
    assert got == {hid: expected.get(hid, "unknown") for hid in top_level}, got
    assert leader(finding) == lead
    for child, status in expected.items():
        if child not in top_level:
            assert {h.id: h.status for h in finding.hypotheses}.get(child) == status, child
    return finding


def fires(playbook: str, facts: dict[str, Any]) -> bool:
    return triggered(bundled_playbook(playbook), build_facts(facts).cel_context())


def rendered_cleanly(finding: Finding) -> bool:
    """No template syntax left in any text a person reads."""
    return all("{{" not in text and "{%" not in text
               for h in finding.hypotheses for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations])
