"""GPU sharing said in words (stated.yaml's gpu-sharing-time-slicing, gpu-sharing-mps) and a job said to gain nothing
from more GPUs (scaling-said-flat). Negated, asked and other subjects' sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/NVIDIA/gpu-operator/issues/645 (description, "Issue or feature description")
REAL_645 = (
    "I observed that when using Nvidia GPU Operator, the throughput of a Yolo model remained constant regardless of "
    "the number of GPUs assigned to the pod. I conducted experiments with a single Yolo workload on a machine with "
    "two K80 Tesla GPUs time-sliced into 8 replicas (4 each). Despite varying the number of GPUs assigned to the pod "
    "(ranging from 1 to 8 replicas), the throughput of the model did not show an expected increase."
)


def test_the_real_description_says_both() -> None:
    got = stated_facts(REAL_645)
    assert got.get("node.gpu_sharing") == "time-slicing", got
    assert got.get("train.scaling_said_flat") is True, got


@pytest.mark.parametrize(("sentence", "mode"), [
    # Composed from the device plugin's and the GPU Operator's names for the modes.
    ("Each A100 is time-sliced into 4 replicas by the device plugin.", "time-slicing"),
    ("We enabled time slicing on the T4 nodes with the GPU Operator.", "time-slicing"),
    ("The GPUs are shared with MPS enabled on the node.", "mps"),
    ("We run the CUDA Multi-Process Service on every GPU node.", "mps"),
])
def test_a_sharing_mode_said_is_read(sentence: str, mode: str) -> None:
    assert stated_facts(sentence).get("node.gpu_sharing") == mode, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The GPUs are not time-sliced on this cluster.",  # negated
    "Should I use time-slicing for the GPUs?",  # asked
    "The video frames are time-sliced before encoding.",  # no GPU named
    "Our MPS reporting is enabled for the team.",  # another MPS
])
def test_no_sharing_said_gives_nothing(sentence: str) -> None:
    assert "node.gpu_sharing" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The throughput stays the same no matter how many GPUs we give the job.",
    "Training speed does not scale with more GPUs on this node.",
    "The fps remained flat irrespective of the number of replicas.",
])
def test_scaling_said_flat_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("train.scaling_said_flat") is True, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "Does the throughput stay the same regardless of the number of GPUs?",  # asked
    "The throughput grows with more GPUs, as expected.",  # healthy
    "The memory use remained constant regardless of the number of GPUs.",  # another figure
])
def test_no_flat_scaling_said_gives_nothing(sentence: str) -> None:
    assert "train.scaling_said_flat" not in stated_facts(sentence), stated_facts(sentence)
