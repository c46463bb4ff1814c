"""Recorded incidents carry the range series live triage would have fetched (series/), and replays and drills draw
the leading hypothesis's chart with live triage's own code (bot/render/chart.py)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from bot.cli.main import main
from bot.render.chart import pick_declared
from bot.render.drills.recorded_chart import drill_chart, recorded_chart
from collectors.models import Artifact, ArtifactKind, Target
from drills.compose_series import SOURCE_LINE, compose, leader_chart, load_plan
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import INCIDENT_DIR, Incident, IncidentError, incident_dirs, load_incident
from drills.recorded.record import write_incident
from playbooks.model import Chart, NoChart
from playbooks.pipeline import default_playbooks
from playbooks.report import ChartSpec

PNG = b"\x89PNG\r\n\x1a\n"


def _spec(chart: Chart) -> ChartSpec:
    return ChartSpec(metric=chart.metric, title=chart.title, unit=chart.unit, threshold=chart.threshold,
                     threshold_label=chart.threshold_label, breach=chart.breach)


def _values(artifact: Artifact) -> list[float]:
    body = json.loads(artifact.content)
    return [float(v) for s in body["data"]["result"] for _, v in s["values"]]


def _declares_no_chart(incident: Incident) -> bool:
    """Whether the ground-truth hypothesis exists and declares `chart: {none: <why>}` (not merely lacks a chart)."""
    truth = incident.meta.ground_truth
    assert truth is not None, incident.meta.id
    playbook = next(p for p in default_playbooks() if p.spec.id == truth.playbook)
    stack = list(playbook.hypotheses)
    while stack:
        node = stack.pop()
        if node.spec.id == truth.hypothesis:
            return isinstance(node.spec.chart, NoChart)
        stack.extend(node.children)
    raise AssertionError(f"{incident.meta.id}: no hypothesis {truth.playbook}/{truth.hypothesis}")


def test_every_incident_whose_leader_declares_a_series_has_it() -> None:
    charted = without = 0
    folders = incident_dirs()
    for folder in folders:
        incident = load_incident(folder)
        chart = leader_chart(incident)
        if chart is None:
            assert _declares_no_chart(incident), f"{incident.meta.id}: its leader declares neither a chart nor none"
            without += 1
            continue
        charted += 1
        picked = pick_declared(incident.chart_inputs(), _spec(chart))
        assert picked is not None, f"{incident.meta.id}: no {chart.metric} series"
        artifact, series = picked
        assert series and all(len(s["values"]) >= 2 for s in series), incident.meta.id
        if artifact in incident.series:
            # Composed series say so, in their index and in incident.yaml.
            assert artifact.source == "composed" and SOURCE_LINE in incident.meta.source, incident.meta.id
    assert charted + without == len(folders) and charted > without  # most leaders have a series to show


def test_composed_series_stay_on_the_rules_side_of_its_line() -> None:
    """A series whose chart has a fixed line reaches it on the side the rule names (within 5%), as the incident's
    evidence says it did: a node running out of memory goes under 10% available, a hot GPU over 85 °C."""
    for folder in incident_dirs():
        incident = load_incident(folder)
        chart = leader_chart(incident)
        if chart is None or chart.threshold is None or not incident.series:
            continue
        values = _values(incident.series[0])
        line = chart.threshold
        reached = min(values) <= line * 1.05 if chart.breach == "below" else max(values) >= line * 0.95
        assert reached, f"{incident.meta.id}: {chart.metric} never reaches {line} ({chart.breach})"


@pytest.mark.parametrize("name", ["oom-trainer-limit", "xid-79-fallen-off-bus"])
def test_the_committed_series_are_what_the_script_writes(name: str) -> None:
    """The numbers are generated (seeded), never hand-edited: regenerating gives the committed bytes."""
    incident = load_incident(INCIDENT_DIR / name)
    composed = compose(incident, load_plan()[name])
    assert composed is not None
    index, body = composed
    [recorded] = incident.series
    assert recorded.id == index["file"] and recorded.command == index["command"]
    assert json.loads(recorded.content) == body


def test_replay_draws_the_leaders_series_with_live_triages_renderer(tmp_path: Path) -> None:
    out = tmp_path / "chart.png"
    assert main(["replay", str(INCIDENT_DIR / "oom-trainer-limit"), "--chart", str(out)]) == 0
    png = out.read_bytes()
    assert png.startswith(PNG)
    text = Image.open(io.BytesIO(png)).text  # type: ignore[attr-defined]
    assert text["Source"] == "container_memory_working_set_bytes via prom-memory-working-set-range.json"
    # The line is the container's 200Gi limit, read from the facts as live triage reads it.
    assert text["Description"] == "unit=bytes; threshold=2.14748e+11 (above: the container's memory limit)"


@pytest.mark.parametrize(("name", "metric"), [
    ("nccl-rank-pending-no-gang", "kube_pod_status_phase"),
    ("latency-asr-gpus-thermal-throttled", "DCGM_FI_DEV_GPU_TEMP"),
])
def test_a_drill_debrief_draws_the_same_chart(name: str, metric: str) -> None:
    incident = load_incident(INCIDENT_DIR / name)
    png = drill_chart(incident)
    assert png is not None and png == recorded_chart(incident)
    assert Image.open(io.BytesIO(png)).text["Source"].startswith(f"{metric} via prom-")  # type: ignore[attr-defined]


def test_chart_series_are_never_evidence() -> None:
    """A drill never reveals them and the playbooks never read facts from them: they are the picture only."""
    incident = load_incident(INCIDENT_DIR / "oom-trainer-limit")
    ids = {a.id for a in incident.series}
    assert ids == {"prom-memory-working-set-range.json"}
    assert not ids & {a.id for a in incident.artifacts}
    assert not ids & {a.id for a in evidence_for(incident).artifacts("metrics")}


def test_no_chart_when_the_leader_declares_none() -> None:
    assert recorded_chart(load_incident(INCIDENT_DIR / "nccl-shm-default-64mib")) is None


def test_a_saved_live_triage_keeps_the_series_it_fetched(tmp_path: Path) -> None:
    """Live triage's chart wave is written with the rest of what it read (artifacts/prom-<query>.json, verbatim),
    so its replay draws the chart on-call saw."""
    source = load_incident(INCIDENT_DIR / "oom-trainer-limit")
    fetched = replace(source.series[0], source="prometheus")
    folder = write_incident(tmp_path / "saved", [*source.artifacts, fetched], source.meta.target,
                            source.meta.captured_at, page="p", title="t", missing=[])
    saved = load_incident(folder)
    assert (folder / "artifacts" / fetched.id).read_text(encoding="utf-8") == fetched.content
    assert recorded_chart(saved) == recorded_chart(source)


def test_a_series_entry_must_be_a_range_answer(tmp_path: Path) -> None:
    folder = write_incident(tmp_path / "bad", [Artifact(id="a.txt", kind=ArtifactKind.TEXT, content="x\n")],
                            Target(namespace="ns"), load_incident(INCIDENT_DIR / "oom-trainer-limit").meta.captured_at,
                            page="p", title="t", missing=[])
    (folder / "series").mkdir()
    (folder / "series" / "index.yaml").write_text("- {file: dmesg.txt, kind: kernel-log}\n", encoding="utf-8")
    with pytest.raises(IncidentError, match="prometheus-query"):
        load_incident(folder)
