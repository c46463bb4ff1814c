"""Ranks said to issue different collectives (stated.yaml's collectives-said-differ): the fact the Flight Recorder's
dumps give when ranks wait on different collectives, said by the person who wrote the ranks' code. A sentence set
off in brackets on its own line is read as a sentence; "since" starts a clause, so "expected to hang" does not deny
the reason after it. Negated, asked and other subjects' sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/pytorch/pytorch/issues/97191 (description, the line under "Example program")
REAL_97191 = "(expected to hang since rank 0 has more elements to all-reduce)"


@pytest.mark.parametrize("sentence", [
    REAL_97191,
    # Composed, one per shape the entry reads.
    "The ranks issue mismatched collectives after the eval step.",
    "Rank 3 calls a different number of all_reduce calls than the others.",
    "The tensor sizes differ across ranks in the last all_gather.",
    "We pass different tensor shapes on different ranks to the broadcast.",
    "rank 1 sends fewer tensors to the all-reduce than rank 0",
])
def test_collectives_said_to_differ_are_read(sentence: str) -> None:
    assert stated_facts(sentence).get("nccl.collectives_differ") is True, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "Every rank calls the same collectives in the same order.",  # healthy
    "Do the ranks issue mismatched collectives here?",  # asked
    "The ranks do not issue mismatched collectives.",  # negated
    "The images have different sizes across the dataset.",  # no rank, no collective
    "rank 0 has more memory than the others",  # no collective
])
def test_no_difference_said_gives_nothing(sentence: str) -> None:
    assert "nccl.collectives_differ" not in stated_facts(sentence), stated_facts(sentence)


def test_an_aside_in_brackets_is_a_sentence_but_code_in_brackets_is_not() -> None:
    assert stated_facts("(rank 0 has more elements to all-reduce)").get("nccl.collectives_differ") is True
    assert "nccl.collectives_differ" not in stated_facts("(rank 0 has more elements to all-reduce; numel *= 2)x")
