"""Charts come from recorded range queries and pick the series that fits the playbook."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pytest

from bot.render.chart import figure, formatter, pick_declared, pick_series, render_chart, render_report_chart
from collectors.models import Artifact, ArtifactKind
from drills.incident import INCIDENT_DIR, load_incident
from drills.replay import replay
from playbooks.report import ChartSpec, Finding, HypothesisResult, Report, Target


def matrix(aid: str, query: str, values: list[float]) -> Artifact:
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"pod": "web-1"}, "values": [[1_700_000_000 + 60 * i, str(v)] for i, v in enumerate(values)]}]}}
    return Artifact(id=aid, kind=ArtifactKind.PROMETHEUS_QUERY, command=query, content=json.dumps(body))


def test_pick_prefers_the_playbooks_series() -> None:
    util = matrix("util.json", "DCGM_FI_DEV_GPU_UTIL", [90, 0])
    ws = matrix("ws.json", "container_memory_working_set_bytes{pod=\"web-1\"}", [1, 2, 3])
    picked = pick_series([util, ws], "oom-killed")
    assert picked is not None and picked[0].id == "ws.json"
    picked = pick_series([util, ws], "gpu-xid")
    assert picked is not None and picked[0].id == "util.json"


def test_png_or_none() -> None:
    png = render_chart([matrix("ws.json", "container_memory_working_set_bytes", [1.0, 2.0, 4.0])], "oom-killed")
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
    vector = Artifact(id="v.json", kind=ArtifactKind.PROMETHEUS_QUERY, content=json.dumps(
        {"status": "success", "data": {"resultType": "vector", "result": []}}))
    assert render_chart([vector], "oom-killed") is None
    assert render_chart([Artifact(id="x", kind=ArtifactKind.PROMETHEUS_QUERY, content="not json")], None) is None


def throttling_report(chart: ChartSpec | None) -> Report:
    lead = HypothesisResult(id="cpu-throttling", status="confirmed", score=0.97, claim="throttled",
                            falsified_by="x", chart=chart)
    return Report(target=Target(service="web", namespace="shop"), symptoms=["latency"],
                  findings=[Finding(playbook="latency", title="t", hypotheses=[lead])], facts={}, artifacts=[])


THROTTLING = ChartSpec(metric="container_cpu_cfs_throttled_periods_total", title="CPU periods throttled",
                       unit="ratio", threshold=0.25, threshold_label="confirmed at 25% throttled")
RATE = 'sum(rate(http_requests_total{namespace="shop"}[5m]))'
RATIO = ('sum by (namespace, pod, container) (rate(container_cpu_cfs_throttled_periods_total{pod="web-1"}[5m])) / '
         'sum by (namespace, pod, container) (rate(container_cpu_cfs_periods_total{pod="web-1"}[5m]))')


def test_the_leading_hypothesis_chart_plots_its_declared_series_never_another() -> None:
    rate, ratio = matrix("rate.json", RATE, [100, 120, 400]), matrix("ratio.json", RATIO, [0.02, 0.3, 0.6])
    report = throttling_report(THROTTLING)
    picked = pick_declared([rate, ratio], THROTTLING)
    assert picked is not None and picked[0].id == "ratio.json"
    assert render_report_chart(report, [rate, ratio]) is not None
    # Only request rate was recorded: no chart, rather than the wrong one (issue #13).
    assert render_report_chart(report, [rate]) is None
    # The latency playbook's own declaration is this one.
    lead = replay(load_incident(INCIDENT_DIR / "latency-cpu-throttling")).leading()
    assert lead is not None and lead[1].chart is not None
    assert (lead[1].chart.metric, lead[1].chart.unit, lead[1].chart.threshold) == (
        "container_cpu_cfs_throttled_periods_total", "ratio", 0.25)


def test_the_chart_has_units_the_rules_line_the_window_and_a_legend() -> None:
    series = json.loads(matrix("ratio.json", RATIO, [0.02, 0.1, 0.3, 0.6]).content)["data"]["result"]
    fig = figure(series, THROTTLING.title, "ratio", 0.25, THROTTLING.threshold_label, THROTTLING.metric)
    try:
        (ax,) = fig.axes
        assert ax.get_title() == "CPU periods throttled\ncontainer_cpu_cfs_throttled_periods_total"
        assert ax.yaxis.get_major_formatter()(0.25, 0) == "25%"
        assert ax.get_ylabel() == "%"
        legend = [t.get_text() for t in ax.get_legend().get_texts()]
        assert legend == ["pod=web-1", "confirmed at 25% throttled", "incident window (over the line)"]
        line = ax.lines[1]
        assert list(line.get_ydata()) == [0.25, 0.25]
        # The window starts at the first sample over the line (the third, at +120 s) and runs to the last.
        (span,) = ax.patches
        xs = [span.get_x(), span.get_x() + span.get_width()]  # a Rectangle since matplotlib 3.9
        start = mdates.date2num(datetime.fromtimestamp(1_700_000_120, UTC))
        end = mdates.date2num(datetime.fromtimestamp(1_700_000_180, UTC))
        assert min(xs) == pytest.approx(start) and max(xs) == pytest.approx(end)
    finally:
        plt.close(fig)


def test_byte_charts_read_in_binary_units_and_a_fact_sets_the_line() -> None:
    assert formatter("bytes")(256 * 2**20, 0) == "256.0 MiB"
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    lead = report.leading()
    assert lead is not None and lead[1].chart is not None
    # threshold_fact: the container's memory limit, read from the evidence (200Gi).
    assert lead[1].chart.threshold == 214748364800.0


def test_a_pasted_range_answer_is_known_by_its_series_names() -> None:
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "container_memory_working_set_bytes", "pod": "etl-1"},
         "values": [[1_700_000_000 + 60 * i, str(v)] for i, v in enumerate([1e9, 2e9, 3e9])]}]}}
    pasted = Artifact(id="paste-2", kind=ArtifactKind.PROMETHEUS_QUERY, content=json.dumps(body))  # no command
    spec = ChartSpec(metric="container_memory_working_set_bytes", title="t", unit="bytes")
    assert pick_declared([pasted], spec) is not None
    assert pick_declared([pasted], THROTTLING) is None
