"""Counting the nodes each scheduling reason rules out never fails on garbage and stays linear on long lines."""

from __future__ import annotations

import time

from hypothesis import given
from hypothesis import strategies as st

from collectors.parsers.kubernetes.messages.k8s_scheduling import reason_node_counts, scheduling_facts

_PIECES = st.sampled_from(["0/5 nodes are available: ", "3 ", "Insufficient cpu", ", ", " (2)", ".", " preemption: ",
                           "fit failure on node (n1): ", "match all of the predicates: ", "\n", "(", ")", "x"])


@given(st.lists(_PIECES, max_size=40).map("".join))
def test_counts_are_positive_and_name_known_reasons(message: str) -> None:
    counted = reason_node_counts(message)
    assert all(count > 0 and reason for reason, count in counted)
    assert [count for _, count in counted] == sorted((count for _, count in counted), reverse=True)
    names = [name for name, _ in scheduling_facts(message)]
    assert ("scheduling.leading_reasons" in names) == bool(counted)


@given(st.text(max_size=300))
def test_any_text_is_safe(message: str) -> None:
    reason_node_counts(message)
    scheduling_facts(message)


def test_a_huge_line_without_counts_is_read_quickly() -> None:
    started = time.process_time()
    assert reason_node_counts("No nodes are available that match all of the predicates: " + "a" * 2_000_000) == []
    assert reason_node_counts("fit failure on node (n): " + "b" * 2_000_000) == []
    assert time.process_time() - started < 1.0
