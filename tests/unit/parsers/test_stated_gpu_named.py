"""GPU utilisation said without the word GPU beside it, or as a range from zero (stated.yaml's gpu-named-util-figure,
gpu-named-util-swings, gpu-util-varies-from-zero, gpu-board-util-figure). Negated, asked, past and other
resources' figures are not read."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


# Synthetic sentences, one per wording: the bare noun after a determiner in a sentence that names the GPU.
@pytest.mark.parametrize(("sentence", "figure"), [
    ("With the V100 the utilization is 7%.", 7.0),
    ("On our A100 nodes the ultilization stays around 15 percent.", 15.0),
    ("I train on an RTX 3090 and its utilization drops from 90% to 0-20%.", 0.0),
    ("When I use tesla V100 16GB to train, the utilization can be up to 98%.", 98.0),
    ("my GPU (Tesla T4) usage is 12%", 12.0),
])
def test_the_utilization_of_a_named_gpu_is_read(sentence: str, figure: float) -> None:
    assert stated_facts(sentence).get("gpu.job_util_percent") == figure, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "On the V100 box the CPU utilization is 100% and the utilization of memory is 80%.",  # other resources
    "The server utilization is 5% and it has no accelerator.",  # no GPU named
    "Is the utilization on my A100 only 10%?",  # asked
    "On the A100 the utilization is not 10%.",  # negated
    "On the A100 the utilization used to be 10% before the upgrade.",  # history
])
def test_no_figure_from_another_resource_a_question_or_history(sentence: str) -> None:
    assert "gpu.job_util_percent" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "On my RTX 2080 the utilization becomes low and unstable.",
    "With the A100 the utilization keeps fluctuating.",
    "On the V100 the utilization varies from 0 to 30%.",
    "The GPU usage varies between 0 and 60% during training.",
    "GPU util ranges from 0 to 40% on every card.",
    "The GPU-Util is 20% for one second, drops to 0% the next and then goes back to 20% again.",
    "The GPU utilization becomes 0 every few seconds.",
    "I watch the GPU utilization in nvidia-smi and it fluctuates between 0% and 70%.",
])
def test_a_utilization_varying_from_zero_swings(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("gpu.util_swings") is True and "gpu-underutilized" in got.get("symptoms", set()), got  # type: ignore[operator]


@pytest.mark.parametrize("sentence", [
    "The GPU usage varies between 80 and 95% during training.",  # never idle
    "On the V100 the utilization is not unstable at all.",  # negated
    "Does the GPU utilization vary from 0 to 100% when the loader is slow?",  # asked
    "If the GPU util drops to 0% and comes back again, add workers.",  # conditional
    "The CPU utilization varies from 0 to 100% on the node.",  # another resource
    "The GPU util is 95% while the CPU load fluctuates between 0 and 100% on the node and the disk is busy.",
])
def test_no_swing_from_a_busy_range_a_negation_a_question_or_the_cpu(sentence: str) -> None:
    got = stated_facts(sentence)
    assert "gpu.util_swings" not in got and "symptoms" not in got, got


# Verbatim lines from public threads (whole lines), with the thread beside each.
@pytest.mark.parametrize(("url", "text", "expected"), [
    ("https://github.com/THU-DA-6D-Pose-Group/GDR-Net/issues/114",
     "I found that the IO speed is quite slow in the result that utility of GPU is relative low(~30). The GPU "
     "utilization rate will even become 0 every few seconds. The training time on ycbv is more than 26 hours. I "
     "whether is there any optimized strategy on this dataloader to speed up this process.",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/chrisdonahue/wavegan/issues/81",
     "Hello, I am training on 192 wav files of around 7 seconds duration on a Tesla V100 GPU. While training, I "
     "monitor the GPU Utilization with the `nvidia-smi` and the results that I get is that i highly fluctuates from "
     "0% up until 60%. This is probably an indicator that there is a bottleneck somewhere and that the GPU isn't fed "
     "data fast enough. ",
     {"gpu.util_swings": True, "symptoms": {"gpu-underutilized"}}),
    ("https://github.com/xinntao/Real-ESRGAN/issues/358",
     "The same as you, my GPU(NVIDIA Tesla T4 GRID T4-8Q) utilization between 20%~50%, if the card is T4（100%） "  # noqa: RUF001
     ",it will become lower; The graphics card basically gets lower utilization, but takes up a lot of CPU and memory",
     {"gpu.job_util_percent": 20.0, "gpu.util_swings": None}),
])
def test_a_real_sentence_is_read(url: str, text: str, expected: dict[str, object]) -> None:
    got = stated_facts(text)
    assert {k: got.get(k) for k in expected} == expected, (url, got)


def test_a_question_about_the_figure_reports_nothing_but_a_report_followed_by_why_does() -> None:
    """The stated rule on main: a sentence asking about what it names is no report, whatever figure it holds; a
    report followed by a bare "why?" still is."""
    assert stated_facts("why is GPU util 0?") == {}
    assert stated_facts("Why is the GPU utilization of my A100 only 10%?") == {}
    assert stated_facts("The GPU util is 0% on the V100. Why?").get("gpu.job_util_percent") == 0.0
