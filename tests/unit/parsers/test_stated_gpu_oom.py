"""The GPU's memory said to have run out (round 18, stated.yaml gpu-oom-said): an OOM the sentence ties to the GPU
is the allocator's (cuda.oom), not a container's kill; a bare OOM, a denied one and a host's are not read as it."""
# ruff: noqa: RUF001  (full-width punctuation is what these sentences are written with)

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    # https://github.com/Project-HAMi/HAMi/issues/43 (the title)
    "使用显存计算问题导致 device OOM 错误，从而使预测终止",
    "We ran out of GPU memory when the batch size went to 64.",
    "The second replica hits a CUDA OOM as soon as it loads the model.",
    "两个任务跑在同一张卡上，显存不足，第二个进程启动失败。",
])
def test_a_gpu_oom_said_is_read(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("cuda.oom") is True and got.get("symptoms") == {"oom-killed"}, got


@pytest.mark.parametrize("sentence", [
    "The pod got OOM killed after an hour.",  # a container's kill: oom-verb's, not the GPU's
    "We never ran out of GPU memory, the loss just went to NaN.",
    "没有出现显存不足的问题，训练正常结束了。",
    "Is this a GPU OOM or a host OOM?",
])
def test_a_container_oom_a_denied_or_asked_gpu_oom_is_not_read_as_one(sentence: str) -> None:
    assert "cuda.oom" not in stated_facts(sentence), stated_facts(sentence)


def test_the_error_named_as_what_a_change_would_bring_is_not_read() -> None:
    # https://lightning.ai/forums/t/multi-gpu-training-is-much-lower-than-single-gpu-due-to-additional-processes/6923
    # (a case of tests/realworld): a condition, not an incident.
    sentence = "If I use large batch size, it will report Out of CUDA memory error and exit."
    assert "cuda.oom" not in stated_facts(sentence), stated_facts(sentence)
