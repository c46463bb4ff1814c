"""signals.without_repeats with an access log's summaries: the figures cite their span, not each line in it."""

from __future__ import annotations

from collectors.models import Citation, Fact
from collectors.parsers.text import signals


def fact(name: str, value: object, start: int, end: int) -> Fact:
    return Fact(name=name, value=value, subject="s", citation=Citation(artifact="a", start=start, end=end))


# An access log's 5xx figures over lines 1-5, and nginx's error-log line 2 between them read by a line signal.
SUMMARY = [fact("http.error_ratio", 1.0, 1, 5), fact("http.error_statuses", [502], 1, 5)]
ERROR_LINE = [fact("http.failure_kinds", ["connection-failure"], 2, 2), fact("http.error_statuses", [502], 2, 2)]


def test_a_line_inside_a_summary_span_is_still_read_for_a_new_fact() -> None:
    kept = signals.without_repeats(SUMMARY, ERROR_LINE, summaries=True)
    assert [f.name for f in kept] == ["http.failure_kinds"]  # the statuses the summary gave are not given twice


def test_without_summaries_the_span_owns_its_lines() -> None:
    assert signals.without_repeats(SUMMARY, ERROR_LINE) == []
