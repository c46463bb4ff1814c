"""Which GPU is which, read where nvidia-smi and dcgm-exporter print it (collectors/parsers/gpu/gpu_ids.py), from
real pastes (each with its thread), and joined to an Xid's bus id as recurrence keys (bot/memory/keys.py)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.keys import incident_keys
from bot.memory.recurrence import Seen, recall
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nvidia_smi
from collectors.parsers.metrics import prometheus_text
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text

# https://github.com/NVIDIA/nvidia-docker/issues/1146 (nvidia-smi -q, cut below its GPU heading)
QUERY = """\
    GPU UUID                        : GPU-8f639255-9bdd-d28c-78be-e05a47c7049e
    Minor Number                    : 3
    VBIOS Version                   : 90.02.17.00.DB
    MultiGPU Board                  : No
    Board ID                        : 0xaf00
    GPU Part Number                 : N/A
    Inforom Version
        Image Version               : G001.0000.02.04
        OEM Object                  : 1.1
        ECC Object                  : N/A
        Power Management Object     : N/A
    GPU Operation Mode
        Current                     : N/A
        Pending                     : N/A
    GPU Virtualization Mode
        Virtualization mode         : None
    IBMNPU
        Relaxed Ordering Mode       : N/A
    PCI
        Bus                         : 0xAF
        Device                      : 0x00
        Domain                      : 0x0000
        Device Id                   : 0x1E0410DE
        Bus Id                      : 00000000:AF:00.0
        Sub System Id               : 0x12FA10DE
"""

# https://github.com/influxdata/telegraf/issues/5812 (nvidia-smi -L on an A100 node, GPU 0 split into MIG devices)
LISTED = """\
GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-513536b6-7d19-9063-b049-1e69664bb298)
  MIG 1g.20gb     Device  0: (UUID: MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a)
  MIG 1g.20gb     Device  1: (UUID: MIG-a45882f0-9215-5733-a0c1-49286ab31cb5)
  MIG 1g.20gb     Device  2: (UUID: MIG-f00d722c-f4e1-52c9-aa31-750441ae1bfe)
  MIG 1g.20gb     Device  3: (UUID: MIG-930574a9-d43a-5d2b-95da-3e68384c8d6b)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-d8594bd4-0fc3-8595-e355-7c98138f3b95)
GPU 2: NVIDIA A100-SXM4-80GB (UUID: GPU-5e375e7e-b41f-155b-dcdc-534524c356fc)
GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-69ec2344-ebac-b028-f88f-452abb3d7f11)
"""

# https://github.com/NVIDIA/dcgm-exporter/pull/326 (dcgm-exporter's samples with the pci_bus_id label)
DCGM = """\
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{gpu="0",UUID="GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148",pci_bus_id="00000000:08:00.0",device="nvidia0",modelName="NVIDIA GeForce RTX 3090",Hostname="debian",err_code="0",err_msg="Unknown Error"} 0
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{gpu="0",UUID="GPU-96be9fff-fdfd-9b87-88d4-fe5b9a012148",pci_bus_id="00000000:08:00.0",device="nvidia0",modelName="NVIDIA GeForce RTX 3090",Hostname="debian"} 24268
"""  # noqa: E501  (verbatim lines)


def identities(text: str) -> list[str]:
    """gpu.identities of a paste, split into artifacts as a paste is, joined as the report joins them."""
    out: list[str] = []
    for artifact in artifacts_from_text(text, "paste"):
        for fact in parse_artifact(artifact).facts:
            if fact.name == "gpu.identities":
                out += [v for v in fact.value if v not in out]  # type: ignore[attr-defined]
    return out


def test_nvidia_smi_q_gives_the_uuid_with_its_bus_id() -> None:
    assert nvidia_smi.sniff(QUERY) >= 80
    assert identities(QUERY) == ["uuid=gpu-8f639255-9bdd-d28c-78be-e05a47c7049e bus=0000:af:00"]


def test_nvidia_smi_l_gives_each_board_and_no_mig_device() -> None:
    assert nvidia_smi.sniff(LISTED) >= 80
    assert identities(LISTED) == [
        "uuid=gpu-513536b6-7d19-9063-b049-1e69664bb298", "uuid=gpu-d8594bd4-0fc3-8595-e355-7c98138f3b95",
        "uuid=gpu-5e375e7e-b41f-155b-dcdc-534524c356fc", "uuid=gpu-69ec2344-ebac-b028-f88f-452abb3d7f11"]


def test_dcgm_exporter_labels_give_the_uuid_and_bus_id_once() -> None:
    facts = prometheus_text.parse(Artifact(id="m", kind=ArtifactKind.PROMETHEUS_METRICS, content=DCGM)).facts
    found = {v for f in facts if f.name == "gpu.identities" for v in f.value}  # type: ignore[attr-defined]
    assert found == {"uuid=gpu-96be9fff-fdfd-9b87-88d4-fe5b9a012148 bus=0000:08:00"}


def test_the_serial_and_heading_as_nvidia_smi_q_prints_them() -> None:
    # nvidia-smi's -q layout of recent drivers rendered with sample values (the real report below is a 390 driver's):
    # the heading's bus id, Serial Number before GPU UUID, and the rack's Chassis Serial Number left alone.
    text = ("==============NVSMI LOG==============\n\nAttached GPUs                             : 1\n"
            "GPU 00000000:3B:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n"
            "    Serial Number                         : 1654922012345\n"
            "    Chassis Serial Number                 : N/A\n"
            "    GPU UUID                              : GPU-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9\n")
    assert identities(text) == ["uuid=gpu-0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9 serial=1654922012345 bus=0000:3b:00"]


# https://github.com/NVIDIA/nvidia-docker/issues/738 (nvidia-smi -q on an AWS V100, its report cut after the board)
NVIDIA_DOCKER_738 = """\
==============NVSMI LOG==============

