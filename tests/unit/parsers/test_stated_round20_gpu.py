"""A multi-GPU job said to use one GPU only (round 20, one-gpu-used): only one GPU said to work, the rest's
GPU-Util or the utilisation of the other GPUs said to be 0, the job said to use none but one GPU; and a that-clause
after "but" is what was found, not what was expected. Busy, negated and asked sentences give nothing.

The search tools were out of budget this round: the positive sentences are written in the shapes the round's
cases showed, with other wording and numbers, not copied from another thread."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    "On the 2-GPU node only one GPU could work, the second one never starts.",
    "The rest of the GPUs util were 0% for the whole epoch.",
    "the usage of the remaining cards is at 0% while card 0 trains.",
    "It doesn't seem to use anything but the first GPU.",
    "None of them utilize any GPU except one.",
])
def test_one_gpu_of_several_said_used_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("symptoms") == {"gpu-underutilized"}, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "The rest of the GPUs util were 98% for the whole epoch.",  # busy
    "The utilization of the other GPUs is 0.9 TFLOPS higher.",  # not a zero utilisation
    "None of them use any GPU at all.",  # no GPU used: not one of several
    "Is the utilization of the other GPUs 0 on your side?",  # asked
])
def test_the_others_busy_or_no_gpu_named_gives_nothing(sentence: str) -> None:
    assert "symptoms" not in stated_facts(sentence), stated_facts(sentence)


def test_a_that_clause_after_but_is_what_was_found() -> None:
    found = "I wanted to train on all four GPUs, but I noticed that only one GPU is used."
    assert stated_facts(found).get("symptoms") == {"gpu-underutilized"}, stated_facts(found)
    expected = "I wanted to check that only one GPU is used."  # what the writer meant to check, not what was seen
    assert "symptoms" not in stated_facts(expected), stated_facts(expected)
