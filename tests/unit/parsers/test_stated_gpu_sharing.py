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


# ---- fix round f6: other processes said to share the GPU, with the slowdown (stated.yaml's
# gpu-shared-by-processes-slower, gpu-second-copy-per-item-time). Verbatim descriptions, with their sources.

# https://github.com/tensorflow/tensorflow/issues/11022 (description, first sentence)
REAL_TF_11022 = (
    "I've observed a major performance hit when running two identical models on the same GPU, with allow_growth set "
    "to True, so that each process, which only needs a small fraction of the GPU memory (~1gb/11gb are used when "
    "allow_growth is set to true)."
)
# https://github.com/malllabiisc/EmbedKGQA/issues/50 (description)
REAL_EMBEDKGQA_50 = (
    "The program only takes up more than 1G of GPU memory, which is very fast when run alone. However, if there are "
    "other programs running on this GPU, it will also take up more than 1G of GPU memory, but the speed will become "
    "as slow as the CPU, why?"
)
# https://github.com/pytorch/pytorch/issues/14531 (description)
REAL_PYTORCH_14531 = (
    "Run the same code on a GPU. When only one process is running, the time is about 5 ms per image, and the "
    "gpu-util is about 50%. When you run the same program again, both of them are about 10ms per image, and the "
    "gpu-util is also about 50%. Why? and how to solve it?"
)


@pytest.mark.parametrize(("text", "symptom"), [(REAL_TF_11022, "gpu-underutilized"),
                                                (REAL_EMBEDKGQA_50, "gpu-underutilized"),
                                                (REAL_PYTORCH_14531, "latency")])
def test_other_processes_said_on_the_gpu_with_a_slowdown_are_read(text: str, symptom: str) -> None:
    got = stated_facts(text)
    assert got.get("node.gpu_sharing") == "processes", got
    assert symptom in got.get("symptoms", set()), got


@pytest.mark.parametrize("sentence", [
    # Composed: the same words, healthy, negated, asked, or with no GPU or no slowdown.
    "We run two models on the same GPU and both are fast.",  # no slowdown
    "Running two processes on the same GPU did not slow them down.",  # negated
    "Will running two processes on the same GPU slow them down?",  # asked
    "Two other processes on the same node slowed down the build.",  # no GPU
    "When you run the same program again, both of them are about 10ms per request on the CPU box.",  # no GPU
    "When you run the same program again, both of them finish fine on the GPU.",  # no time per item
])
def test_sharing_without_its_slowdown_or_gpu_gives_nothing(sentence: str) -> None:
    assert "node.gpu_sharing" not in stated_facts(sentence), stated_facts(sentence)
