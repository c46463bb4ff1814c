"""bot/runner/capture.py: which alerts are captured, where, and that a capture is a recorded incident drills can
list."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.runner.capture import capture_folder, store_capture, wants_capture
from collectors.models import Artifact, ArtifactKind, Missing, Target
from drills.recorded.catalog import ID_PATTERN, load_catalog
from drills.recorded.incident import load_incident

WHEN = datetime(2026, 3, 10, 9, 0, 5, tzinfo=UTC)


@pytest.mark.parametrize(("name", "patterns", "wanted"), [
    ("NCCLJobStalled", ["NCCLJobStalled"], True),
    ("NCCLJobStalled", ["NCCL*"], True),
    ("TrainingStalled", ["NCCLJobStalled"], False),
    ("nccljobstalled", ["NCCLJobStalled"], False),  # alert names are case-sensitive in Prometheus
    ("", ["*"], False),
    ("NCCLJobStalled", [], False),
])
def test_wants_capture(name: str, patterns: list[str], wanted: bool) -> None:
    assert wants_capture(name, patterns) is wanted


def test_capture_folders_are_drill_ids_and_never_overwrite(tmp_path: Path) -> None:
    target = Target(service="job/Llama_FT", namespace="ml-training")
    first = capture_folder(tmp_path, target, WHEN)
    assert first.name == "capture-ml-training-llama-ft-20260310t090005"
    assert ID_PATTERN.fullmatch(first.name)
    first.mkdir()
    second = capture_folder(tmp_path, target, WHEN)
    assert second.name == "capture-ml-training-llama-ft-20260310t090005-2"


def test_a_capture_is_a_recorded_incident_listed_for_drills(tmp_path: Path) -> None:
    log = "[pod/llama-ft-worker-2/pytorch] [rank3]:[E901 05:20:03.118800003 ProcessGroupNCCL.cpp:1746] ...\n"
    artifacts = [Artifact(id="k8s-logs-ml-training-llama-ft-ranks.log", kind=ArtifactKind.NCCL_LOG,
                          subject="pytorchjob/ml-training/llama-ft", source="kubernetes",
                          command="kubectl logs -n ml-training -l training.kubeflow.org/job-name=llama-ft --prefix",
                          captured_at=WHEN, content=log)]
    missing = [Missing(source="prometheus", reason="no Prometheus URL configured")]
    folder = store_capture(tmp_path / "drills", Target(service="job/llama-ft", namespace="ml-training"), WHEN,
                           artifacts, missing, page="NCCLJobStalled: ml-training/llama-ft", symptoms=["nccl-hang"])
    incident = load_incident(folder)
    assert incident.meta.page == "NCCLJobStalled: ml-training/llama-ft"
    assert incident.meta.symptoms == ["nccl-hang"] and incident.meta.tags == ["captured", "nccl-hang"]
    assert incident.meta.missing == missing and incident.meta.ground_truth is None
    assert [(a.id, a.kind, a.content) for a in incident.artifacts] == [(artifacts[0].id, ArtifactKind.NCCL_LOG, log)]
    catalog = load_catalog(tmp_path / "drills")
    assert catalog.get(folder.name) is not None and not catalog.problems
