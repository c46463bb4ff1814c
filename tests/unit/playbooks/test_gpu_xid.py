"""The gpu-xid playbook, judged by the engine over situations declared inline as facts.

Every case lists the statuses it expects; hypotheses it does not list must stay `unknown`. Xid 45 is an
after-effect: after a hardware Xid the hardware Xid leads, and 45 alone never confirms a hardware fault.
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

PLAYBOOK = "gpu-xid"
TOP_LEVEL = [
    "gpu-fallen-off-bus",
    "uncorrectable-ecc",
    "nvlink-error",
    "gsp-firmware",
    "pcie-link",
    "app-memory-fault",
    "thermal-or-power",
    "device-plugin-unaware",
    "xid-45-after-effect",
]
HARDWARE = ["gpu-fallen-off-bus", "uncorrectable-ecc", "nvlink-error", "gsp-firmware", "pcie-link", "thermal-or-power"]

# (case id, facts, statuses other than unknown, leading hypothesis)
CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    (
        "xid79-then-45-leads-to-79",
        {
            "xid.codes": [79, 45],
            "xid.primary_codes": [79],
            "xid.count": 6,
            "xid.pci_bus_ids": ["0000:b3:00"],
            "gpu.fallen_off_bus": True,
            "gpu.unhealthy_count": 0,
        },
        {"gpu-fallen-off-bus": "confirmed", "xid-45-after-effect": "ruled-out", "device-plugin-unaware": "likely"},
        "gpu-fallen-off-bus",
    ),
    (
        "gpu-lost-without-an-xid-line",
        {"gpu.fallen_off_bus": True},
        {"gpu-fallen-off-bus": "confirmed", "xid-45-after-effect": "ruled-out"},
        "gpu-fallen-off-bus",
    ),
    (
        "xid79-with-device-plugin-already-excluding-the-gpu",
        {"xid.codes": [79], "xid.primary_codes": [79], "gpu.fallen_off_bus": True, "gpu.unhealthy_count": 1},
        {"gpu-fallen-off-bus": "confirmed", "xid-45-after-effect": "ruled-out", "device-plugin-unaware": "ruled-out"},
        "gpu-fallen-off-bus",
    ),
    (
        "xid45-alone-after-oom-kill-is-teardown",
        {
            "xid.codes": [45],
            "xid.primary_codes": [],
            "xid.count": 3,
            "kernel.oom_kill": True,
            "kernel.oom_memcg": True,
            "kernel.oom_victims": ["python3"],
            "gpu.ecc_dbe": 0,
            "gpu.temp_c": 58.0,
            "gpu.unhealthy_count": 0,
        },
        {"xid-45-after-effect": "confirmed", "uncorrectable-ecc": "ruled-out", "thermal-or-power": "ruled-out"},
        "xid-45-after-effect",
    ),
    (
        "xid45-alone-without-a-known-cause-is-likely-teardown",
        {"xid.codes": [45], "xid.primary_codes": []},
        {"xid-45-after-effect": "likely"},
        "xid-45-after-effect",
    ),
    (
        "xid45-after-sigterm-exit-is-teardown",
        {"xid.codes": [45], "xid.primary_codes": [], "container.last_terminated.exit_code": 143},
        {"xid-45-after-effect": "confirmed"},
        "xid-45-after-effect",
    ),
    (
        "xid45-with-dbe-counter-is-not-teardown",
        {"xid.codes": [45], "xid.primary_codes": [], "kernel.oom_kill": True, "gpu.ecc_dbe": 2},
        {"uncorrectable-ecc": "confirmed", "xid-45-after-effect": "ruled-out"},
        "uncorrectable-ecc",
    ),
    (
        "xid48-then-45-leads-to-ecc",
        {
            "xid.codes": [48, 45],
            "xid.primary_codes": [48],
            "gpu.ecc_dbe": 4,
            "gpu.ecc_sbe": 112,
            "gpu.unhealthy_count": 0,
            "gpu.temp_c": 61.0,
        },
        {
            "uncorrectable-ecc": "confirmed",
            "xid-45-after-effect": "ruled-out",
            "device-plugin-unaware": "likely",
            "thermal-or-power": "ruled-out",
        },
        "uncorrectable-ecc",
    ),
    (
        "dcgm-dbe-counter-alone-confirms-ecc",
        {"gpu.ecc_dbe": 3},
        {"uncorrectable-ecc": "confirmed", "xid-45-after-effect": "ruled-out"},
        "uncorrectable-ecc",
    ),
    (
        "row-remap-failure-confirms-ecc",
        {"gpu.row_remap_failed": True, "gpu.ecc_dbe": 0},
        {"uncorrectable-ecc": "confirmed", "xid-45-after-effect": "ruled-out"},
        "uncorrectable-ecc",
    ),
    (
        "contained-and-uncontained-ecc-xids-confirm",
        {"xid.codes": [94, 95], "xid.primary_codes": [94, 95]},
        {"uncorrectable-ecc": "confirmed", "xid-45-after-effect": "ruled-out"},
        "uncorrectable-ecc",
    ),
    (
        "row-remap-recorded-is-likely-ecc",
        {"xid.codes": [63], "xid.primary_codes": [63]},
        {"uncorrectable-ecc": "likely", "xid-45-after-effect": "ruled-out"},
        "uncorrectable-ecc",
    ),
    (
        "zero-dbe-and-no-remap-rules-out-ecc",
        {"xid.codes": [31], "xid.primary_codes": [31], "gpu.ecc_dbe": 0, "gpu.row_remap_failed": False},
        {"uncorrectable-ecc": "ruled-out", "app-memory-fault": "likely"},
        "app-memory-fault",
    ),
    (
        "nvlink-xid74-confirms",
        {"xid.codes": [74], "xid.primary_codes": [74], "gpu.unhealthy_count": 0},
        {"nvlink-error": "confirmed", "device-plugin-unaware": "likely", "xid-45-after-effect": "ruled-out"},
        "nvlink-error",
    ),
    (
        "gsp-timeout-xid119-confirms",
        {"xid.codes": [119, 45], "xid.primary_codes": [119]},
        {"gsp-firmware": "confirmed", "xid-45-after-effect": "ruled-out"},
        "gsp-firmware",
    ),
    (
        "microcontroller-warning-xid61-is-likely-firmware",
        {"xid.codes": [61], "xid.primary_codes": [61]},
        {"gsp-firmware": "likely", "xid-45-after-effect": "ruled-out"},
        "gsp-firmware",
    ),
    (
        "corrupted-push-buffer-xid32-is-likely-pcie",
        {"xid.codes": [32], "xid.primary_codes": [32]},
        {"pcie-link": "likely"},
        "pcie-link",
    ),
    (
        "app-page-fault-13-31-43-then-45",
        {"xid.codes": [13, 31, 43, 45], "xid.primary_codes": [13, 31, 43], "gpu.unhealthy_count": 0},
        {"app-memory-fault": "likely"},
        "app-memory-fault",
    ),
    (
        "page-fault-next-to-79-is-not-called-an-app-bug",
        {"xid.codes": [31, 79], "xid.primary_codes": [31, 79], "gpu.fallen_off_bus": True},
        {"gpu-fallen-off-bus": "confirmed", "xid-45-after-effect": "ruled-out"},
        "gpu-fallen-off-bus",
    ),
    (
        "hardware-thermal-slowdown-confirms",
        {"gpu.throttle_reasons": ["thermal"], "gpu.temp_c": 93.0},
        {"thermal-or-power": "confirmed"},
        "thermal-or-power",
    ),
    (
        "hot-gpu-without-throttle-bits-is-likely",
        {"gpu.temp_c": 88.0},
        {"thermal-or-power": "likely"},
        "thermal-or-power",
    ),
    (
        "cool-remaining-gpus-do-not-rule-out-heat-for-a-lost-gpu",
        {"xid.codes": [79], "xid.primary_codes": [79], "gpu.fallen_off_bus": True, "gpu.temp_c": 52.0},
        {"gpu-fallen-off-bus": "confirmed", "xid-45-after-effect": "ruled-out"},
        "gpu-fallen-off-bus",
    ),
    (
        "only-an-xid-count-leaves-everything-unknown",
        {"xid.count": 2},
        {},
        "gpu-fallen-off-bus",
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


def test_xid45_alone_never_confirms_hardware(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    for extra in ({}, {"kernel.oom_kill": True}, {"container.last_terminated.exit_code": 137}):
        finding = judge(PLAYBOOK, make_facts({"xid.codes": [45], "xid.primary_codes": [], **extra}))
        statuses = {h.id: h.status for h in finding.hypotheses}
        assert all(statuses[hid] != "confirmed" for hid in HARDWARE), statuses
        assert statuses["device-plugin-unaware"] != "confirmed"
        assert _leader(finding) == "xid-45-after-effect"


def test_device_plugin_branch_never_confirms(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    """It explains why failures repeat, not why the GPU failed: it may not outrank the hardware cause."""
    finding = judge(
        PLAYBOOK,
        make_facts(
            {
                "xid.codes": [79],
                "xid.primary_codes": [79],
                "gpu.fallen_off_bus": True,
                "gpu.unhealthy_count": 0,
                "gpu.capacity_total": 8,
                "gpu.allocatable_total": 8,
            }
        ),
    )
    plugin = next(h for h in finding.hypotheses if h.id == "device-plugin-unaware")
    assert plugin.status == "likely"
    assert {e.fact for e in plugin.evidence} >= {"gpu.unhealthy_count", "gpu.capacity_total"}


def test_checks_name_the_node_and_the_gpu(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    target = Target(namespace="ml", node="gpu-node-7", pod="trainer-0")
    finding = judge(
        PLAYBOOK, make_facts({"xid.codes": [79], "xid.pci_bus_ids": ["0000:b3:00"], "gpu.fallen_off_bus": True}), target
    )
    lost = finding.hypotheses[0]
    assert lost.id == "gpu-fallen-off-bus"
    assert "dmesg -T | grep -iE 'xid|fallen off the bus|GPU is lost'" in lost.next_checks
    assert "lspci -vvv -s 0000:b3:00 | grep -E 'LnkCap|LnkSta'" in lost.next_checks
    assert any(
        m.startswith("kubectl cordon gpu-node-7, then kubectl drain gpu-node-7 --ignore-daemonsets")
        for m in lost.mitigations
    )
    ecc = next(h for h in finding.hypotheses if h.id == "uncorrectable-ecc")
    assert "nvidia-smi -q -d ECC" in ecc.next_checks
    assert 'DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname="gpu-node-7"}' in ecc.next_checks
    for h in finding.hypotheses:
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text


def test_bus_id_placeholder_when_unknown(
    make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    finding = judge(PLAYBOOK, make_facts({"gpu.fallen_off_bus": True}))
    lost = finding.hypotheses[0]
    assert "lspci -vvv -s <bdf> | grep -E 'LnkCap|LnkSta'" in lost.next_checks


@pytest.mark.parametrize(
    ("facts", "fires"),
    [
        ({"xid.codes": [45]}, True),
        ({"gpu.fallen_off_bus": True}, True),
        ({"gpu.ecc_dbe": 2}, True),
        ({"gpu.row_remap_failed": True}, True),
        ({"alert.symptoms": ["gpu-xid"]}, True),
        ({"gpu.ecc_dbe": 0, "gpu.row_remap_failed": False, "gpu.temp_c": 60.0}, False),
        ({"latency.p99_seconds": 0.8, "cpu.throttled_ratio": 0.4}, False),
    ],
    ids=["xid", "lost-gpu", "dbe", "row-remap", "alert", "healthy-dcgm", "latency-only"],
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