Timestamp                           : Thu May 17 22:11:09 2018
Driver Version                      : 390.30

Attached GPUs                       : 1
GPU 00000000:00:1E.0
    Product Name                    : Tesla V100-SXM2-16GB
    Product Brand                   : Tesla
    Display Mode                    : Enabled
    Display Active                  : Disabled
    Persistence Mode                : Enabled
    Accounting Mode                 : Disabled
    Accounting Mode Buffer Size     : 1920
    Driver Model
        Current                     : N/A
        Pending                     : N/A
    Serial Number                   : 0322817061565
    GPU UUID                        : GPU-8e2712fe-6590-250e-8b90-280dbc470b41
    Minor Number                    : 0
    VBIOS Version                   : 88.00.13.00.02
    MultiGPU Board                  : No
    Board ID                        : 0x1e
    GPU Part Number                 : 900-2G503-0000-000
"""


def test_a_real_report_gives_the_boards_serial_uuid_and_bus_id() -> None:
    assert identities(NVIDIA_DOCKER_738) == [
        "uuid=gpu-8e2712fe-6590-250e-8b90-280dbc470b41 serial=0322817061565 bus=0000:00:1e"]


# https://github.com/NVIDIA/NVSentinel/issues/155 (the Xid line a GPU falling off the bus prints)
XID_79 = "NVRM: Xid (PCI:0000:44:00): 79, GPU has fallen off the bus"


def test_a_board_pasted_under_an_xid_is_read_and_joined_only_when_it_is_the_xid_s() -> None:
    # Two real excerpts in one paste: the kernel log's reader takes the lot, and the board is still read.
    facts = [f for a in artifacts_from_text(f"{XID_79}\n{QUERY}", "paste") for f in parse_artifact(a).facts]
    found = {f.name: f.value for f in facts if f.name in ("gpu.identities", "xid.pci_bus_ids")}
    assert found == {"xid.pci_bus_ids": ["0000:44:00"],
                     "gpu.identities": ["uuid=gpu-8f639255-9bdd-d28c-78be-e05a47c7049e bus=0000:af:00"]}
    # The Xid came from 0000:44:00, the board printed is 0000:af:00: not the same GPU, so no UUID key.
    keys = incident_keys({"target": {"node": "gpu-7"}, "facts": found})
    assert [g.key for g in keys.gpus] == ["bus:gpu-7/0000:44:00"]


def _report(ids: list[str], xid_buses: list[str], node: str = "node-a") -> dict[str, object]:
    return {"target": {"node": node}, "facts": {"gpu.identities": ids, "xid.pci_bus_ids": xid_buses,
                                                "xid.codes": [79], "xid.hosts": [node]}}


def test_the_xid_s_bus_id_picks_its_board_among_the_node_s() -> None:
    every = ["uuid=gpu-aaaa0000-0000-0000-0000-000000000001 bus=0000:3b:00",
             "uuid=gpu-aaaa0000-0000-0000-0000-000000000002 serial=1654 bus=0000:86:00"]
    keys = incident_keys(_report(every, ["0000:86:00"]))
    assert sorted(g.key for g in keys.gpus) == ["bus:node-a/0000:86:00", "serial:1654",
                                               "uuid:gpu-aaaa0000-0000-0000-0000-000000000002"]
    assert {g.label for g in keys.gpus} == {"GPU 0000:86:00 on node-a"}
    # The same board later on another node (moved, or the node renamed): the UUID still names it.
    moved = incident_keys(_report(every[1:], ["0000:17:00"], node="node-b"))
    assert not [g for g in moved.gpus if g.key.startswith("uuid:")]  # not the Xid's bus: not this board
    alone = incident_keys({"facts": {"gpu.identities": every[1:]}})
    assert [g.key for g in alone.gpus] == ["uuid:gpu-aaaa0000-0000-0000-0000-000000000002", "serial:1654"]
    assert incident_keys({"facts": {"gpu.identities": every}}).gpus == ()  # a node's list names no one board


def test_a_board_moved_to_another_node_is_recalled_by_its_uuid() -> None:
    board = "uuid=gpu-aaaa0000-0000-0000-0000-000000000002 bus=0000:86:00"
    at = datetime(2026, 11, 20, tzinfo=UTC)
    before = Seen(1, at - timedelta(days=3), "Xid 79 node-a", incident_keys(_report([board], ["0000:86:00"])))
    moved = "uuid=gpu-aaaa0000-0000-0000-0000-000000000002 bus=0000:17:00"
    now = Seen(2, at, "Xid 79 node-b", incident_keys(_report([moved], ["0000:17:00"], node="node-b")))
    rec = recall(now, [before])
    assert [(ln.kind, ln.key) for ln in rec.links] == [("gpu", "gpu:uuid:gpu-aaaa0000-0000-0000-0000-000000000002")]
    assert rec.patterns[0].kind == "gpu-hardware-xids"


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_garbage_never_raises_and_gives_well_formed_entries(text: str) -> None:
    for content in (text, "    GPU UUID : GPU-" + text, 'm{UUID="GPU-' + text):
        for kind, parser in ((ArtifactKind.NVIDIA_SMI, nvidia_smi.parse),
                             (ArtifactKind.PROMETHEUS_METRICS, prometheus_text.parse)):
            for fact in parser(Artifact(id="g", kind=kind, content=content)).facts:
                if fact.name == "gpu.identities":
                    for value in fact.value:  # type: ignore[attr-defined]
                        assert {p.split("=")[0] for p in value.split()} <= {"uuid", "serial", "bus"}
