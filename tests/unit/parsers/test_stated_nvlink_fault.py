"""An NVLink fault said in a sentence without its Xid (stated.yaml's nvlink-fault): the symptom gpu-xid, never an Xid
code the sentence does not name; asked, negated and advice sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1355 (description, "Describe the bug")
REAL_1355 = (
    "While a vLLM engine (TP=2, 2 GPUs) was serving inference traffic on an\n"
    "8x B300 SXM6 node, the NVIDIA driver tore down the engine's CUDA\n"
    "channels with an uncorrectable NVLink error. The failure hit both\n"
)


@pytest.mark.parametrize("sentence", [
    REAL_1355,
    # Composed, one per shape the entry reads (the severities DCGM's NVLink health watch names, the verbs of a fault
    # seen, a link said down as nvidia-smi nvlink -s shows it inactive).
    "We hit a fatal NVLink error on GPU 3 during the all-reduce.",
    "An NVLink error was reported on the node right before the job died.",
    "NVLink errors were detected on two of the eight GPUs.",
    "After the crash NVLink link 2 went down on GPU 5.",
])
def test_an_nvlink_fault_said_runs_gpu_xid_without_a_code(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "gpu-xid" in got.get("symptoms", set()), got
    assert "xid.codes" not in got, got


@pytest.mark.parametrize("sentence", [
    "No NVLink errors were reported by nvidia-smi nvlink -e.",  # negated
    "How do I check for NVLink errors on an HGX node?",  # asked
    "Were any uncorrectable NVLink errors logged?",  # asked
    "Check nvidia-smi nvlink -e for NVLink errors before you drain the node.",  # advice
    "The GPUs talk over NVLink and the job runs fine.",  # healthy
])
def test_no_fault_said_gives_nothing(sentence: str) -> None:
    assert "gpu-xid" not in stated_facts(sentence).get("symptoms", set()), stated_facts(sentence)
