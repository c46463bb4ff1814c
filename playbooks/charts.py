"""Which series a report's hypotheses chart, in the order a reader needs them.

Live triage fetches these as range queries (collectors/live/prometheus.py, within its bound), so the series of
the hypothesis that leads is always asked for first, then those of the other hypotheses evidence supports, then
the rest of the playbooks in play.
"""

from __future__ import annotations

from playbooks.report import HypothesisResult, Report


def _need(h: HypothesisResult) -> tuple[bool, float]:
    # Supported hypotheses first, strongest first; the rest by score (unknown before ruled out).
    return not h.supported, -h.score


def chart_series(report: Report) -> list[str]:
    """The chart series (RANGE_METRICS keys) of every hypothesis of the report's findings, without repeats:
    the leader's first. Hypotheses that declare `chart: {none: ...}` add nothing."""
    lead = report.leading()
    ranked = sorted((h for f in report.findings for h in f.hypotheses), key=_need)
    ordered = ([lead[1]] if lead is not None else []) + ranked
    return list(dict.fromkeys(h.chart.metric for h in ordered if h.chart is not None))
