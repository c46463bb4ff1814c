"""A FailedScheduling row pasted without its "0/N nodes are available: " count is still the scheduler's fit error
(signals.yaml scheduler-failed-row-without-count, kube-scheduler's FitError fragments), rendered with sample values."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


@pytest.mark.parametrize(("row", "reason"), [
    ("  Warning  FailedScheduling  2m21s (x42 over 60m)  default-scheduler  1 node(s) had untolerated taint "
     "{nvidia.com/gpu: present}", "untolerated-taint"),
    ("FailedScheduling   5m  default-scheduler  3 node(s) didn't match Pod's node affinity/selector",
     "node-affinity"),
])
def test_a_row_without_the_count_gives_its_reasons(row: str, reason: str) -> None:
    facts = joined_facts(row)
    assert facts.get("scheduling.failed") is True, facts
    assert reason in facts.get("scheduling.reasons", []), facts  # type: ignore[operator]


def test_a_row_with_the_count_is_read_once() -> None:
    facts = joined_facts("  Warning  FailedScheduling  10s  default-scheduler  0/3 nodes are available: 3 Insufficient "
                         "nvidia.com/gpu.")
    assert facts.get("scheduling.nodes_total") == 3, facts


def test_a_sentence_about_nodes_is_no_scheduling_failure() -> None:
    assert "scheduling.failed" not in joined_facts("3 nodes had the taint removed yesterday.")
