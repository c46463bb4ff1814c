"""GPU idle said in words (round 17): the job's other GPUs stuck at 0 % (one-gpu-used), GPU-Util said intermittently
to be 0 (gpu-util-swings), GPU利用率 with its figure (gpu-util-figure), an extra process said to slow a multi-GPU job
(extra-process-said-slows). Healthy, negated, asked and memory sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    "The other GPUs are stuck at 0% while the first one trains.",
    "The remaining GPUs were stuck idle during the whole epoch.",
])
def test_the_rest_of_the_gpus_stuck_at_zero_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("symptoms") == {"gpu-underutilized"}, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The other GPUs are stuck at 100% as well.",  # busy
    "The other GPUs are not stuck at 0%.",  # negated
])
def test_the_rest_busy_or_denied_gives_nothing(sentence: str) -> None:
    assert "symptoms" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    # https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/114 (description)
    "The GPU utilization rate will even become 0 every few seconds.",
    "the utilization of the GPUs would occasionally all be 0 for a few seconds.",
    "GPU utilization would sometimes be 0 between the batches.",
])
def test_utilisation_said_intermittently_zero_swings(sentence: str) -> None:
    assert stated_facts(sentence).get("gpu.util_swings") is True, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "the utilization of the GPU would occasionally be 100%.",  # busy
    "the utilization of the GPU would never be 0 during training.",  # denied
])
def test_utilisation_said_busy_does_not_swing(sentence: str) -> None:
    assert "gpu.util_swings" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize(("sentence", "figure"), [
    # https://github.com/wenet-e2e/wespeaker/issues/373 (description)
    ("单机多卡训练，只有GPU=0这张卡的利用率=100%，其他卡GPU利用率=0%，如何修复这个问题", 0.0),  # noqa: RUF001
    # https://github.com/PKU-YuanGroup/Video-LLaVA/issues/76 (title): the first figure is memory's (显存).
    ("为什么GPU0的显存利用率很高 99%，而其他的GPU利用率只有20%？", 20.0),  # noqa: RUF001
])
def test_gpu_utilisation_in_chinese_with_its_figure(sentence: str, figure: float) -> None:
    assert stated_facts(sentence).get("gpu.job_util_percent") == figure, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "GPU显存利用率 95%",  # memory's utilisation
    "GPU利用率和显存占用率分别为 90%",  # the figure follows the memory's name
])
def test_memory_utilisation_in_chinese_is_not_the_gpus(sentence: str) -> None:
    assert "gpu.job_util_percent" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The extra process slows down the training of my DDP job on 4 GPUs.",
    "I think the duplicate processes really halve the training speed on each GPU.",
])
def test_an_extra_process_said_to_slow_a_gpu_job_is_sharing(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("node.gpu_sharing") == "processes", got
    assert got.get("symptoms") == {"gpu-underutilized"}, got


@pytest.mark.parametrize("sentence", [
    # https://github.com/pytorch/pytorch/issues/64130 (title): extra contexts, no slowdown said.
    "Every process takes a tiny memory on each nvidia GPU card when using DDP.",
    "The additional process does not limit the speed of multi-gpu training.",  # negated
    "An extra process on the CPU limits the speed of the data loader.",  # no GPU side named
    "Does the second process slow the training on the GPU?",  # asked
    "The second process reduced the memory footprint on each GPU.",  # not the speed
])
def test_no_extra_process_slowdown_said_gives_nothing(sentence: str) -> None:
    assert "node.gpu_sharing" not in stated_facts(sentence), stated_facts(sentence)
