"""NVIDIA kernel-module (NVRM) GPU faults outside an Xid line name the gpu-xid symptom and `gpu.nvrm_errors`.

The templates are those of NVIDIA/open-gpu-kernel-modules (collectors/catalogs/signals.yaml, the nvrm-* entries,
which cite file and versions), rendered here with sample values as the module prints them; the pastes are real,
cut at whole lines, with the thread beside each. The module's informational lines name nothing
(test_names_nothing.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES


def _facts(text: str, kind: ArtifactKind = ArtifactKind.TEXT) -> dict[str, Any]:
    result = parse_artifact(Artifact(id="paste.txt", kind=kind, content=text))
    facts: dict[str, Any] = {}
    for f in result.facts:  # a list fact is given once per line that holds it
        facts[f.name] = facts.get(f.name, []) + f.value if isinstance(f.value, list) else f.value
    return facts


# (template as the source prints it, with sample values; the error it is read as)
RENDERED = [
    ("NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x22:0x56:742)", "init-failed"),
    ("NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 2", "init-failed"),
    ("NVRM: rm_init_adapter failed for device bearing minor number 0", "init-failed"),
    ("NVRM: nvAssertOkFailedNoLog: Assertion failed: Reset required [NV_ERR_RESET_REQUIRED] (0x00000062) returned "
     "from status @ kernel_channel.c:2827", "reset-required"),
    ("NVRM: nvCheckOkFailedNoLog: Check failed: GPU currently in full-chip reset [NV_ERR_GPU_IN_FULLCHIP_RESET] "
     "(0x00000010) returned from status @ gpu.c:101", "reset-required"),
    ("NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) "
     "returned from status @ rs_server.c:259", "gpu-lost"),
    ("NVRM: The NVIDIA GPU 0000:b3:00.0\nNVRM: (PCI ID: 10de:2330) installed in this system has\n"
     "NVRM: fallen off the bus and is not responding to commands.", "gpu-lost"),
    ("NVRM: The NVIDIA probe routine failed for 2 device(s).", "probe-failed"),
    ("NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)\nNVRM: installed in this system is not supported by the\n"
     "NVRM: NVIDIA 595.45.04 driver release.", "unsupported"),
    ("NVRM: The NVIDIA GPU 0000:01:00.0 (PCI ID: 10de:1b80)\nNVRM: installed in this system is not supported by open\n"
     "NVRM: nvidia.ko because it does not include the required GPU", "unsupported"),
]


@pytest.mark.parametrize(("text", "error"), RENDERED)
def test_every_template_is_read_with_its_error(text: str, error: str) -> None:
    facts = _facts(text)
    assert facts.get("gpu.nvrm_errors") == [error], facts
    assert facts.get("evidence.symptoms") == ["gpu-xid"], facts
    # Read as a kernel log, the kernel parser may read the same line first (an init failure as a lost GPU).
    facts = _facts(text, ArtifactKind.KERNEL_LOG)
    assert "gpu-xid" in facts.get("evidence.symptoms", []), facts
    assert facts.get("gpu.nvrm_errors") == [error] or facts.get("gpu.fallen_off_bus") is True, facts


def test_a_gpu_lost_at_init_is_a_gpu_off_the_bus() -> None:
    assert _facts(RENDERED[6][0])["gpu.fallen_off_bus"] is True


# Real pastes (first_sight_pastes.yaml, each with its thread) and the errors each shows.
REAL = [
    ("gpu-operator-1146-rminitadapter-failed-syslog", ["init-failed"]),
    ("gpu-operator-649-rminitadapter-failed-dmesg", ["init-failed"]),
    ("nvsentinel-155-fallen-off-the-bus-without-xid", ["gpu-lost", "probe-failed"]),
    ("bumblebee-583-gpu-not-supported-by-release", ["unsupported", "probe-failed"]),
]


@pytest.mark.parametrize(("paste", "errors"), REAL)
def test_a_real_nvrm_fault_names_gpu_xid(paste: str, errors: list[str]) -> None:
    facts = _facts(PASTES[paste])
    assert sorted(facts.get("gpu.nvrm_errors", [])) == sorted(errors), facts
    assert "gpu-xid" in facts.get("evidence.symptoms", []), facts
