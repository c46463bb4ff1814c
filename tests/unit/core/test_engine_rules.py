"""The engine's contract, on a small inline playbook: statuses, citations, ranking, children."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from collectors.factset import FactSet
from collectors.models import Citation, Fact
from playbooks.engine import evaluate, template_variables
from playbooks.loader import CompiledPlaybook, check_file
from playbooks.report import Target

PLAYBOOK = """
id: latency
title: Slow service
trigger: 'has(cpu.throttled_ratio) || has(conntrack.drops)'
sources: [cpu-stat, conntrack-stats]
hypotheses:
  - id: cpu-throttling
    claim: "{{ pod }} is throttled"
    confirm: 'cpu.throttled_ratio > 0.25'
    likely: 'cpu.throttled_ratio > 0.05'
    discriminating: [cpu.throttled_ratio]
    rule_out: 'cpu.nr_throttled == 0'
    prior: 0.6
    falsified_by: "throttled periods stay at zero during the spike"
    next_checks: ['rate(container_cpu_cfs_throttled_periods_total{pod="{{ pod|promql }}"}[5m])']
    source: [s]
    chart: {none: an inline test playbook draws no chart}
    children:
      - id: limit-below-burst
        claim: c
        likely: 'cpu.throttled_ratio > 0.05'
        discriminating: [cpu.throttled_ratio]
        falsified_by: f
        source: [s]
        chart: {none: an inline test playbook draws no chart}
  - id: conntrack-exhaustion
    claim: "conntrack is full"
    confirm: 'conntrack.table_full || conntrack.drops > 0'
    rule_out: 'conntrack.drops == 0 && !conntrack.table_full'
    prior: 0.4
    falsified_by: "drop counters stay flat"
    source: [s]
    chart: {none: an inline test playbook draws no chart}
"""


@pytest.fixture(scope="module")
def playbook(tmp_path_factory: pytest.TempPathFactory) -> CompiledPlaybook:
    path = Path(tmp_path_factory.mktemp("pb")) / "latency.yaml"
    path.write_text(PLAYBOOK, encoding="utf-8")
    compiled, problems = check_file(path)
    assert compiled is not None, problems
    return compiled


def facts(**values: Any) -> FactSet:
    out = FactSet()
    for i, (key, value) in enumerate(values.items(), start=1):
        out.add(Fact(name=key.replace("__", "."), value=value, citation=Citation(artifact="a1", start=i, end=i)))
    return out


def statuses(playbook: CompiledPlaybook, fs: FactSet, pod: str = "web-1") -> dict[str, str]:
    finding = evaluate(playbook, fs, template_variables(Target(pod=pod), fs))
    return {h.id: h.status for h in finding.hypotheses}


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({}, {"cpu-throttling": "unknown", "conntrack-exhaustion": "unknown"}),
        ({"cpu__throttled_ratio": 0.4}, {"cpu-throttling": "confirmed", "limit-below-burst": "likely",
                                         "conntrack-exhaustion": "unknown"}),
        ({"cpu__throttled_ratio": 0.1}, {"cpu-throttling": "likely", "limit-below-burst": "likely",
                                         "conntrack-exhaustion": "unknown"}),
        ({"cpu__nr_throttled": 0, "cpu__throttled_ratio": 0.0, "conntrack__drops": 0,
          "conntrack__table_full": False},
         {"cpu-throttling": "ruled-out", "conntrack-exhaustion": "ruled-out"}),
        ({"conntrack__drops": 0}, {"cpu-throttling": "unknown", "conntrack-exhaustion": "unknown"}),
        ({"conntrack__table_full": True}, {"cpu-throttling": "unknown", "conntrack-exhaustion": "confirmed"}),
    ],
)
def test_status_follows_evidence(playbook: CompiledPlaybook, given: dict[str, Any],
                                 expected: dict[str, str]) -> None:
    assert statuses(playbook, facts(**given)) == expected


def test_missing_evidence_lists_what_is_needed(playbook: CompiledPlaybook) -> None:
    finding = evaluate(playbook, FactSet(), template_variables(Target(), FactSet()))
    by_id = {h.id: h for h in finding.hypotheses}
    assert by_id["cpu-throttling"].needs == ["cpu.nr_throttled", "cpu.throttled_ratio"]
    assert by_id["cpu-throttling"].because == []


def test_verdict_cites_facts_and_lines(playbook: CompiledPlaybook) -> None:
    fs = facts(cpu__nr_throttled=900, cpu__throttled_ratio=0.5)
    finding = evaluate(playbook, fs, template_variables(Target(pod='we"b'), fs))
    lead = finding.hypotheses[0]
    assert lead.id == "cpu-throttling" and lead.status == "confirmed"
    assert lead.because == ["cpu.throttled_ratio = 0.5 (a1:2)"]
    assert lead.evidence[0].artifact == "a1" and lead.evidence[0].lines == "2"
    assert lead.next_checks == ['rate(container_cpu_cfs_throttled_periods_total{pod="we\\"b"}[5m])']
    assert lead.score == pytest.approx(0.954)


def test_ranking_puts_confirmed_before_likely_and_prior_breaks_ties(playbook: CompiledPlaybook) -> None:
    fs = facts(cpu__throttled_ratio=0.1, conntrack__table_full=True)
    finding = evaluate(playbook, fs, template_variables(Target(), fs))
    assert [h.id for h in finding.hypotheses] == ["conntrack-exhaustion", "cpu-throttling", "limit-below-burst"]
    assert finding.hypotheses[2].parent == "cpu-throttling"
