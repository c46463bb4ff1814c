"""The latency playbook beyond its case table (playbooks/cases/latency.yaml).

Counters that read zero rule a branch out; absent evidence never does.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from collectors.factset import FactSet
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse
from playbooks.report import Finding, Target
from tests.unit.playbooks import table
from tests.unit.playbooks.table import fires, linted_with_sources

PLAYBOOK = "latency"


def test_missing_evidence_is_never_ruled_out(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    finding = judge(PLAYBOOK, make_facts({"latency.p99_seconds": 0.9}))
    assert all(h.status == "unknown" for h in finding.hypotheses)
    by_id = {h.id: h for h in finding.hypotheses}
    assert "cpu.nr_throttled" in by_id["cpu-throttling"].needs
    assert "conntrack.drops" in by_id["conntrack-exhaustion"].needs


def test_confirmation_cites_the_counters(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    finding = judge(
        PLAYBOOK,
        make_facts(
            {
                "latency.p99_seconds": 2.0,
                "conntrack.table_full": True,
                "conntrack.drops": 9000,
                "conntrack.usage_ratio": 0.99,
            }
        ),
    )
    top = finding.hypotheses[0]
    assert top.id == "conntrack-exhaustion" and top.status == "confirmed"
    assert {e.fact for e in top.evidence} >= {"conntrack.table_full", "conntrack.drops", "conntrack.usage_ratio"}
    assert any(check == "conntrack -S" for check in top.next_checks)


def test_next_checks_render_promql_for_the_subject(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    target = Target(namespace="shop", service="checkout.v2", pod="checkout-7d9f-x2", node="gpu-node-2")
    finding = judge(PLAYBOOK, make_facts({"cpu.throttled_ratio": 0.5, "cpu.nr_throttled": 100}), target)
    cpu = next(h for h in finding.hypotheses if h.id == "cpu-throttling")
    promql = next(c for c in cpu.next_checks if c.startswith("sum by (pod, container)"))
    assert (
        'rate(container_cpu_cfs_throttled_periods_total{namespace="shop",pod=~"checkout\\\\.v2-.*",container!=""}[5m])'
    ) in promql
    assert "kubectl exec -n shop checkout-7d9f-x2 -c <container> -- cat /sys/fs/cgroup/cpu.stat" in cpu.next_checks
    for h in finding.hypotheses:
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text


@pytest.mark.parametrize(
    ("facts", "expected"),
    [
        ({"latency.p99_seconds": 0.8}, True),
        ({"alert.symptoms": ["latency"]}, True),
        ({"latency.queue_share": 0.6}, True),
        ({"conntrack.table_full": True}, True),
        ({"xid.codes": [79], "gpu.fallen_off_bus": True}, False),
        ({"cpu.throttled_ratio": 0.5}, True),  # above CPUThrottlingHigh's 25% line: a cause on its own (#24)
        ({"cpu.throttled_ratio": 0.1}, False),
    ],
    ids=["p99", "alert", "queue-share", "conntrack-table-full", "xid-only", "throttling-above-alert-line",
         "mild-throttling-alone"],
)
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    linted_with_sources(PLAYBOOK)


def test_a_throttled_ratio_at_cpu_throttling_high_line_triggers_the_tree_on_its_own() -> None:
    # kube-prometheus' CPUThrottlingHigh fires at 25% throttled periods; below it, a ratio alone is no latency page.
    assert table.fires("latency", {"cpu.throttled_ratio": 0.42})
    assert table.fires("latency", {"cpu.throttled_ratio": 0.25})
    assert not table.fires("latency", {"cpu.throttled_ratio": 0.1})


def test_a_lone_cpu_stat_paste_with_high_throttling_is_weighed_not_unmatched() -> None:
    # cgroup v2 cpu.stat (tests/fixtures/parsers/cpu_stat/cpu.stat-v2.txt): 173076 of 412087 periods throttled, 42%.
    text = (Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "cpu_stat" / "cpu.stat-v2.txt").read_text()
    report = analyse(artifacts_from_text(text, "cpu.stat"))
    assert report.symptoms[:1] == ["latency"]
    lead = report.leading()
    assert lead is not None and (lead[0].playbook, lead[1].id, lead[1].status) == \
        ("latency", "cpu-throttling", "confirmed")
    assert not report.notes
