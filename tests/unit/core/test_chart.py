"""Charts plot the series the leading hypothesis declares, with its unit, its rule's line, the incident window and a
legend; a leader that declares `none`, or whose series was not fetched, gets no chart."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import pytest
from PIL import Image

from bot.render.chart import draw, figure, formatter, pick_declared, render_report_chart
from collectors.factset import FactSet
from collectors.models import Artifact, ArtifactKind, Citation, Fact
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.engine import chart_spec
from playbooks.model import Chart, NoChart
from playbooks.pipeline import default_playbooks
from playbooks.report import ChartSpec, Finding, HypothesisResult, Report, Target

T0 = 1_700_000_000


def matrix(aid: str, query: str, values: list[float], labels: dict[str, str] | None = None) -> Artifact:
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels or {"pod": "web-1"}, "values": [[T0 + 60 * i, str(v)] for i, v in enumerate(values)]}]}}
    return Artifact(id=aid, kind=ArtifactKind.PROMETHEUS_QUERY, command=query, content=json.dumps(body))


def series_of(artifact: Artifact) -> list[dict[str, Any]]:
    result: list[dict[str, Any]] = json.loads(artifact.content)["data"]["result"]
    return result


def declared(playbook: str, hypothesis: str, **facts: Any) -> ChartSpec:
    """The chart the bundled playbook declares for the hypothesis, its fact-valued line resolved from `facts`."""
    fs = FactSet()
    for i, (name, value) in enumerate(facts.items(), start=1):
        fs.add(Fact(name=name.replace("__", "."), value=value, citation=Citation(artifact="a1", start=i, end=i)))
    # The bundled set, compiled once per process: compiling every playbook again cost seconds per test.
    chart = next(h.chart for book in default_playbooks() if book.spec.id == playbook
                 for h, _ in book.spec.walk() if h.id == hypothesis)
    assert isinstance(chart, Chart)
    spec = chart_spec(chart, fs)
    assert spec is not None
    return spec


def report_led_by(playbook: str, hypothesis: str, chart: ChartSpec | None) -> Report:
    lead = HypothesisResult(id=hypothesis, status="confirmed", score=0.97, claim="c", falsified_by="x", chart=chart)
    return Report(target=Target(service="web", namespace="shop"), symptoms=[playbook],
                  findings=[Finding(playbook=playbook, title="t", hypotheses=[lead])], facts={}, artifacts=[])


@pytest.fixture
def drawn() -> Iterator[list[Any]]:
    """Figures a test draws, closed afterwards."""
    figures: list[Any] = []
    yield figures
    for fig in figures:
        plt.close(fig)


def at(seconds: int) -> float:
    return float(mdates.date2num(datetime.fromtimestamp(T0 + seconds, UTC)))


def shaded(ax: Any) -> tuple[float, float]:
    (span,) = ax.patches
    xs = [span.get_x(), span.get_x() + span.get_width()]  # a Rectangle since matplotlib 3.9
    return min(xs), max(xs)


THROTTLING = ChartSpec(metric="container_cpu_cfs_throttled_periods_total", title="CPU periods throttled",
                       unit="ratio", threshold=0.25, threshold_label="confirmed at 25% throttled")
RATE = 'sum(rate(http_requests_total{namespace="shop"}[5m]))'
RATIO = ('sum by (namespace, pod, container) (rate(container_cpu_cfs_throttled_periods_total{pod="web-1"}[5m])) / '
         'sum by (namespace, pod, container) (rate(container_cpu_cfs_periods_total{pod="web-1"}[5m]))')


def test_the_leading_hypothesis_chart_plots_its_declared_series_never_another() -> None:
    rate, ratio = matrix("rate.json", RATE, [100, 120, 400]), matrix("ratio.json", RATIO, [0.02, 0.3, 0.6])
    report = report_led_by("latency", "cpu-throttling", THROTTLING)
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


def test_a_leader_that_declares_none_gets_no_chart_even_beside_range_queries() -> None:
    chart = next(h.chart for book in default_playbooks() if book.spec.id == "nccl-hang"
                 for h, _ in book.spec.walk() if h.id == "rendezvous-env")
    assert isinstance(chart, NoChart) and "environment variables" in chart.none
    assert chart_spec(chart, FactSet()) is None  # the report carries no chart for it
    ws = matrix("ws.json", "container_memory_working_set_bytes", [1.0, 2.0, 4.0])
    assert render_report_chart(report_led_by("nccl-hang", "rendezvous-env", None), [ws]) is None
    # And no leader at all: no chart either (the old playbook-level fallback is gone).
    empty = Report(target=Target(), symptoms=[], findings=[], facts={}, artifacts=[])
    assert render_report_chart(empty, [ws]) is None


def test_live_triage_artifacts_are_picked_by_their_query_name() -> None:
    """Two range queries read node_cpu_seconds_total; the steal chart takes the steal one, by its artifact id."""
    iowait = matrix("prom-cpu-iowait-ratio-range.json",
                    'avg by (instance) (rate(node_cpu_seconds_total{instance=~"n1",mode="iowait"}[5m]))', [0.3])
    steal = matrix("prom-cpu-steal-ratio-range.json",
                   'avg by (instance) (rate(node_cpu_seconds_total{instance=~"n1",mode="steal"}[5m]))', [0.2])
    spec = declared("latency", "noisy-neighbor")
    assert spec.metric == 'node_cpu_seconds_total{mode="steal"}'
    picked = pick_declared([iowait, steal], spec)
    assert picked is not None and picked[0].id == "prom-cpu-steal-ratio-range.json"
    # A recorded query (another id) is matched by its metric and the key's matcher.
    recorded = matrix("steal.json", 'avg(rate(node_cpu_seconds_total{mode="steal",instance="n1"}[5m]))', [0.2])
    picked = pick_declared([replace(iowait, id="iowait.json"), recorded], spec)
    assert picked is not None and picked[0].id == "steal.json"


def test_a_pasted_range_answer_is_known_by_its_series_names() -> None:
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "container_memory_working_set_bytes", "pod": "etl-1"},
         "values": [[T0 + 60 * i, str(v)] for i, v in enumerate([1e9, 2e9, 3e9])]}]}}
    pasted = Artifact(id="paste-2", kind=ArtifactKind.PROMETHEUS_QUERY, content=json.dumps(body),
                      command="lines 3-12 of paste")
    spec = ChartSpec(metric="container_memory_working_set_bytes", title="t", unit="bytes")
    assert pick_declared([pasted], spec) is not None
    assert pick_declared([pasted], THROTTLING) is None
    # A recorded query that reads another metric is not taken for this one because its series carry the name.
    other = replace(pasted, command="max_over_time(container_memory_rss{pod=\"etl-1\"}[1h])")
    assert pick_declared([other], spec) is None


def test_the_chart_has_units_the_rules_line_the_window_and_a_legend(drawn: list[Any]) -> None:
    series = series_of(matrix("ratio.json", RATIO, [0.02, 0.1, 0.3, 0.6]))
    fig = figure(series, THROTTLING)
    drawn.append(fig)
    (ax,) = fig.axes
    assert ax.get_title() == "CPU periods throttled\ncontainer_cpu_cfs_throttled_periods_total"
    assert ax.yaxis.get_major_formatter()(0.25, 0) == "25%"
    assert ax.get_ylabel() == "%"
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == ["pod=web-1", "confirmed at 25% throttled", "incident window (over the line)"]
    assert list(ax.lines[1].get_ydata()) == [0.25, 0.25]
    # The window starts at the first sample over the line (the third, at +120 s) and runs to the last.
    assert shaded(ax) == (pytest.approx(at(120)), pytest.approx(at(180)))


def test_memory_pressure_shades_from_the_first_sample_under_its_line(drawn: list[Any]) -> None:
    """evicted/memory-pressure: the node's available memory, a ratio whose rule fires below 10%."""
    spec = declared("evicted", "memory-pressure")
    assert (spec.metric, spec.unit, spec.threshold, spec.breach) == ("node_memory_MemAvailable_bytes", "ratio", 0.1,
                                                                      "below")
    series = series_of(matrix("prom-node-memory-available-ratio-range.json", "q", [0.4, 0.2, 0.08, 0.05, 0.12],
                              {"instance": "10.0.0.7:9100"}))
    fig = figure(series, spec)
    drawn.append(fig)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "%" and ax.yaxis.get_major_formatter()(0.1, 0) == "10%"
    assert list(ax.lines[1].get_ydata()) == [0.1, 0.1]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "instance=10.0.0.7:9100", "likely: under 10% of memory available", "incident window (under the line)"]
    assert shaded(ax) == (pytest.approx(at(120)), pytest.approx(at(240)))


