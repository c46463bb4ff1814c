"""One PNG chart under a report: the series that illustrates the leading hypothesis, as its playbook declares
(`chart:` in playbooks/*.yaml), with units on the axis, the line the rule used, the incident window shaded and a
legend naming each series. No declaration, or no recorded range query for it: a playbook-level fallback, and never
an unrelated series (a CPU-throttling verdict once came with a request-rate chart).
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from collectors.models import Artifact, ArtifactKind
from playbooks.report import ChartSpec, Report

# For hypotheses without a chart declaration: which range queries tell each playbook's story, best first.
SERIES_FOR: dict[str, tuple[str, ...]] = {
    "oom-killed": ("container_memory_working_set_bytes", "DCGM_FI_DEV_FB_USED"),
    "evicted": ("container_memory_working_set_bytes", "node_memory_MemAvailable_bytes"),
    "gpu-xid": ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP"),
    "latency": ("histogram_quantile",),
    "nccl-hang": ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS"),
    "pending": ("kube_pod_status_phase",),
    "crash-loop": ("kube_pod_container_status_restarts_total", "container_memory_working_set_bytes"),
    "gpu-underutilized": ("DCGM_FI_DEV_GPU_UTIL",),
}
MAX_SERIES = 6
UNIT_LABEL = {"ratio": "%", "percent": "%", "bytes": "bytes", "seconds": "s", "count": "", "per-second": "per s",
              "celsius": "°C"}


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


def _reads(artifact: Artifact, series: list[dict[str, Any]], metric: str) -> bool:
    """The query names the metric, or (a pasted API answer has no query) its series are that metric."""
    # `name`: a paste's markdown unwrapping reads `__name__` as bold and keeps `name`.
    return metric in artifact.command or any(metric in ((s.get("metric") or {}).get("__name__"),
                                                        (s.get("metric") or {}).get("name")) for s in series)


def pick_series(artifacts: list[Artifact], playbook: str | None) -> tuple[Artifact, list[dict[str, Any]]] | None:
    """The range-query artifact that best fits the playbook, with its series; None rather than a stranger."""
    ranged = _ranged(artifacts)
    for needle in SERIES_FOR.get(playbook or "", ()):
        for artifact, series in ranged:
            if _reads(artifact, series, needle):
                return artifact, series
    return None


def pick_declared(artifacts: list[Artifact], chart: ChartSpec) -> tuple[Artifact, list[dict[str, Any]]] | None:
    """The range query that reads the declared metric."""
    return next(((a, m) for a, m in _ranged(artifacts) if _reads(a, m, chart.metric)), None)


def _label(metric: dict[str, str]) -> str:
    keys = ("pod", "container", "Hostname", "gpu", "instance", "node")
    parts = [f"{k}={metric[k]}" for k in keys if metric.get(k)]
    return ", ".join(parts[:3]) or metric.get("__name__", "series")


def _bytes(value: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)


def formatter(unit: str) -> Callable[[float, object], str]:
    """How a value of the unit reads on the axis."""
    if unit == "ratio":
        return lambda v, _pos: f"{v * 100:.0f}%"
    if unit == "percent":
        return lambda v, _pos: f"{v:.0f}%"
    if unit == "bytes":
        return lambda v, _pos: _bytes(v)
    suffix = {"seconds": " s", "per-second": "/s", "celsius": " °C"}.get(unit, "")
    return lambda v, _pos: f"{v:g}{suffix}"


def _window(series: list[dict[str, Any]], threshold: float | None) -> tuple[float, float] | None:
    """The incident window: from the first sample over the line to the last sample; without a line, none."""
    if threshold is None:
        return None
    over = [float(t) for item in series for t, v in item["values"] if float(v) >= threshold]
    if not over:
        return None
    last = max(float(t) for item in series for t, _ in item["values"])
    return min(over), last


def _pyplot() -> Any:
    # matplotlib needs a writable config dir and no display; import late, it costs about a second.
    os.environ.setdefault("MPLCONFIGDIR", tempfile.gettempdir())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def figure(series: list[dict[str, Any]], title: str, unit: str, threshold: float | None, threshold_label: str,
           metric: str) -> Any:
    """The chart as a matplotlib Figure (the caller closes it): series, line, window, units, legend."""
    plt = _pyplot()
    import matplotlib.dates as mdates
    from matplotlib.ticker import FuncFormatter

    fig, ax = plt.subplots(figsize=(8, 3.2), dpi=100)
    for item in series[:MAX_SERIES]:
        times = mdates.date2num([datetime.fromtimestamp(float(t), UTC) for t, _ in item["values"]])
        ax.plot(times, [float(v) for _, v in item["values"]], label=_label(item.get("metric", {})),
                linewidth=1.4)
    if threshold is not None:
        ax.axhline(threshold, color="#c0392b", linestyle="--", linewidth=1.2,
                   label=threshold_label or f"threshold {formatter(unit)(threshold, None)}")
    shaded = _window(series, threshold)
    if shaded is not None:
        start, end = (mdates.date2num(datetime.fromtimestamp(t, UTC)) for t in shaded)
        ax.axvspan(start, end, color="#e67e22", alpha=0.12, label="incident window (over the line)")
    ax.set_title(f"{title}\n{metric}", fontsize=9)
    ax.set_ylabel(UNIT_LABEL.get(unit, unit) or "value", fontsize=8)
    ax.yaxis.set_major_formatter(FuncFormatter(formatter(unit)))
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))
    ax.set_xlabel("time (UTC)", fontsize=8)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return fig


def _draw(series: list[dict[str, Any]], title: str, unit: str, threshold: float | None, threshold_label: str,
          metric: str) -> bytes:
    fig = figure(series, title, unit, threshold, threshold_label, metric)
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        _pyplot().close(fig)


def render_report_chart(report: Report, artifacts: list[Artifact]) -> bytes | None:
    """The chart for a report's leading hypothesis: its declared series, or the playbook's fallback."""
    lead = report.leading()
    if lead is not None and lead[1].chart is not None:
        chart = lead[1].chart
        picked = pick_declared(artifacts, chart)
        if picked is None:
            return None  # the declared series was not fetched; another series would mislead
        return _draw(picked[1], chart.title, chart.unit, chart.threshold, chart.threshold_label, chart.metric)
    return render_chart(artifacts, lead[0].playbook if lead else None)


def render_chart(artifacts: list[Artifact], playbook: str | None, title: str = "") -> bytes | None:
    """PNG bytes of the playbook's fallback series, or None when no recorded range query fits."""
    picked = pick_series(artifacts, playbook)
    if picked is None:
        return None
    artifact, series = picked
    return _draw(series, title or artifact.id, "count", None, "", artifact.id)
