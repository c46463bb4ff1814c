"""A why-clause is a clause of its own (round 18): what it asks the cause of is presupposed, so a negation or a hedge
before it ("I can't explain why", "I wonder why", "I don't know why") governs the verb that leads to it, not what
the clause says. A negation inside the clause, or a whether-clause, still denies it."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    # https://github.com/wyharveychen/CloserLookFewShot/issues/60 (the description's first clause, its question cut)
    "I wonder why the GPU utilization is always low when I run the code.",
])
def test_what_a_why_clause_presupposes_is_read(sentence: str) -> None:
    assert stated_facts(sentence).get("symptoms") == {"gpu-underutilized"}, stated_facts(sentence)


def test_a_figure_a_why_clause_presupposes_is_read() -> None:
    got = stated_facts("We don't understand why GPU usage stays at 20% during training.")
    assert got.get("gpu.job_util_percent") == 20.0, got


@pytest.mark.parametrize("sentence", [
    "I wonder whether the GPU utilization is always low when I run the code.",
    "I wonder why the GPU utilization is not low while the loader is this slow.",
    "If GPU usage stays at 20% we should add workers.",
])
def test_a_why_clause_that_denies_or_a_whether_clause_gives_nothing(sentence: str) -> None:
    got = stated_facts(sentence)
    assert not got.get("symptoms") and "gpu.job_util_percent" not in got, got
