"""NVSwitch SXid lines (collectors/catalogs/sxid.yaml) read from kernel and fabric manager logs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.catalogs.sxid import unit_of, units
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.node import kernel
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text


def run(text: str) -> ParseResult:
    return kernel.parse(Artifact(id="k1", kind=ArtifactKind.KERNEL_LOG, subject="node/gpu-node-2", content=text))


def sxids(result: ParseResult) -> list[object]:
    return [f.value for f in result.facts if f.name == "nvswitch.sxid_codes"]


# https://github.com/NVIDIA/nvtrust/issues/124 (dmesg, H100 HGX board, driver 570)
NVTRUST_124 = """\
[   20.898856] nvidia-nvswitch1: using MSI
[   25.942622] nvidia-nvswitch: Probing device 0000:03:00.0, Vendor Id = 0x10de, Device Id = 0x22a3, Class = 0x68000
[   25.948274] nvidia-nvswitch1: SXid (PCI:0000:02:00.0): 22013, Non-fatal, Link 00 Minion Link DLREQ interrupt
[   25.950244] nvidia-nvswitch1: SXid (PCI:0000:02:00.0): 22013, Severity 0 Engine instance 00 Sub-engine instance 00
"""

# https://github.com/leptonai/gpud/pull/338 (dmesg -x --time-format iso)
GPUD_338 = (
    "kern  :err   : 2025-01-25T10:34:54,859532+00:00 nvidia-nvswitch1: SXid (PCI:0000:84:00.0): 12028, Data "
    "{0x000001c0, 0x00bd5c8a, 0x00000500, 0x00000064, 0x00000000, 0x40008000, 0x5a001100, 0x00000000, 0x00000000}\n"
)


def test_real_dmesg_sxid_lines_give_their_code_once() -> None:
    assert sxids(run(NVTRUST_124)) == [[22013]]
    assert kernel.sniff(NVTRUST_124) >= 85


def test_real_dmesg_x_sxid_line() -> None:
    assert sxids(run(GPUD_338)) == [[12028]]


# The driver's print (error_nvswitch.h: "nvidia-nvswitch<N>: SXid (PCI:<bdf>): <code>, <text>") and the fabric
# manager's (fabricmanager.log "detected NVSwitch <fatal|non-fatal> error <code> on fid ..."), rendered with each
# unit's first code and the prefixes kernel logs carry.
TEMPLATES = [
    "[  101.000001] nvidia-nvswitch{n}: SXid (PCI:0000:aa:00.0): {code}, Fatal, Link 03 sample",
    "Apr 22 21:25:20 node-1 kernel: nvidia-nvswitch{n}: SXid (PCI:0000:aa:00.0): {code}, Non-fatal, Link 03 sample",
    "node-1: kern:     err: [2026-04-22T21:25:20.466440686Z]: nvidia-nvswitch{n}: SXid (PCI:0000:aa:00.0): {code}, "
    "Severity 1 Engine instance 12 Sub-engine instance 00",
    "[Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error {code} on fid 0 on NVSwitch pci bus id "
    "00000000:86:00.0 physical id {n} port 33",
    "[Jul 09 2024 18:14:07] [ERROR] [tid 12727] detected NVSwitch non-fatal error {code} on fid 0 on NVSwitch pci "
    "bus id 00000000:86:00.0 physical id {n} port 61",
]


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("block", sorted(units()))
def test_every_unit_renders_and_reads_back(template: str, block: int) -> None:
    code = block * 1000 + 7
    assert sxids(run(template.format(n=3, code=code))) == [[code]]
    assert unit_of(code) is not None


def test_gpu_xid_and_grep_commands_are_not_sxids() -> None:
    text = (
        "[  5.1] NVRM: Xid (PCI:0000:48:00): 79, pid=1, GPU has fallen off the bus.\n"
        "$ dmesg | grep 'SXid (PCI'\n"
        "sudo grep 'detected NVSwitch fatal error 12028' /var/log/fabricmanager.log\n"
        "[  5.2] nvidia-nvswitch0: using MSI\n"
    )
    assert sxids(run(text)) == []


def test_unit_outside_the_documented_blocks_is_none() -> None:
    assert unit_of(9999) is None
    assert unit_of(24007) == "nport-sourcetrack"


@given(st.text(max_size=400))
def test_garbage_never_raises(text: str) -> None:
    run(text)


def test_an_sxid_asked_about_in_prose_is_no_sxid_line() -> None:
    text = "What does SXid 12028 mean? Our NVSwitch fabric manager docs list fatal error 20034 too.\n"
    names = {f.name for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts}
    assert "nvswitch.sxid_codes" not in names
