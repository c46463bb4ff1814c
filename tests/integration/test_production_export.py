"""`triagebot eval --production --export DIR`: labelled incidents become candidate regression cases that
`triagebot eval DIR` reads, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from bot.cli.evaluate import evaluate
from bot.cli.main import main
from bot.store import repo
from bot.store.types import utcnow
from collectors.models import Artifact, ArtifactKind, artifact_adapter
from drills.realworld import load_case
from tests.harness.fixtures import MigratedStore, report_led_by

NOW = utcnow()
# A real kernel log (github.com/akash-network/support/issues/209), as stored by a triage that read it.
XID_79 = Path("tests/realworld/gpu-xid/akash-support-209-xid-79-recurred-after-reboot/evidence.txt")


def _labelled(store: MigratedStore, key: str, lead: str | None, artifacts: list[Artifact], verdict: str,
              right: str | None, days_ago: float = 2) -> int:
    at = NOW - timedelta(days=days_ago)
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, key, title=key, source="alert", now=at)
        run = repo.record_triage_run(db, incident_id=incident.id, target={"node": "gpu-node-7"}, trigger="alert",
                                     status="ok", started_at=at, finished_at=at, report=report_led_by(lead),
                                     artifacts=[artifact_adapter().dump_python(a, mode="json") for a in artifacts])
        playbook, hypothesis = right.split("/") if right else (None, None)
        repo.add_feedback(db, incident_id=incident.id, triage_run_id=run.id, user_id="U0ONCALL", verdict=verdict,
                          right_playbook=playbook, right_hypothesis=hypothesis, now=at + timedelta(hours=1))
        return run.id


def test_labelled_incidents_are_written_as_cases_that_eval_reads(store: MigratedStore, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    kernel = Artifact(id="kernel-log", kind=ArtifactKind.KERNEL_LOG, subject="node/gpu-node-7", source="agent",
                      command="journalctl -k", content=XID_79.read_text(encoding="utf-8"))
    confirmed = _labelled(store, "confirmed", "gpu-xid/gpu-fallen-off-bus", [kernel], "correct", None)
    corrected = _labelled(store, "corrected", "gpu-xid/pcie-link", [kernel], "wrong", "gpu-xid/gpu-fallen-off-bus")
    free_text = _labelled(store, "free-text", "gpu-xid/pcie-link", [kernel], "wrong", None)
    gone = Artifact(id="pods", kind=ArtifactKind.KERNEL_LOG, source="agent", unavailable="403 Forbidden")
    nothing_read = _labelled(store, "nothing", "gpu-xid/gpu-fallen-off-bus", [gone], "correct", None)
    _labelled(store, "old", "gpu-xid/gpu-fallen-off-bus", [kernel], "correct", None, days_ago=40)

    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", store.url)
    monkeypatch.setenv("COLUMNS", "200")
    out_dir = tmp_path / "candidates"
    assert main(["eval", "--production", "--since", "30d", "--export", str(out_dir)]) == 0
    out = capsys.readouterr().out
    assert "2 labelled incident(s) of the last 30d written" in out
    assert f"skipped triage run {free_text}: the label names no hypothesis" in out
    assert f"skipped triage run {nothing_read}: the run stored no evidence" in out

    folders = sorted(p.name for p in (out_dir / "gpu-xid").iterdir())
    assert len(folders) == 2 and folders[0].endswith(f"-run-{confirmed}") and folders[1].endswith(f"-run-{corrected}")
    case, text = load_case(out_dir / "gpu-xid" / folders[1])
    assert case.expect.leader == "gpu-xid/gpu-fallen-off-bus" and case.expect.symptoms == ["gpu-xid"]
    assert "the report led with gpu-xid/pcie-link" in case.concluded
    assert "GPU has fallen off the bus" in text  # the stored evidence, as the report's evidence file shows it
    # What `triagebot eval DIR` does: both cases read back with the label leading.
    results = evaluate(out_dir)
    assert [r.failures for r in results] == [[], []]


def test_export_without_production_is_a_usage_error(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["eval", str(tmp_path), "--export", str(tmp_path / "x")]) == 2
    assert "use it with --production" in capsys.readouterr().err
