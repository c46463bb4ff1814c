"""The chart of a recorded incident: what live triage would have posted under its report.

No second renderer: the replayed report's leading hypothesis is drawn by bot/render/chart.py from the incident's
artifacts and its recorded chart series (series/ in the recorded-incident format), exactly as live triage draws
it from what it fetched.
"""

from __future__ import annotations

import logging

from bot.render.chart import render_report_chart
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident
from drills.recorded.replay import replay
from playbooks.report import Report

_MEMO = "chart"
log = logging.getLogger(__name__)


def recorded_chart(incident: Incident, report: Report | None = None) -> bytes | None:
    """PNG bytes of the leader's declared series, or None when it declares none or the recording lacks it."""
    return render_report_chart(report if report is not None else replay(incident), incident.chart_inputs())


def drill_chart(incident: Incident) -> bytes | None:
    """The debrief's chart, drawn once per parsed incident (a debrief must not pay a replay twice). A picture that
    cannot be drawn costs the picture, never the debrief it goes with."""
    memo = evidence_for(incident).memo
    if _MEMO not in memo:
        try:
            memo[_MEMO] = recorded_chart(incident)
        except Exception:
            log.exception("the chart of %s could not be drawn", incident.meta.id)
            memo[_MEMO] = None
    found = memo[_MEMO]
    return found if isinstance(found, bytes) else None
