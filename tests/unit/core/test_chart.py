"""Charts come from recorded range queries and pick the series that fits the playbook."""

from __future__ import annotations

import json

from bot.render.chart import pick_series, render_chart
from collectors.models import Artifact, ArtifactKind


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
