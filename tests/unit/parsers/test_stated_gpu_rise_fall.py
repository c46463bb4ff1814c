"""GPU utilisation said to rise and fall, or to drop to zero at a period (stated.yaml's gpu-util-rises-and-falls,
gpu-util-zero-periodically): both give gpu.util_swings. A busy range, the CPU's swing, a negation, a question and a
one-off drop are not read."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    "The GPU utilization goes up and down all the time.",
    "GPU usage rate keeps changing ups and downs during the epoch.",
    "The gpu utilisation rises and falls while training.",
    "GPU util climbs from 5% up to 80% and then back down to 5% again.",
    "The GPU usage goes from ~2% to about 70% and down to 0-2% again.",
    "Every 20 steps the GPU util drops to 0%.",
    "Periodically the training pauses and GPU usage goes to zero.",
    "The GPU utilization falls to 0% every few seconds.",
    "GPU-Util drops to 0 every 100 iterations while one CPU core is busy.",
])
def test_a_rise_and_fall_or_a_periodic_zero_swings(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("gpu.util_swings") is True and "gpu-underutilized" in got.get("symptoms", set()), got  # type: ignore[operator]


@pytest.mark.parametrize("sentence", [
    "The GPU utilization goes from 80% up to 95% and back down to 85% again.",  # never idle
    "The CPU utilization goes up and down all the time.",  # another resource
    "The GPU utilization does not go up and down.",  # negated
    "Does the GPU util drop to 0% every 50 steps?",  # asked
    "Every 50 steps we save a checkpoint and the GPU memory is 20 GB.",  # no utilisation
    "GPU util dropped to 0% once after the job finished.",  # one drop, no period
])
def test_no_swing_from_a_busy_range_the_cpu_a_negation_or_a_single_drop(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "gpu.util_swings" not in got, got


# Verbatim, cut at whole lines; the source beside each.
@pytest.mark.parametrize(("url", "paste"), [
    ("https://github.com/WongKinYiu/yolov7/issues/2064",
     "We are encountering a problem during training, which I believe is related to the dataloader. During training,"
     " **GPU utilization sometimes drops to 0% and at other times increases to 50%-70%,** resulting in very long"
     " iteration times. One epoch takes almost 50 minutes. I tried increasing the number of workers (16, 24), but it"
     " did not fix the issue."),
])
def test_real_pastes_of_a_utilisation_at_zero_sometimes_swing(url: str, paste: str) -> None:
    got = stated_facts(paste)
    assert got.get("gpu.util_swings") is True, (url, got)
