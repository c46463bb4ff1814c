"""Shared helpers for engine-level playbook tests: declare a situation as facts, evaluate one playbook.

Each test states the whole situation inline, for example::

    def test_x(make_facts, judge):
        finding = judge("pending", make_facts({"scheduling.reasons": ["insufficient-gpu"]}))

`make_facts` cites every fact to its own line of one pretend artifact, so citations are distinct.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.engine import evaluate, template_variables
from playbooks.loader import PLAYBOOK_DIR, CompiledPlaybook, check_file
from playbooks.precision import facts_of
from playbooks.report import Finding, Target


def build_facts(values: dict[str, Any], artifact: str = "case", subjects: dict[str, str] | None = None) -> FactSet:
    """Facts from {name: value}; `subjects` says what a fact was read about (`node/gpu-7`), default nothing."""
    return facts_of(values, artifact, subjects)


_CACHE: dict[str, CompiledPlaybook] = {}


def bundled_playbook(playbook_id: str) -> CompiledPlaybook:
    """One bundled playbook, compiled on its own so a broken neighbour cannot fail unrelated tests."""
    if playbook_id not in _CACHE:
        compiled, problems = check_file(PLAYBOOK_DIR / f"{playbook_id}.yaml")
        assert compiled is not None, [str(p) for p in problems]
        _CACHE[playbook_id] = compiled
    return _CACHE[playbook_id]


@pytest.fixture
def make_facts() -> Callable[..., FactSet]:
    """Build a FactSet from {fact name: value}."""
    return build_facts


@pytest.fixture
def judge() -> Callable[..., Finding]:
    """Evaluate one bundled playbook over a FactSet: judge(playbook_id, facts, target=None) -> Finding."""

    def run(playbook_id: str, facts: FactSet, target: Target | None = None) -> Finding:
        playbook = bundled_playbook(playbook_id)
        target = target or Target(namespace="ml", pod="trainer-0")
        return evaluate(playbook, facts, template_variables(target, facts))

    return run
