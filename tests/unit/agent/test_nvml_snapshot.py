"""The NVML snapshot and Xid watch against a recorded fake of pynvml; pod-resources and PCI lookups."""

from __future__ import annotations

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pynvml

from collectors.agent import pci, pod_resources, xid_map
from collectors.agent.bounded import dump_json
from collectors.agent.kmsg import read_kmsg
from collectors.agent.nvml import SCHEMA, XidWatcher, load_nvml, snapshot
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nvml as nvml_parser
from tests.unit.agent.fake_nvml import FakeNvml, h100_node

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agent"


def test_real_pynvml_without_a_gpu_says_the_library_is_missing() -> None:
    doc = snapshot(load_nvml(), "cpu-node-1")
    assert doc["available"] is False
    assert doc["error"] == "NVML Shared Library Not Found"
    assert doc["schema"] == SCHEMA and doc["node"] == "cpu-node-1"


def test_missing_binding_is_unavailable_too() -> None:
    assert snapshot(None)["error"] == "nvidia-ml-py (pynvml) is not installed"


def test_healthy_devices_are_read_field_by_field() -> None:
    fake = FakeNvml(h100_node())
    doc = snapshot(fake, "gpu-node-2")
    assert doc["available"] is True and doc["device_count"] == 8 and doc["driver_version"] == "550.90.07"
    first = doc["devices"][0]
    assert first["uuid"] == "GPU-9d3b1a52-6f0e-3c4e-8d2b-7e1f0a9c4b21"
    assert first["pci_bus_id"] == "00000000:18:00.0"
    assert first["temperature_c"] == 31 and first["power_w"] == 71.2 and first["power_limit_w"] == 700.0
    assert first["clocks_throttle_reasons"] == 1
    assert first["remapped_rows"] == {"correctable": 0, "uncorrectable": 0, "pending": False, "failure": False}
    assert first["ecc"]["volatile"] == {"corrected": 0, "uncorrected": 0}
    # Ampere and later answer Not Supported for page retirement: recorded, nothing else lost.
    assert "retired_pages" not in first
    assert first["errors"] == {"retired_pages.sbe": "Not Supported", "retired_pages.dbe": "Not Supported",
                               "retired_pages.pending": "Not Supported"}
    assert first["lost"] is False
    assert fake.initialised == 0  # every init was shut down again


def test_retired_pages_on_older_gpus() -> None:
    gpus = h100_node()[:1]
    gpus[0].retired = {pynvml.NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR: [0x1F2A0, 0x1F2A1]}
    gpus[0].retired_pending = True
    assert snapshot(FakeNvml(gpus))["devices"][0]["retired_pages"] == {"sbe": 0, "dbe": 2, "pending": True}


def test_lost_gpu_is_marked_and_the_others_still_read() -> None:
    doc = snapshot(FakeNvml(h100_node(lost=3)))
    lost = doc["devices"][3]
    assert lost["lost"] is True and lost["errors"]["temperature_c"] == "GPU is lost"
    assert "temperature_c" not in lost
    assert all(d["lost"] is False and "temperature_c" in d for i, d in enumerate(doc["devices"]) if i != 3)
    facts = nvml_parser.parse(Artifact(id="n", kind=ArtifactKind.NVML, content=dump_json(doc))).facts
    assert [f.value for f in facts if f.name == "gpu.fallen_off_bus"] == [True]


def test_init_failure_other_than_missing_library() -> None:
    doc = snapshot(FakeNvml([], init_error=pynvml.NVML_ERROR_DRIVER_NOT_LOADED))
    assert doc == doc | {"available": False, "error": "Driver Not Loaded"}


