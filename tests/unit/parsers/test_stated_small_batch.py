"""A GPU-Util figure said before its name (stated.yaml's gpu-util-figure-first) and the work per step said to be one
sample or a small batch (batch-said-small). Negated, asked and other resources' sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/LTH14/fractalgen/issues/13 (description; its multiplication signs written as escapes)
REAL_13 = (
    "Generating 1\u00d764\u00d764 image takes 21 seconds with 12% GPU utilization\n"
    "Generating 32\u00d764\u00d764 images takes 41 seconds with 89% GPU utilization\n"
    "\n"
    "This shows that while batch generation achieves better GPU utilization, the single-image generation appears "
    "less efficient than expected. \n"
)


def test_the_real_comparison_reads_the_lower_run_and_the_single_sample() -> None:
    got = stated_facts(REAL_13)
    assert got.get("gpu.job_util_percent") == 12.0, got
    assert got.get("train.batch_said_small") is True, got


@pytest.mark.parametrize(("sentence", "figure"), [
    ("The job runs at 7% GPU utilization the whole time.", 7.0),
    ("we only get 30% GPU usage on the A100", 30.0),
    ("nvtop shows 15% of GPU utilisation during inference", 15.0),
])
def test_a_figure_before_its_name_is_read(sentence: str, figure: float) -> None:
    assert stated_facts(sentence).get("gpu.job_util_percent") == figure, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The job uses 80% GPU memory on the card.",  # memory, not utilisation
    "Is 10% GPU utilization normal for this model?",  # asked
    # https://github.com/anderskm/gputil/issues/11 (description): one program's figure against another's
    "I'm having a strange issue on various machine where every call of showUtilization() shows 0% GPU util, even "
    "though nvidia-smi at the same time returns 100%.",
])
def test_no_utilisation_figure_is_read(sentence: str) -> None:
    assert "gpu.job_util_percent" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "I run inference with batch size 1 on the T4.",
    "We use bs=1 for the benchmark.",
    "The server handles one request at a time.",
    "The training uses a small batch size because of the memory.",
    "The batch size is very small for this GPU.",
])
def test_a_small_batch_said_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("train.batch_said_small") is True, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "We train with batch size 128 on eight GPUs.",  # a large batch
    "The batch size is not small at all.",  # negated
    "Should I use a small batch size here?",  # asked
    "We use batch size 16 and it works.",  # 16, not 1
])
def test_no_small_batch_said_gives_nothing(sentence: str) -> None:
    assert "train.batch_said_small" not in stated_facts(sentence), stated_facts(sentence)