def test_a_fact_sets_the_line_in_the_series_unit(drawn: list[Any]) -> None:
    """pending/insufficient-gpu: free GPUs (two series) against the pod's own request, read from a fact."""
    spec = declared("pending", "insufficient-gpu", pod__gpu_request=8)
    assert (spec.unit, spec.threshold, spec.threshold_label, spec.breach) == ("count", 8.0, "the pod's GPU request",
                                                                              "below")
    body = {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"series": "most on one node"}, "values": [[T0, "8"], [T0 + 60, "4"], [T0 + 120, "2"]]},
        {"metric": {"series": "whole cluster"}, "values": [[T0, "20"], [T0 + 60, "12"], [T0 + 120, "6"]]}]}}
    fig = figure(body["data"]["result"], spec)
    drawn.append(fig)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "count"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "series=most on one node", "series=whole cluster", "the pod's GPU request", "incident window (under the line)"]
    assert list(ax.lines[2].get_ydata()) == [8.0, 8.0]
    assert shaded(ax) == (pytest.approx(at(60)), pytest.approx(at(120)))


def test_a_counter_is_charted_as_a_rate_with_a_rate_unit(drawn: list[Any]) -> None:
    """crash-loop/app-error: restarts per hour (the counter's rate), no line because its rule has no number."""
    spec = declared("crash-loop", "app-error")
    assert (spec.metric, spec.unit, spec.threshold) == ("kube_pod_container_status_restarts_total", "per-hour", None)
    series = series_of(matrix("prom-restarts-range.json", "q", [0, 12, 12, 24],
                              {"namespace": "shop", "pod": "web-1", "node": "node-a"}))
    fig = figure(series, spec)
    drawn.append(fig)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "per hour" and ax.yaxis.get_major_formatter()(12, 0) == "12/h"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["pod=web-1, node=node-a"]
    assert len(ax.patches) == 0 and len(ax.lines) == 1


