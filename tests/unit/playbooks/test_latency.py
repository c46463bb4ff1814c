"""The latency playbook, judged by the engine over situations declared inline as facts.

Every case lists the statuses it expects; hypotheses it does not list must stay `unknown`, so a case
pins the whole tree. Counters that read zero rule a branch out; absent evidence never does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.engine import triggered
from playbooks.loader import PLAYBOOK_DIR, check_file
from playbooks.report import Finding, Target
from tests.unit.playbooks.verdicts import leader as _leader

PLAYBOOK = "latency"
TOP_LEVEL = [
    "capacity",
    "queueing",
    "cpu-throttling",
    "noisy-neighbor",
    "numa",
    "gpu-sharing",
    "dns",
    "conntrack-exhaustion",
    "mtu",
    "network-path",
    "retry-amplification",
    "gpu-throttling",
    "recent-change",
]

# (case id, facts, statuses other than unknown, leading hypothesis)
CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    (
        "hpa-at-max-with-4x-traffic",
        {
            "latency.p99_seconds": 0.82,
            "traffic.increase_ratio": 4.0,
            "hpa.at_max": True,
            "hpa.max_replicas": 50,
            "gpu.util_percent": 100.0,
            "cpu.nr_throttled": 0,
            "cpu.throttled_ratio": 0.0,
            "conntrack.drops": 0,
            "rollout.recent": False,
        },
        {
            "capacity": "confirmed",
            "cpu-throttling": "ruled-out",
            "conntrack-exhaustion": "ruled-out",
            "recent-change": "ruled-out",
        },
        "capacity",
    ),
    (
        "hpa-at-max-alone-is-only-likely",
        {"latency.p99_seconds": 0.5, "hpa.at_max": True},
        {"capacity": "likely"},
        "capacity",
    ),
    (
        "traffic-spike-without-hpa-evidence-is-only-likely",
        {"latency.p99_seconds": 0.5, "traffic.increase_ratio": 3.2},
        {"capacity": "likely"},
        "capacity",
    ),
    (
        "cfs-throttling-while-traffic-flat",
        {
            "latency.p99_seconds": 0.45,
            "cpu.nr_periods": 66120,
            "cpu.nr_throttled": 41230,
            "cpu.throttled_ratio": 0.6236,
            "traffic.increase_ratio": 1.02,
            "hpa.at_max": False,
            "gpu.util_percent": 31.0,
            "conntrack.drops": 0,
        },
        {"cpu-throttling": "confirmed", "capacity": "ruled-out", "conntrack-exhaustion": "ruled-out"},
        "cpu-throttling",
    ),
    (
        "mild-throttling-is-likely",
        {"latency.p99_seconds": 0.3, "cpu.nr_throttled": 900, "cpu.nr_periods": 9000, "cpu.throttled_ratio": 0.1},
        {"cpu-throttling": "likely"},
        "cpu-throttling",
    ),
    (
        "nr-throttled-zero-rules-out-throttling",
        {"latency.p99_seconds": 0.3, "cpu.nr_periods": 52000, "cpu.nr_throttled": 0, "cpu.throttled_ratio": 0.0},
        {"cpu-throttling": "ruled-out"},
        "capacity",
    ),
    (
        "throttled-ratio-near-zero-rules-out-throttling",
        {"latency.p99_seconds": 0.3, "cpu.throttled_ratio": 0.004},
        {"cpu-throttling": "ruled-out"},
        "capacity",
    ),
    (
        "conntrack-table-full-line-confirms",
        {
            "latency.p99_seconds": 2.1,
            "conntrack.table_full": True,
            "conntrack.drops": 184223,
            "conntrack.usage_ratio": 0.9994,
            "cpu.nr_throttled": 0,
            "cpu.throttled_ratio": 0.0,
        },
        {"conntrack-exhaustion": "confirmed", "cpu-throttling": "ruled-out"},
        "conntrack-exhaustion",
    ),
    (
        "conntrack-drops-near-limit-confirm-without-kernel-line",
        {"latency.p99_seconds": 2.1, "conntrack.drops": 5120, "conntrack.usage_ratio": 0.97},
        {"conntrack-exhaustion": "confirmed"},
        "conntrack-exhaustion",
    ),
    (
        "conntrack-zero-drops-rules-out",
        {"latency.p99_seconds": 0.9, "conntrack.drops": 0, "conntrack.usage_ratio": 0.12},
        {"conntrack-exhaustion": "ruled-out"},
        "capacity",
    ),
    (
        "conntrack-zero-drops-but-table-nearly-full-stays-open",
        {"latency.p99_seconds": 0.9, "conntrack.drops": 0, "conntrack.usage_ratio": 0.95},
        {"conntrack-exhaustion": "likely"},
        "conntrack-exhaustion",
    ),
    (
        "conntrack-some-drops-low-usage-is-likely",
        {"latency.p99_seconds": 0.9, "conntrack.drops": 37, "conntrack.usage_ratio": 0.31},
        {"conntrack-exhaustion": "likely"},
        "conntrack-exhaustion",
    ),
    (
        "queueing-without-surge-must-not-confirm-node-causes",
        {
            "latency.p99_seconds": 0.61,
            "latency.queue_share": 0.83,
            "traffic.increase_ratio": 1.04,
            "hpa.at_max": False,
            "gpu.util_percent": 42.0,
            "cpu.nr_periods": 48211,
            "cpu.nr_throttled": 0,
            "cpu.throttled_ratio": 0.0,
            "conntrack.drops": 0,
            "conntrack.usage_ratio": 0.08,
        },
        {
            "queueing": "confirmed",
            "capacity": "ruled-out",
            "cpu-throttling": "ruled-out",
            "conntrack-exhaustion": "ruled-out",
        },
        "queueing",
    ),
    (
        "queueing-during-surge-is-capacity",
        {"latency.p99_seconds": 0.8, "latency.queue_share": 0.7, "traffic.increase_ratio": 4.0, "hpa.at_max": True},
        {"capacity": "confirmed", "queueing": "likely"},
        "capacity",
    ),
    (
        "small-queue-share-rules-out-queueing",
        {"latency.p99_seconds": 0.8, "latency.queue_share": 0.04},
        {"queueing": "ruled-out"},
        "capacity",
    ),
    (
        "coredns-p99-seconds-confirms-dns",
        {
            "latency.p99_seconds": 1.4,
            "dns.p99_seconds": 1.1,
            "dns.error_ratio": 0.71,
            "conntrack.drops": 0,
            "cpu.nr_throttled": 0,
            "cpu.throttled_ratio": 0.0,
        },
        {"dns": "confirmed", "conntrack-exhaustion": "ruled-out", "cpu-throttling": "ruled-out"},
        "dns",
    ),
    (
        "resolve-failures-with-coredns-errors-confirm-dns",
        {"dns.errors": True, "dns.error_ratio": 0.45},
        {"dns": "confirmed"},
        "dns",
    ),
    (
        "nxdomain-heavy-coredns-alone-is-only-likely",
        {"latency.p99_seconds": 0.4, "dns.error_ratio": 0.62},
        {"dns": "likely"},
        "dns",
    ),
    (
        "fast-clean-coredns-rules-out-dns",
        {"latency.p99_seconds": 0.4, "dns.p99_seconds": 0.004, "dns.error_ratio": 0.05},
        {"dns": "ruled-out"},
        "capacity",
    ),
    (
        "steal-time-confirms-noisy-neighbor",
        {"latency.p99_seconds": 0.4, "node.cpu_steal_ratio": 0.18, "cpu.nr_throttled": 0, "cpu.throttled_ratio": 0.0},
        {"noisy-neighbor": "confirmed", "cpu-throttling": "ruled-out"},
        "noisy-neighbor",
    ),
    (
        "burstable-gpu-pod-without-throttling-or-steal-suggests-numa",
        {
            "latency.p99_seconds": 0.4,
            "pod.gpu_request": 1,
            "pod.qos_class": "Burstable",
            "cpu.nr_throttled": 0,
            "cpu.throttled_ratio": 0.0,
            "node.cpu_steal_ratio": 0.001,
        },
        {"numa": "likely", "cpu-throttling": "ruled-out"},
        "numa",
    ),
    (
        "cpu-only-pod-rules-out-gpu-branches",
        {
            "latency.p99_seconds": 0.4,
            "pod.gpu_request": 0,
            "pod.qos_class": "Burstable",
            "cpu.nr_throttled": 0,
            "node.cpu_steal_ratio": 0.0004,
            "gpu.temp_c": 91.0,
        },
        {"numa": "ruled-out", "gpu-sharing": "ruled-out", "gpu-throttling": "ruled-out", "cpu-throttling": "ruled-out"},
        "capacity",
    ),
    (
        "time-sliced-gpu-is-likely-sharing",
        {"latency.p99_seconds": 0.4, "node.gpu_sharing": "time-slicing"},
        {"gpu-sharing": "likely"},
        "gpu-sharing",
    ),
    (
        "exclusive-gpu-rules-out-sharing",
        {"latency.p99_seconds": 0.4, "node.gpu_sharing": "exclusive"},
        {"gpu-sharing": "ruled-out"},
        "capacity",
    ),
    (
        "mtu-mismatch-confirms",
        {"latency.p99_seconds": 3.0, "net.mtu_mismatch": True},
        {"mtu": "confirmed"},
        "mtu",
    ),
    (
        "mtu-agreement-rules-out",
        {"latency.p99_seconds": 3.0, "net.mtu_mismatch": False},
        {"mtu": "ruled-out"},
        "capacity",
    ),
    (
        "connection-refused-points-at-network-path",
        {"latency.p99_seconds": 3.0, "app.errors": ["connection-refused"]},
        {"network-path": "likely"},
        "network-path",
    ),
    (
        "client-retries-are-likely-amplifying",
        {"latency.p99_seconds": 1.0, "app.retries": True},
        {"retry-amplification": "likely"},
        "retry-amplification",
    ),
    (
        "gpu-hw-thermal-throttle-confirms",
        {"latency.p99_seconds": 0.5, "gpu.throttle_reasons": ["thermal"], "gpu.temp_c": 91.0},
        {"gpu-throttling": "confirmed"},
        "gpu-throttling",
    ),
    (
        "gpu-power-cap-is-only-likely",
        {"latency.p99_seconds": 0.5, "gpu.throttle_reasons": ["power"], "gpu.temp_c": 70.0},
        {"gpu-throttling": "likely"},
        "gpu-throttling",
    ),
    (
        "cool-unthrottled-gpu-rules-out-gpu-throttling",
        {"latency.p99_seconds": 0.5, "gpu.throttle_reasons": [], "gpu.temp_c": 55.0},
        {"gpu-throttling": "ruled-out"},
        "capacity",
    ),
    (
        "recent-rollout-is-likely",
        {"latency.p99_seconds": 0.5, "rollout.recent": True},
        {"recent-change": "likely"},
        "recent-change",
    ),
    (
        "only-the-symptom-leaves-everything-unknown",
        {"latency.p99_seconds": 0.9},
        {},
        "capacity",
    ),
]


@pytest.mark.parametrize(("facts", "expected", "leader"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(
    make_facts: Callable[[dict[str, Any]], FactSet],
    judge: Callable[..., Finding],
    facts: dict[str, Any],
    expected: dict[str, str],
    leader: str,
) -> None:
    finding = judge(PLAYBOOK, make_facts(facts))
    statuses = {h.id: h.status for h in finding.hypotheses if h.parent is None}
    assert set(statuses) == set(TOP_LEVEL)
    assert statuses == {hid: expected.get(hid, "unknown") for hid in TOP_LEVEL}
    assert _leader(finding) == leader


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
    ("facts", "fires"),
    [
        ({"latency.p99_seconds": 0.8}, True),
        ({"alert.symptoms": ["latency"]}, True),
        ({"latency.queue_share": 0.6}, True),
        ({"conntrack.table_full": True}, True),
        ({"xid.codes": [79], "gpu.fallen_off_bus": True}, False),
        ({"cpu.throttled_ratio": 0.5}, False),
    ],
    ids=["p99", "alert", "queue-share", "conntrack-table-full", "xid-only", "throttling-without-symptom"],
)
def test_trigger(make_facts: Callable[[dict[str, Any]], FactSet], facts: dict[str, Any], fires: bool) -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / f"{PLAYBOOK}.yaml")
    assert compiled is not None, [str(p) for p in problems]
    assert triggered(compiled, make_facts(facts).cel_context()) is fires


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / f"{PLAYBOOK}.yaml")
    assert compiled is not None and problems == []
    for h, _ in compiled.spec.walk():
        assert h.source and all(s.strip() for s in h.source)
