"""The chart of a recorded incident: what live triage would have posted under its report.

No second renderer: the replayed report's leading hypothesis is drawn by bot/render/chart.py from the incident's
artifacts and its recorded chart series (series/ in the recorded-incident format), exactly as live triage draws
it from what it fetched.
"""

from __future__ import annotations

from bot.render.chart import render_report_chart
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident
from drills.recorded.replay import replay
from playbooks.report import Report

_MEMO = "chart"


def recorded_chart(incident: Incident, report: Report | None = None) -> bytes | None:
    """PNG bytes of the leader's declared series, or None when it declares none or the recording lacks it."""
    return render_report_chart(report if report is not None else replay(incident), incident.chart_inputs())


def drill_chart(incident: Incident) -> bytes | None:
    """The debrief's chart, drawn once per parsed incident (a debrief must not pay a replay twice)."""
    memo = evidence_for(incident).memo
    if _MEMO not in memo:
        memo[_MEMO] = recorded_chart(incident)
    found = memo[_MEMO]
    return found if isinstance(found, bytes) else None
