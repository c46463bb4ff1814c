"""One PNG chart under a report: the series the leading hypothesis declares in its playbook (`chart:` in
playbooks/*.yaml), with units on the axis, the line the rule used, the incident window shaded and a legend naming
each series. A leader that declares `chart: {none: ...}`, or whose series was not fetched, gets no chart: never an
unrelated series (a CPU-throttling verdict once came with a request-rate chart).
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from collectors.catalogs.queries import RANGE_METRICS, split_key
from collectors.models import Artifact, ArtifactKind
from playbooks.report import ChartSpec, Report

MAX_SERIES = 6
UNIT_LABEL = {"ratio": "%", "percent": "%", "bytes": "bytes", "bytes-per-second": "bytes per second",
              "seconds": "seconds", "count": "count", "per-second": "per second", "per-hour": "per hour",
              "celsius": "°C"}
# Labels that say which series a line is, in the order the legend names them; the rest (job, UUID, ...) is noise.
_LEGEND_KEYS = ("pod", "container", "Hostname", "gpu", "node", "instance", "device", "mountpoint", "phase", "reason",
                "condition", "status", "resource", "resourcequota", "persistentvolumeclaim", "deployment",
                "horizontalpodautoscaler", "operation_type", "operation_name", "plugin", "key", "effect", "type",
                "series")
_LEGEND_PARTS = 3
# A recorded query's PromQL has a selector, a call or a range; a paste's command ("lines 3-40 of paste-1") has none.
_PROMQL = re.compile(r"[{(\[]")


def _matrix(artifact: Artifact) -> list[dict[str, Any]]:
    try:
        body = json.loads(artifact.content)
        data = body["data"]
        if data.get("resultType") != "matrix":
            return []
        return [r for r in data["result"] if isinstance(r, dict) and r.get("values")]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def _ranged(artifacts: list[Artifact]) -> list[tuple[Artifact, list[dict[str, Any]]]]:
    return [(a, m) for a in artifacts if a.kind == ArtifactKind.PROMETHEUS_QUERY and (m := _matrix(a))]


def _matcher_holds(labels: dict[str, str], matcher: str | None) -> bool:
    """Whether a pasted series' labels satisfy the chart key's matcher (`mode="steal"`, `status=~"5.."`)."""
    if matcher is None:
        return True
    found = re.fullmatch(r'([a-zA-Z_][a-zA-Z0-9_]*)(=~|!~|!=|=)"(.*)"', matcher)
    if found is None:
        return False
    label, op, value = found.groups()
    actual = labels.get(label, "")
    if op in ("=", "!="):
        return (actual == value) == (op == "=")
    return bool(re.fullmatch(value, actual)) == (op == "=~")


def _command_reads(command: str, name: str, matcher: str | None) -> bool:
    """A recorded query that reads the metric (and the matcher, when the key has one) as a whole word."""
    if not re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", command):
        return False
    return matcher is None or matcher.replace(" ", "") in command.replace(" ", "")


def _series_named(series: list[dict[str, Any]], name: str, matcher: str | None) -> bool:
    # `name`: a paste's markdown unwrapping reads `__name__` as bold and keeps `name`.
    return any(name in ((m := s.get("metric") or {}).get("__name__"), m.get("name")) and _matcher_holds(m, matcher)
               for s in series)


def pick_declared(artifacts: list[Artifact], chart: ChartSpec) -> tuple[Artifact, list[dict[str, Any]]] | None:
    """The range query of the declared series: the one live triage ran for it (by its artifact id), else a
    recorded query that reads the metric, else a pasted answer whose series are that metric."""
    ranged = _ranged(artifacts)
    entry = RANGE_METRICS.get(chart.metric)
    if entry is not None:
        live = f"prom-{entry.query}.json"
        picked = next(((a, m) for a, m in ranged if a.id == live), None)
        if picked is not None:
            return picked
    try:
        name, matcher = split_key(chart.metric)
    except ValueError:
        return None
    by_query = next(((a, m) for a, m in ranged if _command_reads(a.command, name, matcher)), None)
    if by_query is not None:
        return by_query
    # A pasted API answer carries no query: its series' names say what it is. A recorded query that reads
    # something else is never taken for the declared series because its series happen to share a name.
    return next(((a, m) for a, m in ranged if not _PROMQL.search(a.command) and _series_named(m, name, matcher)),
                None)


def _label(metric: dict[str, str], fallback: str) -> str:
    parts = [f"{k}={metric[k]}" for k in _LEGEND_KEYS if metric.get(k)]
    return ", ".join(parts[:_LEGEND_PARTS]) or fallback


def _bytes(value: float) -> str:
    if abs(value) < 16 * 1024:
        return f"{value:.0f} B"  # an MTU reads as 9001, not 8.8 KiB
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


def _number(value: float) -> str:
    """Whole numbers as they are (Xid 119, 3600 s), small rates to three significant digits (0.0333)."""
    if math.isfinite(value) and (value == int(value) or abs(value) >= 100):
        return f"{value:.0f}"
    return f"{value:.3g}"


def formatter(unit: str) -> Callable[[float, object], str]:
    """How a value of the unit reads on the axis."""
    if unit == "ratio":
        return lambda v, _pos: f"{v * 100:.0f}%"
    if unit == "percent":
        return lambda v, _pos: f"{v:.0f}%"
    if unit == "bytes":
        return lambda v, _pos: _bytes(v)
    if unit == "bytes-per-second":
        return lambda v, _pos: f"{_bytes(v)}/s"
    suffix = {"seconds": " s", "per-second": "/s", "per-hour": "/h", "celsius": " °C"}.get(unit, "")
    return lambda v, _pos: f"{_number(v)}{suffix}"


def _breaches(value: float, threshold: float, breach: str) -> bool:
    return value < threshold if breach == "below" else value >= threshold


def _window(series: list[dict[str, Any]], threshold: float | None, breach: str = "above") -> tuple[float, float] | None:
    """The incident window: from the first sample on the rule's side of the line to the last sample; without a
    line, none. NaN (a quantile with no traffic) is on neither side."""
    if threshold is None:
        return None
    samples = [(float(t), float(v)) for item in series[:MAX_SERIES] for t, v in item["values"]]
    over = [t for t, v in samples if not math.isnan(v) and _breaches(v, threshold, breach)]
    if not over:
        return None
    return min(over), max(t for t, _ in samples)


def pyplot() -> Any:
    # matplotlib needs a writable config dir and no display; import late, it costs about a second.
    os.environ.setdefault("MPLCONFIGDIR", tempfile.gettempdir())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(series: list[dict[str, Any]], chart: ChartSpec) -> Any:
    """The chart as a matplotlib Figure (the caller closes it): series, line, window, units, legend."""
    plt = pyplot()
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    name = split_key(chart.metric)[0] if chart.metric else "series"
    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    for item in series[:MAX_SERIES]:
        times = mdates.date2num([datetime.fromtimestamp(float(t), UTC) for t, _ in item["values"]])
        ax.plot(times, [float(v) for _, v in item["values"]], label=_label(item.get("metric") or {}, name),
                linewidth=1.4)
    if chart.threshold is not None:
        ax.axhline(chart.threshold, color="#c0392b", linestyle="--", linewidth=1.2,
                   label=chart.threshold_label or f"threshold {formatter(chart.unit)(chart.threshold, None)}")
    shaded = _window(series, chart.threshold, chart.breach)
    if shaded is not None:
        start, end = (mdates.date2num(datetime.fromtimestamp(t, UTC)) for t in shaded)
        side = "under" if chart.breach == "below" else "over"
        ax.axvspan(start, end, color="#e67e22", alpha=0.12, label=f"incident window ({side} the line)")
    ax.set_title(f"{chart.title}\n{chart.metric}", fontsize=9)
    ax.set_ylabel(UNIT_LABEL.get(chart.unit, chart.unit), fontsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(formatter(chart.unit)))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))
    ax.set_xlabel("time (UTC)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def _provenance(chart: ChartSpec, artifact: Artifact) -> dict[str, str]:
    """PNG text chunks saying what the picture plots, so a saved chart can be traced to its query."""
    line = "none" if chart.threshold is None else f"{chart.threshold:g} ({chart.breach}: {chart.threshold_label})"
    return {"Title": chart.title, "Source": f"{chart.metric} via {artifact.id}",
            "Description": f"unit={chart.unit}; threshold={line}", "Software": "triagebot"}


def draw(series: list[dict[str, Any]], chart: ChartSpec, metadata: dict[str, str] | None = None) -> bytes:
    """PNG bytes of the chart."""
    fig = figure(series, chart)
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", metadata=metadata or {})
        return buffer.getvalue()
    finally:
        pyplot().close(fig)


def render_report_chart(report: Report, artifacts: list[Artifact]) -> bytes | None:
    """The chart of the report's leading hypothesis, from the range query of its declared series; None when no
    hypothesis leads, when the leader declares that no series shows it, or when its series was not fetched."""
    lead = report.leading()
    chart = lead[1].chart if lead is not None else None
    if chart is None:
        return None
    picked = pick_declared(artifacts, chart)
    if picked is None:
        return None  # the declared series was not fetched; another series would mislead
    artifact, series = picked
    return draw(series, chart, _provenance(chart, artifact))
