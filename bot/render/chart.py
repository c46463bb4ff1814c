"""One PNG chart of the series that matters for the leading hypothesis, from recorded range queries."""

from __future__ import annotations

import io
import json
import os
import tempfile
from datetime import UTC, datetime
from typing import Any

from collectors.models import Artifact, ArtifactKind

# Which range queries tell each playbook's story, best first (matched against the PromQL text).
SERIES_FOR: dict[str, tuple[str, ...]] = {
    "oom-killed": ("container_memory_working_set_bytes", "DCGM_FI_DEV_FB_USED"),
    "evicted": ("container_memory_working_set_bytes", "node_memory_MemAvailable_bytes"),
    "gpu-xid": ("DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_GPU_TEMP"),
    "latency": ("histogram_quantile", "container_cpu_cfs_throttled", "node_nf_conntrack_entries", "coredns"),
    "nccl-hang": ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_XID_ERRORS"),
    "pending": ("kube_pod_status_phase",),
    "crash-loop": ("kube_pod_container_status_restarts_total", "container_memory_working_set_bytes"),
    "image-pull": (),
}
MAX_SERIES = 6


def _matrix(artifact: Artifact) -> list[dict[str, Any]]:
    try:
        body = json.loads(artifact.content)
        data = body["data"]
        if data.get("resultType") != "matrix":
            return []
        return [r for r in data["result"] if isinstance(r, dict) and r.get("values")]
    except (ValueError, KeyError, TypeError, AttributeError):
        return []


def pick_series(artifacts: list[Artifact], playbook: str | None) -> tuple[Artifact, list[dict[str, Any]]] | None:
    """The range-query artifact that best fits the playbook, with its series."""
    ranged = [(a, m) for a in artifacts if a.kind == ArtifactKind.PROMETHEUS_QUERY and (m := _matrix(a))]
    if not ranged:
        return None
    for needle in SERIES_FOR.get(playbook or "", ()):
        for artifact, series in ranged:
            if needle in artifact.command:
                return artifact, series
    return ranged[0]


def _label(metric: dict[str, str]) -> str:
    keys = ("pod", "container", "Hostname", "gpu", "instance", "node")
    parts = [f"{k}={metric[k]}" for k in keys if metric.get(k)]
    return ", ".join(parts[:3]) or metric.get("__name__", "series")


def render_chart(artifacts: list[Artifact], playbook: str | None, title: str = "") -> bytes | None:
    """PNG bytes, or None when no recorded range query fits."""
    picked = pick_series(artifacts, playbook)
    if picked is None:
        return None
    artifact, series = picked
    # matplotlib needs a writable config dir and no display; import late, it costs about a second.
    os.environ.setdefault("MPLCONFIGDIR", tempfile.gettempdir())
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 3), dpi=100)
    try:
        for item in series[:MAX_SERIES]:
            times = mdates.date2num([datetime.fromtimestamp(float(t), UTC) for t, _ in item["values"]])
            ax.plot(times, [float(v) for _, v in item["values"]], label=_label(item.get("metric", {})),
                    linewidth=1.4)
        ax.set_title(title or artifact.id, fontsize=9)
        ax.xaxis.set_major_formatter(mdates.DateFormatter("%H:%M"))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="best")
        fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png")
        return buffer.getvalue()
    finally:
        plt.close(fig)
