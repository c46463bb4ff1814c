"""Load testers' cumulative latency distributions: the p99 a run's percentile lines give.

redis-benchmark prints, per test, how many requests finished within each bound, one line per bound in rising
order: "98.83% <= 5 milliseconds" (src/redis-benchmark.c showLatencyReport, "%.2f%% <= %d milliseconds", 2.x to 6.0),
"99.020% <= 6.207 milliseconds (cumulative count 9902)" (the hdr histogram from 6.2 to 7.x). The p99 is the bound of
the first line at or above 99 %. fortio prints its histogram's percentiles as "# target 99% 0.0123" in seconds
(fortio stats/stats.go, HistogramData.Print, 1.x). Pure: lines in, facts out.
"""

from __future__ import annotations

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 512
_MAX_LINES = 50_000
_REDIS = re2.compile(r"^\s*(\d{1,3}(?:\.\d+)?)% <= (\d+(?:\.\d+)?) milliseconds(?: \(cumulative count \d+\))?\s*$")
_FORTIO = re2.compile(r"^# target 99% (\d+(?:\.\d+)?(?:e-?\d+)?)\s*$")


def read(artifact: Artifact) -> ParseResult:
    """latency.p99_seconds from each run's distribution (the sink keeps the largest, the vocabulary's merge)."""
    sink = FactSink(artifact)
    # Both patterns hold "% " ("99.02% <= 6 milliseconds", "# target 99% 0.012"): a text or a line without it
    # cannot match, and this reader runs on every pasted text, where trying two patterns on each of 50,000 lines
    # was a tenth of a 200,000-line paste's CPU (issue #27).
    if "% " not in artifact.content:
        return sink.done()
    lines = artifact.content.split("\n")[:_MAX_LINES]
    previous = -1.0  # the last percentage of the run being read; a lower one starts the next run
    found = False  # this run's p99 is read
    for number, raw in enumerate(lines, start=1):
        if "% " not in raw:  # nor then in its first _MAX_LINE characters
            continue
        line = raw[:_MAX_LINE]
        if (m := _FORTIO.match(line)) is not None:
            sink.add("latency.p99_seconds", float(m.group(1)), number)
            continue
        m = _REDIS.match(line)
        if m is None:
            continue
        share, bound = float(m.group(1)), float(m.group(2))
        if share < previous:
            found = False
        previous = share
        if share >= 99.0 and not found and share <= 100.0:
            sink.add("latency.p99_seconds", bound / 1000.0, number)
            found = True
    return sink.done()
