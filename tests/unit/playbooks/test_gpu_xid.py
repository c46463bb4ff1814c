"""The gpu-xid playbook beyond its case table (playbooks/cases/gpu-xid.yaml).

Xid 45 is an
after-effect: after a hardware Xid the hardware Xid leads, and 45 alone never confirms a hardware fault.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.report import Finding, Target
from tests.unit.playbooks.table import fires, linted_with_sources
from tests.unit.playbooks.verdicts import leader as _leader

PLAYBOOK = "gpu-xid"
HARDWARE = ["gpu-fallen-off-bus", "uncorrectable-ecc", "nvlink-error", "gsp-firmware", "pcie-link", "thermal-or-power"]


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
    ("facts", "expected"),
    [
        ({"xid.codes": [45]}, True),
        ({"gpu.fallen_off_bus": True}, True),
        ({"gpu.ecc_dbe": 2}, True),
        ({"gpu.row_remap_failed": True}, True),
        ({"alert.symptoms": ["gpu-xid"]}, True),
        ({"gpu.nvlink_inactive_links": 1}, True),
        ({"gpu.nvlink_inactive_links": 0, "gpu.nvlink_errors": 3, "gpu.pcie_link_degraded": False}, False),
        ({"gpu.ecc_dbe": 0, "gpu.row_remap_failed": False, "gpu.temp_c": 60.0}, False),
        ({"latency.p99_seconds": 0.8, "cpu.throttled_ratio": 0.4}, False),
    ],
    ids=["xid", "lost-gpu", "dbe", "row-remap", "alert", "nvlink-down", "healthy-links", "healthy-dcgm",
         "latency-only"],
)
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    linted_with_sources(PLAYBOOK)


def _nvlink_xids_in_playbook() -> set[int]:
    import re

    import yaml

    spec = yaml.safe_load(Path("playbooks/gpu-xid.yaml").read_text(encoding="utf-8"))
    rule = next(h["likely"] for h in spec["hypotheses"] if h["id"] == "nvlink-error")
    found = re.search(r"xid\.codes\.exists\(c, c in \[([\d, ]+)\]\)", rule)
    assert found, rule
    return {int(code) for code in found.group(1).split(",")}


def test_nvlink_error_is_likely_on_every_uncertain_nvlink_xid_of_the_catalog() -> None:
    """fix round f7: the likely rule's codes are the catalog's uncertain NVLink Xids (nverror.h NVLINK_*), no fewer,
    no more; 74, the one the catalog is sure of, confirms."""
    from collectors.catalogs.xid import load_catalog

    nvlink = {code for code, entry in load_catalog().items() if entry.name.startswith("NVLink") and entry.uncertain}
    assert nvlink >= {145, 149}
    assert _nvlink_xids_in_playbook() == nvlink


@pytest.mark.parametrize(("code", "status"), [(74, "confirmed"), (145, "likely"), (149, "likely")])
def test_an_nvlink_xid_points_at_nvlink_error(
    code: int, status: str, make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding]
) -> None:
    finding = judge(PLAYBOOK, make_facts({"xid.codes": [code], "xid.primary_codes": [code]}))
    assert {h.id: h.status for h in finding.hypotheses}["nvlink-error"] == status