def test_xid_watcher_buffers_events_with_uuid_and_bus_id() -> None:
    fake = FakeNvml(h100_node())
    fake.gpus[5].xid_events_supported = False  # one device refusing registration does not stop the watch
    watcher = XidWatcher(fake, wait_ms=20)
    before = datetime.now(UTC) - timedelta(seconds=1)
    assert watcher.start()
    try:
        fake.emit_xid(2, 79)
        fake.emit_xid(4, 48)
        deadline = time.monotonic() + 5
        while len(watcher.events(before)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        watcher.stop()
    events = watcher.events(before)
    assert [(e["xid"], e["uuid"], e["pci_bus_id"], e["source"]) for e in events] == [
        (79, "GPU-2e7a9c41-0b5d-4f3e-9a8c-6d1e2f3a4b5c", "00000000:3A:00.0", "nvml-event"),
        (48, "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d", "00000000:9A:00.0", "nvml-event"),
    ]
    assert watcher.events(datetime.now(UTC) + timedelta(seconds=5)) == []
    assert fake.event_set_freed and fake.initialised == 0


def test_xid_watcher_does_not_start_without_nvml() -> None:
    watcher = XidWatcher(load_nvml())
    assert not watcher.start()
    assert watcher.error == "NVML Shared Library Not Found"


def test_pod_resources_dump_maps_gpu_uuids_to_containers() -> None:
    found = pod_resources.load(FIXTURES / "pod-resources.json", Path("/nonexistent.sock"))
    assert found.available
    assert found.by_device == {
        "GPU-4c1f8a2e-7b3d-5e9f-a1c2-d3e4f5a6b7c8": ["ml/trainer-3/trainer"],
        "GPU-9d3b1a52-6f0e-3c4e-8d2b-7e1f0a9c4b21": ["ml/trainer-3/trainer"],
        "GPU-2e7a9c41-0b5d-4f3e-9a8c-6d1e2f3a4b5c": ["research/notebook-0/jupyter"],  # time-sliced replica
    }


def test_pod_resources_snake_case_dump() -> None:
    doc = {"pod_resources": [{"name": "p", "namespace": "n", "containers": [
        {"name": "c", "devices": [{"resource_name": "nvidia.com/gpu", "device_ids": ["GPU-1"]}]}]}]}
    assert pod_resources.parse_dump(doc) == {"GPU-1": ["n/p/c"]}
    assert pod_resources.parse_dump({"podResources": "junk"}) == {}


def test_pod_resources_without_a_dump_say_why(tmp_path: Path) -> None:
    socket = tmp_path / "kubelet.sock"
    assert pod_resources.load(None, socket).note == f"pod-resources unavailable: no kubelet socket at {socket}"
    socket.touch()
    found = pod_resources.load(None, socket)
    assert not found.available and "no gRPC client" in found.note
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    assert pod_resources.load(bad, socket).note.startswith(f"pod-resources unavailable: cannot read {bad}")


def test_kernel_xids_map_bdf_to_uuid_to_pod() -> None:
    records = read_kmsg(FIXTURES / "kmsg")
    boot = datetime(2026, 11, 22, 3, 0, tzinfo=UTC)
    events = xid_map.kernel_xids(records, boot)
    assert [(e["xid"], e["pci_bus_id"], e["time"]) for e in events] == [
        (79, "0000:18:00", "2026-11-22T05:30:00.000Z")]
    doc = snapshot(FakeNvml(h100_node()))
    pods = pod_resources.parse_dump(json.loads((FIXTURES / "pod-resources.json").read_text()))
    xid_map.attach(events, doc["devices"], pods)
    assert events[0]["uuid"] == "GPU-9d3b1a52-6f0e-3c4e-8d2b-7e1f0a9c4b21"
    assert events[0]["pods"] == ["ml/trainer-3/trainer"]
    assert doc["devices"][2]["pods"] == ["research/notebook-0/jupyter"]
    assert doc["devices"][7]["pods"] == []


def test_bdf_keys_compare_kernel_and_nvml_spellings() -> None:
    assert xid_map.bdf_key("0000:18:00") == xid_map.bdf_key("00000000:18:00.0") == (0, 0x18, 0)
    assert xid_map.bdf_key("not a bdf") is None


def test_nvidia_gpus_on_the_pci_bus(tmp_path: Path) -> None:
    devices = tmp_path / "bus" / "pci" / "devices"
    for bdf, vendor, klass in [("0000:18:00.0", "0x10de", "0x030200"), ("0000:05:00.0", "0x10de", "0x068000"),
                               ("0000:00:1f.0", "0x8086", "0x060100")]:
        (devices / bdf).mkdir(parents=True)
        (devices / bdf / "vendor").write_text(vendor + "\n")
        (devices / bdf / "class").write_text(klass + "\n")
    assert pci.nvidia_gpus(tmp_path) == ["0000:18:00.0"]  # the NVSwitch bridge is not a GPU
    assert pci.nvidia_gpus(tmp_path / "none") == []


def test_pcie_link_and_nvlink_counters_are_read() -> None:
    gpus = h100_node()
    gpus[3].pcie = (4, 5, 8, 16)  # trained down to x8
    gpus[3].pcie_replays = 212
    gpus[3].nvlinks = [True] * 17 + [False]
    gpus[3].nvlink_errors = {(2, pynvml.NVML_NVLINK_ERROR_DL_CRC_FLIT): 1841,
                             (2, pynvml.NVML_NVLINK_ERROR_DL_REPLAY): 96}
    doc = snapshot(FakeNvml(gpus), "gpu-node-2")
    healthy, bad = doc["devices"][0], doc["devices"][3]
    assert healthy["pcie"] == {"gen": 5, "gen_max": 5, "width": 16, "width_max": 16, "replay_count": 0}
    assert len(healthy["nvlinks"]) == 18 and healthy["nvlinks"][0] == {
        "link": 0, "active": True, "crc_flit": 0, "crc_data": 0, "replay": 0, "recovery": 0}
    assert bad["pcie"] == {"gen": 4, "gen_max": 5, "width": 8, "width_max": 16, "replay_count": 212}
    assert bad["nvlinks"][2]["crc_flit"] == 1841 and bad["nvlinks"][2]["replay"] == 96
    assert bad["nvlinks"][17] == {"link": 17, "active": False}  # counters are read on active links only
    assert "nvlink" not in bad["errors"]  # link 18 does not exist: the walk ends there, no error


def test_a_gpu_without_nvlink_records_it_once() -> None:
    gpus = h100_node()[:1]
    gpus[0].nvlinks = None
    device = snapshot(FakeNvml(gpus))["devices"][0]
    assert "nvlinks" not in device
    assert device["errors"]["nvlink"] == "Not Supported"


def test_a_lost_gpu_reads_no_link() -> None:
    device = snapshot(FakeNvml(h100_node(lost=0)[:1]))["devices"][0]
    assert device["lost"] is True and "pcie" not in device and "nvlinks" not in device