def test_a_seconds_line_and_the_kubelets_limit(drawn: list[Any]) -> None:
    """node-not-ready/pleg-unhealthy: seconds since the PLEG last relisted, against the kubelet's 3 minutes."""
    spec = declared("node-not-ready", "pleg-unhealthy")
    series = series_of(matrix("prom-pleg-age-range.json", "q", [1, 2, 190, 400], {"instance": "10.0.0.9:10250"}))
    fig = figure(series, spec)
    drawn.append(fig)
    (ax,) = fig.axes
    assert ax.get_ylabel() == "seconds" and ax.yaxis.get_major_formatter()(180, 0) == "180 s"
    assert list(ax.lines[1].get_ydata()) == [180.0, 180.0]
    assert shaded(ax)[0] == pytest.approx(at(120))


def test_units_read_as_people_read_them() -> None:
    assert formatter("ratio")(0.25, 0) == "25%"
    assert formatter("percent")(25, 0) == "25%"
    assert formatter("bytes")(256 * 2**20, 0) == "256.0 MiB"
    assert formatter("bytes")(9001, 0) == "9001 B"  # an MTU
    assert formatter("bytes-per-second")(3 * 2**30, 0) == "3.0 GiB/s"
    assert formatter("per-second")(0.0333333, 0) == "0.0333/s"
    assert formatter("celsius")(85, 0) == "85 °C"
    assert formatter("seconds")(3600, 0) == "3600 s" and formatter("count")(119, 0) == "119"
    assert formatter("per-hour")(1500.4, 0) == "1500/h" and formatter("ratio")(0.999, 0) == "100%"


def test_the_png_says_what_it_plots() -> None:
    spec = declared("evicted", "memory-pressure")
    artifact = matrix("prom-node-memory-available-ratio-range.json", "q", [0.3, 0.05], {"instance": "n1"})
    report = report_led_by("evicted", "memory-pressure", spec)
    png = render_report_chart(report, [artifact])
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"
    text = Image.open(io.BytesIO(png)).text  # type: ignore[attr-defined]
    assert text["Source"] == "node_memory_MemAvailable_bytes via prom-node-memory-available-ratio-range.json"
    assert text["Description"] == "unit=ratio; threshold=0.1 (below: likely: under 10% of memory available)"
    assert draw(series_of(artifact), spec)[:8] == b"\x89PNG\r\n\x1a\n"


def test_byte_charts_read_in_binary_units_and_a_fact_sets_the_line() -> None:
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    lead = report.leading()
    assert lead is not None and lead[1].chart is not None
    # threshold_fact: the container's memory limit, read from the evidence (200Gi).
    assert lead[1].chart.threshold == 214748364800.0


def test_a_recorded_incident_charts_its_leaders_declared_series() -> None:
    """evicted-disk-pressure recorded the root filesystem's free share; disk-pressure declares that series."""
    incident = load_incident(INCIDENT_DIR / "evicted-disk-pressure")
    report = replay(incident)
    lead = report.leading()
    assert lead is not None and (lead[0].playbook, lead[1].id) == ("evicted", "disk-pressure")
    assert lead[1].chart is not None and lead[1].chart.metric == "node_filesystem_avail_bytes"
    picked = pick_declared(incident.artifacts, lead[1].chart)
    assert picked is not None and picked[0].id == "root-fs-available.json"
    assert render_report_chart(report, incident.artifacts) is not None
