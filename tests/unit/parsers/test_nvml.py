"""NVML snapshots (the node agent's /v1/nvml JSON) to GPU health facts, on recorded-style snapshots."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.gpu import nvml
from collectors.vocabulary import VOCABULARY, conforms

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "nvml"


def run(text: str) -> ParseResult:
    return nvml.parse(Artifact(id="n1", kind=ArtifactKind.NVML, subject="node/gpu-node-7", content=text))


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def values(result: ParseResult) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for fact in result.facts:
        out.setdefault(fact.name, []).append(fact.value)
    return out


def cited_line(name: str, fact_name: str, result: ParseResult) -> str:
    fact = next(f for f in result.facts if f.name == fact_name)
    return fixture(name).split("\n")[fact.citation.start - 1]


def test_healthy_h100_node() -> None:
    result = run(fixture("h100-healthy.json"))
    assert values(result) == {
        "gpu.temp_c": [58.0],
        "gpu.util_percent": [100.0],
        "gpu.fb_used_ratio": [0.8399],
        "gpu.ecc_dbe": [0],
        "gpu.ecc_sbe": [0],
        "gpu.throttle_reasons": [[]],
        "gpu.row_remap_failed": [False],
        "gpu.fallen_off_bus": [False],
    }
    # Page retirement is Not Supported on an H100: normal, so not a problem.
    assert result.problems == []


def test_dbe_and_row_remap_failure() -> None:
    name = "h100-dbe-row-remap-failure.json"
    result = run(fixture(name))
    found = values(result)
    assert found["gpu.ecc_dbe"] == [2]
    assert found["gpu.ecc_sbe"] == [14]
    assert found["gpu.row_remap_failed"] == [True]
    assert found["xid.codes"] == [[48], [64]]
    assert found["xid.primary_codes"] == [[48], [64]]
    assert found["xid.pci_bus_ids"] == [["0000:2a:00"]]  # the kernel's spelling, as the kernel parser cites it
    assert '"uncorrected": 2' in cited_line(name, "gpu.ecc_dbe", result)
    assert '"failure": true' in cited_line(name, "gpu.row_remap_failed", result)
    assert '"xid": 48' in cited_line(name, "xid.codes", result)
    dbe = next(f for f in result.facts if f.name == "gpu.ecc_dbe")
    assert "GPU 1 GPU-4c1f8a2e-7b3d-5e9f-a1c2-d3e4f5a6b7c8 00000000:2A:00.0" in dbe.excerpt
    xid = next(f for f in result.facts if f.name == "xid.codes")
    # BDF -> UUID -> pod, so the report says whose job the failing GPU was running.
    assert "0000:2a:00 -> GPU-4c1f8a2e-7b3d-5e9f-a1c2-d3e4f5a6b7c8 held by ml/trainer-3/trainer" in xid.excerpt


def test_lost_gpu_is_fallen_off_the_bus() -> None:
    name = "h100-gpu-lost.json"
    result = run(fixture(name))
    found = values(result)
    assert found["gpu.fallen_off_bus"] == [True]
    assert found["xid.codes"] == [[79]]
    assert '"lost": true' in cited_line(name, "gpu.fallen_off_bus", result)
    # The seven GPUs still answering give their readings; the lost one is not a parse problem.
    assert found["gpu.temp_c"] == [51.0]
    assert result.problems == []


def test_unavailable_nvml_gives_no_facts_and_says_why() -> None:
    result = run(fixture("nvml-unavailable.json"))
    assert result.facts == []
    assert result.problems == ["NVML unavailable on cpu-node-1: NVML Shared Library Not Found; GPU health not read"]


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_every_fact_is_in_the_vocabulary_and_cited(name: str) -> None:
    result = run(fixture(name))
    lines = fixture(name).split("\n")
    for fact in result.facts:
        assert conforms(fact.value, VOCABULARY[fact.name].type), fact
        assert 1 <= fact.citation.start <= len(lines)
        assert fact.citation.artifact == "n1"
        assert fact.subject == "node/gpu-node-7"


@pytest.mark.parametrize("name", sorted(p.name for p in FIXTURES.glob("*.json")))
def test_sniff_recognises_snapshots(name: str) -> None:
    assert nvml.sniff(fixture(name)) >= 90


def test_compact_json_still_parses_citing_line_one() -> None:
    doc = json.loads(fixture("h100-dbe-row-remap-failure.json"))
    result = run(json.dumps(doc))
    assert values(result)["gpu.ecc_dbe"] == [2]
    assert {f.citation.start for f in result.facts} == {1}


def test_throttle_reasons_skip_benign_bits_and_union_across_gpus() -> None:
    doc = json.loads(fixture("h100-healthy.json"))
    doc["devices"][0]["clocks_throttle_reasons"] = 0x1 | 0x4  # idle + software power cap
    doc["devices"][3]["clocks_throttle_reasons"] = 0x40 | 0x4  # hardware thermal + power cap
    result = run(json.dumps(doc, indent=2))
    assert values(result)["gpu.throttle_reasons"] == [["power"], ["thermal"]]


def test_only_secondary_xids_give_an_empty_primary_list() -> None:
    doc = json.loads(fixture("h100-healthy.json"))
    doc["xid_events"] = [{"time": "2026-11-22T06:00:00Z", "source": "kernel", "pci_bus_id": "0000:18:00", "xid": 45}]
    found = values(run(json.dumps(doc, indent=2)))
    assert found["xid.codes"] == [[45]]
    assert found["xid.primary_codes"] == [[]]


def test_field_errors_other_than_not_supported_are_problems() -> None:
    doc = json.loads(fixture("h100-healthy.json"))
    del doc["devices"][2]["temperature_c"]
    doc["devices"][2]["errors"]["temperature_c"] = "Insufficient Permissions"
    doc["errors"] = {"kernel_xids": "cannot read /dev/kmsg: Operation not permitted"}
    result = run(json.dumps(doc, indent=2))
    assert result.problems == [
        "GPU 2 GPU-2e7a9c41-0b5d-4f3e-9a8c-6d1e2f3a4b5c 00000000:3A:00.0: NVML could not read "
        "temperature_c: Insufficient Permissions",
        "NVML snapshot: kernel_xids: cannot read /dev/kmsg: Operation not permitted",
    ]
    assert values(result)["gpu.temp_c"] == [58.0]  # GPU 5 is as hot as GPU 2 was


def test_volatile_ecc_preferred_aggregate_as_fallback() -> None:
    doc = json.loads(fixture("h100-healthy.json"))
    for device in doc["devices"]:
        del device["ecc"]["volatile"]
    found = values(run(json.dumps(doc, indent=2)))
    assert found["gpu.ecc_sbe"] == [3]  # aggregate corrected count on GPU 2


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"available": true, "devices": "x"}',
                                  '{"available": true, "devices": [{"index": "a", "memory": {"total_bytes": 0}}]}',
                                  '{"available": true, "devices": [1, null], "xid_events": [{"xid": "79"}]}'])
def test_bad_input_never_raises(text: str) -> None:
    result = run(text)
    assert all(conforms(f.value, VOCABULARY[f.name].type) for f in result.facts)
    assert not any(p.startswith("internal") for p in result.problems)


# ---- PCIe link and NVLink (seed 001:671-673, 001:808) ------------------------------------------------------


def _links(result: ParseResult) -> dict[str, list[Any]]:
    return {k: v for k, v in values(result).items() if k.startswith(("gpu.pcie", "gpu.nvlink"))}


def test_full_links_and_clean_nvlinks() -> None:
    result = run(fixture("h100-links-healthy.json"))
    assert result.problems == []
    assert _links(result) == {"gpu.pcie_link_degraded": [False], "gpu.pcie_replays": [0], "gpu.nvlink_errors": [0],
                              "gpu.nvlink_inactive_links": [0]}


def test_a_link_trained_to_x8_and_an_nvlink_with_crc_errors() -> None:
    result = run(fixture("h100-x8-link-nvlink-crc.json"))
    assert result.problems == []
    # GPU 3: width 8 of 16; link 2 counts 1841 CRC flit + 96 replay errors; link 17 is down.
    assert _links(result) == {"gpu.pcie_link_degraded": [True], "gpu.pcie_replays": [212],
                              "gpu.nvlink_errors": [1841 + 96], "gpu.nvlink_inactive_links": [1]}
    degraded = next(f for f in result.facts if f.name == "gpu.pcie_link_degraded")
    assert degraded.excerpt.startswith("GPU 3 ") and degraded.excerpt.endswith("PCIe link x8 of x16")
    assert cited_line("h100-x8-link-nvlink-crc.json", "gpu.pcie_link_degraded", result).strip() == '"width": 8,'
    assert cited_line("h100-x8-link-nvlink-crc.json", "gpu.pcie_replays", result).strip() == '"replay_count": 212'


def test_an_idle_gpu_at_gen1_is_not_a_degraded_link() -> None:
    # An idle GPU lowers its link generation to save power; only the width, or the generation under load, counts.
    result = run(fixture("h100-idle-link-gen1.json"))
    assert _links(result)["gpu.pcie_link_degraded"] == [False]


def test_a_lower_generation_under_load_is_degraded() -> None:
    doc = json.loads(fixture("h100-links-healthy.json"))
    doc["devices"][5]["pcie"]["gen"] = 3
    result = run(json.dumps(doc, indent=2))
    degraded = next(f for f in result.facts if f.name == "gpu.pcie_link_degraded")
    assert degraded.value is True and degraded.excerpt.endswith("Gen3 of Gen5 at 97% utilisation")


def test_snapshots_without_link_fields_say_nothing_about_links() -> None:
    assert _links(run(fixture("h100-healthy.json"))) == {}
