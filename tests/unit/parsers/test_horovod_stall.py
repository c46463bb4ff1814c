"""Horovod's stall inspector block (collectors/parsers/logs/horovod_stall.py): ranks on different collectives
are told from ranks that are behind."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.parsers.paste_facts import split_joined_facts

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "nccl-hang"
WARNING = ("[2020-07-04 19:23:57.817885: W horovod/common/stall_inspector.cc:105] One or more tensors were submitted "
           "to be reduced, gathered or broadcasted by subset of ranks and are waiting for remainder of ranks for more "
           "than 60 seconds. This may indicate that different ranks are trying to submit different tensors or that "
           "only subset of ranks is submitting tensors, which will cause deadlock. ")


def _facts(text: str) -> dict[str, object]:
    """The facts of the text read as a paste (unwrapped, split, the block handed to the container-log reader)."""
    return split_joined_facts(text)


def test_two_ranks_each_missing_what_the_other_submitted_are_on_different_collectives() -> None:
    # https://github.com/google/automl/issues/563 (verbatim): rank 0 still broadcasts, rank 1 all-reduces.
    text = (REALWORLD / "automl-563-horovod-stalled-ranks-gpu-util-zero" / "evidence.txt").read_text(encoding="utf-8")
    facts = _facts(text)
    assert facts["nccl.collectives_differ"] is True
    assert "nccl.suspect_ranks" not in facts


def test_one_rank_missing_tensors_is_the_rank_behind() -> None:
    # https://github.com/horovod/horovod/issues/1442 (verbatim): only rank 6 misses the all-reduces.
    text = (REALWORLD / "horovod-1442-stall-inspector-rank-6-after-step-83999" / "evidence.txt").read_text(
        encoding="utf-8")
    facts = _facts(text)
    assert facts["nccl.suspect_ranks"] == [6]
    assert "nccl.collectives_differ" not in facts


# Composed: the block as stall_inspector.cc's format prints it (0.21-0.28 "Missing ranks:", "!" past the shutdown
# time, a list cut after six names with " ..."), rendered with sample values.
@pytest.mark.parametrize(("rows", "differ", "suspects"), [
    (["0!: [grad_a, grad_b]", "1!: [bcast_x]"], True, None),
    (["2: [grad_a, grad_b, grad_c, grad_d, grad_e, grad_f ...]", "3: [grad_a, grad_b, grad_c, grad_d, grad_e, "
      "grad_f ...]"], None, [2, 3]),
    # Overlapping lists say neither: the ranks share some missing tensors.
    (["0: [grad_a, grad_b]", "1: [grad_b, grad_c]"], None, None),
])
def test_the_missing_ranks_layout_is_read(rows: list[str], differ: bool | None, suspects: list[int] | None) -> None:
    facts = _facts("\n".join([WARNING, "Missing ranks:", *rows]))
    assert facts.get("nccl.collectives_differ") is differ
    assert facts.get("nccl.suspect_ranks") == suspects


def test_a_rank_line_without_its_block_head_is_not_read() -> None:
    assert "nccl.collectives_differ" not in _facts("0: [grad_a]\n1: [bcast_x]")
