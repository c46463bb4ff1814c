"""Saved incidents are drills: `triagebot drill save` from the bot's SQLite store, then list, drill, random pick,
leaderboard, all through the real command line; and a saved triage replays to the report on-call saw.

The stored triage is a bundled recording's evidence, analysed and stored the way the bot stores a run, so its
answer key is known (par: pod status and metrics) and a drill along the ideal path scores 100.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from bot.cli.main import main
from bot.store import repo
from bot.store.db import make_engine, migrate, session_factory
from bot.store.models import TriageRun
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.pipeline import analyse
from playbooks.report import Report
from tests.harness.processes import finish

ROOT = Path(__file__).resolve().parents[2]
RECORDING = "oom-trainer-limit"


def store_triage(database: Path, *, symptoms: list[str] | None = None, verdict: str = "correct") -> int:
    """A stored incident whose one run is a triage of the recording's evidence; returns the incident's id.

    `symptoms` are what an alert's name forces (the alert flow passes them); the report shows those playbooks
    even where their triggers do not fire.
    """
    recorded = load_incident(INCIDENT_DIR / RECORDING)
    target = recorded.meta.target
    report = analyse(recorded.artifacts, target, missing=recorded.meta.missing, symptoms=symptoms)
    engine = make_engine(f"sqlite:///{database}")
    migrate(engine)
    try:
        with session_factory(engine).begin() as db:
            incident, _ = repo.open_incident(db, "alert:trainer-crashloop", title="training-job in ml",
                                             source="alert", namespace=target.namespace, target=target,
                                             channel="C0OPS")
            run = repo.record_triage_run(db, incident_id=incident.id, target=target, trigger="alert", status="ok",
                                         started_at=recorded.meta.captured_at, report=report,
                                         artifacts=recorded.artifacts, missing=report.missing)
            repo.add_feedback(db, incident_id=incident.id, user_id="U0ALICE", verdict=verdict,
                              triage_run_id=run.id, note="Confirmed: the trainer's own limit.")
            return incident.id
    finally:
        engine.dispose()


def start_cli(args: list[str], state: Path, stdin: str = "") -> subprocess.Popen[str]:
    """The command started, its input written and closed; `finish` collects it. Commands that do not depend on
    each other start together: each is mostly interpreter start-up and imports, and CI has two cores."""
    # Only the state dir is given: the database and the drills dir are its defaults, as for a user on a laptop.
    env = {**os.environ, "TRIAGEBOT_STATE_DIR": str(state), "COLUMNS": "200"}
    for name in ("TRIAGEBOT_DATABASE_URL", "TRIAGEBOT_DRILLS_DIR", "TRIAGEBOT_CONFIG"):
        env.pop(name, None)
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert process.stdin is not None
    # Small inputs: they fit the pipe's buffer, so writing before anyone reads cannot block.
    process.stdin.write(stdin)
    process.stdin.close()
    process.stdin = None  # closed: communicate() must not flush it again
    return process


def cli(args: list[str], state: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return finish(start_cli(args, state, stdin), timeout=180)


def test_save_a_stored_incident_then_list_drill_and_pick_it(tmp_path: Path) -> None:
    incident_id = store_triage(tmp_path / "triagebot.sqlite")
    drill_id = f"incident-{incident_id}"

    saved = cli(["drill", "save", str(incident_id)], tmp_path)
    assert saved.returncode == 0, saved.stderr
    assert (tmp_path / "drills" / drill_id / "incident.yaml").is_file()  # the drills dir, no -o needed
    assert f"Drill it with `triagebot drill {drill_id}` or `/drill start {drill_id}`" in " ".join(saved.stdout.split())

    # Listing, a drill and a random pick need only the saved drill, not each other: started together.
    listing = start_cli(["drill", "list"], tmp_path)
    # Drilled like a bundled incident: the page, evidence, a hint, the declaration, the score and the debrief.
    playing = start_cli(["drill", drill_id, "--trainee", "dana", "--channel", "#sre"],
                        tmp_path,
                        "evidence pod status\nevidence metrics\nhint\ndeclare oom-killed/host-memory-underestimated\n")
    # A random pick sees it too (it is the only incident tagged "saved").
    picking = start_cli(["drill", "random", "--tag", "saved", "--trainee", "erin", "--seed", "3"], tmp_path, "quit\n")
    listed, played, picked = finish(listing, 180), finish(playing, 180), finish(picking, 180)

    assert listed.returncode == 0, listed.stderr
    rows = {line.split("│")[1].strip(): line for line in listed.stdout.splitlines() if line.count("│") > 2}
    assert re.search(r"│\s*saved\s*│", rows[drill_id]) and re.search(r"│\s*bundled\s*│", rows[RECORDING])
    assert "1 saved" in listed.stdout

    assert played.returncode == 0, played.stderr
    before, _, debrief = played.stdout.partition("Debrief:")
    assert "training-job in ml (alert" in before  # the saved page: what on-call saw, and when
    assert "OOMKilled" in before and "Direction:" in before
    # The saved triage's lead is the refinement the evidence confirms as firmly as its parent (ranking rule 7).
    assert "RIGHT: you declared oom-killed/host-memory-underestimated" in debrief
    assert "Score 95/100" in debrief  # the ideal path, less one hint level
    assert "Ideal path (par 2m30s)" in debrief and drill_id in debrief

    assert picked.returncode == 0, picked.stderr
    session_id = re.search(r"--resume (\w+)", picked.stdout).group(1)  # type: ignore[union-attr]

    # The history of the pick, resuming it and the leaderboard of the drill: again independent of each other.
    # (History lists the session whether or not the resume has finished it by then.)
    history_of = start_cli(["drill", "history", "--trainee", "erin"], tmp_path)
    # Resuming finds the saved incident again, and the leaderboard ranks it like any other.
    resuming = start_cli(["drill", "--resume", session_id], tmp_path, "declare oom-killed/node-oom\n")
    ranking = start_cli(["drill", "leaderboard", "--channel", "#sre"], tmp_path)
    history, resumed, board = finish(history_of, 180), finish(resuming, 180), finish(ranking, 180)
    assert session_id in history.stdout and drill_id in history.stdout
    assert resumed.returncode == 0, resumed.stderr
    assert "WRONG: you declared oom-killed/node-oom" in resumed.stdout
    assert re.search(r"dana\s*│\s*95\s*│\s*1\s*│", board.stdout), board.stdout


def test_saving_twice_or_over_a_bundled_id_is_one_line_and_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id = store_triage(database)
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("TRIAGEBOT_DRILLS_DIR", str(tmp_path / "drills"))
    assert main(["drill", "save", str(incident_id)]) == 0
    capsys.readouterr()
    for argv, expected in (
            (["drill", "save", str(incident_id)], "exists and is not empty"),
            (["drill", "save", str(incident_id), "-o", str(tmp_path / "drills" / RECORDING)],
             f"'{RECORDING}' is the id of a bundled incident"),
            (["drill", "save", str(incident_id), "-o", str(tmp_path / "Has Spaces")], "cannot be a drill id"),
            (["drill", "incident-999", "--db", str(tmp_path / "d.sqlite")], "no recorded incident 'incident-999'"),
            (["drill", "list", "extra"], "go with `triagebot drill save`")):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert expected in err and err.count("\n") == 1, (argv, err)
    assert not (tmp_path / "drills" / RECORDING).exists()


def test_a_saved_drill_without_a_ground_truth_is_listed_but_not_drillable(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id = store_triage(database, verdict="wrong")  # "wrong" without the right answer: no ground truth
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("TRIAGEBOT_DRILLS_DIR", str(tmp_path / "drills"))
    monkeypatch.setenv("COLUMNS", "200")
    assert main(["drill", "save", str(incident_id)]) == 0
    assert "cannot be drilled until it has a ground truth" in " ".join(capsys.readouterr().out.split())
    assert main(["drill", "list", "--tag", "saved"]) == 0
    out = capsys.readouterr().out
    assert f"incident-{incident_id}" in out and "no ground_truth yet" in out and "1 shown" in out
    assert main(["drill", f"incident-{incident_id}", "--db", str(tmp_path / "d.sqlite")]) == 2
    assert "has no ground_truth yet" in capsys.readouterr().err


def test_a_saved_alert_triage_replays_to_the_report_on_call_saw(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """An alert's name forced a playbook whose trigger does not fire on this evidence; the replay forces it too."""
    database = tmp_path / "bot.sqlite"
    incident_id = store_triage(database, symptoms=["latency"])
    engine = make_engine(f"sqlite:///{database}")
    with session_factory(engine)() as db:
        stored = db.scalars(select(TriageRun)).one().report
    engine.dispose()
    assert stored is not None and "latency" in stored["symptoms"]  # forced, not triggered
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("TRIAGEBOT_DRILLS_DIR", str(tmp_path / "drills"))
    assert main(["drill", "save", str(incident_id)]) == 0

    replayed = replay(load_incident(tmp_path / "drills" / f"incident-{incident_id}")).model_dump(mode="json")
    assert replayed["findings"] == stored["findings"]  # every hypothesis's status, score and evidence
    assert replayed["facts"] == stored["facts"] and replayed["symptoms"] == stored["symptoms"]
    lead = Report.model_validate(replayed).leading()
    assert lead is not None and (lead[0].playbook, lead[1].id, lead[1].status) == (
        "oom-killed", "host-memory-underestimated", "confirmed")


# ---- issue 28, point 6: saved drills keep their evidence -------------------------------------------------------

CRASHLOOP = {"alertname": "KubePodCrashLooping", "namespace": "ml", "pod": "training-job-xyz",
             "container": "trainer", "reason": "CrashLoopBackOff", "severity": "critical"}


def store_alert_triage(database: Path, *, evidence: bool = True) -> tuple[int, dict[str, Any], Report]:
    """An incident opened by a real webhook through the bot's alert flow, whose triage read the recording's
    evidence and the alert, as `run_triage` does for an alert (symptoms forced, the alert's symptoms leading).
    Without `evidence` the triage read nothing but the alert (the cluster did not answer). Returns the incident
    id, the stored webhook body and the stored report."""
    from bot.policy import Permissions
    from bot.runner.triage import alert_artifact
    from bot.webhook.alert_flow import accept_alerts
    from bot.webhook.payload import AlertmanagerPayload
    from collectors.models import Missing
    from tests.harness.webhooks import webhook_body

    recorded = load_incident(INCIDENT_DIR / RECORDING)
    body = webhook_body(CRASHLOOP, starts=recorded.meta.captured_at, fingerprint="f1",
                        annotations={"summary": "Pod ml/training-job-xyz (trainer) is in waiting state."})
    engine = make_engine(f"sqlite:///{database}")
    migrate(engine)
    factory = session_factory(engine)
    try:
        (request,) = accept_alerts(factory, AlertmanagerPayload.model_validate(body), body, routes=[],
                                   default_channel="C0OPS", receiver_instance="r", now=recorded.meta.captured_at,
                                   permissions=Permissions(channels={"C0OPS": ["*"]}))
        assert request.alert is not None and request.incident_id is not None
        found = recorded.artifacts if evidence else []
        missing = recorded.meta.missing if evidence else [Missing(source="kubernetes:pods", reason="timeout after 5s")]
        artifacts = [*found, alert_artifact(request.alert, recorded.meta.captured_at)]
        report = analyse(artifacts, request.target, missing=missing, symptoms=request.symptoms,
                         leads=request.symptoms)
        with factory.begin() as db:
            repo.record_triage_run(db, incident_id=request.incident_id, target=request.target, trigger="alert",
                                   status="ok", started_at=recorded.meta.captured_at, report=report,
                                   artifacts=artifacts, missing=report.missing)
        return request.incident_id, body, report
    finally:
        engine.dispose()


def saving(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, database: Path) -> Path:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{database}")
    monkeypatch.setenv("TRIAGEBOT_DRILLS_DIR", str(tmp_path / "drills"))
    monkeypatch.setenv("COLUMNS", "200")
    return tmp_path / "drills"


def test_a_saved_alert_triage_keeps_the_alert_and_what_it_read_and_replays_to_its_leader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id, body, stored = store_alert_triage(database)
    drills = saving(tmp_path, monkeypatch, database)
    assert main(["drill", "save", str(incident_id)]) == 0
    folder = drills / f"incident-{incident_id}"

    assert json.loads((folder / "alert.json").read_text()) == body  # the notification that opened the incident
    saved = load_incident(folder)
    # Everything the triage read: the recording's artifacts and the alert as the triage read it (and, in
    # incident.yaml's `missing`, what it could not read).
    assert sorted(a.id for a in saved.artifacts) == sorted(
        [a.id for a in load_incident(INCIDENT_DIR / RECORDING).artifacts if a.unavailable is None] + ["alert"])
    assert saved.meta.page.startswith("[FIRING:1] KubePodCrashLooping: Pod ml/training-job-xyz (trainer)")
    assert saved.meta.leads == ["crash-loop"] and saved.meta.missing == stored.missing
    replayed, lead = replay(saved), stored.leading()
    assert lead is not None and replayed.leading() is not None
    assert [(f.playbook, h.id, h.status) for f, h in [replayed.leading(), lead]] == [  # type: ignore[misc]
        (lead[0].playbook, lead[1].id, lead[1].status)] * 2
    assert replayed.model_dump(mode="json")["findings"] == stored.model_dump(mode="json")["findings"]


def test_an_incident_whose_triage_read_nothing_is_refused_in_one_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id, _, _ = store_alert_triage(database, evidence=False)
    drills = saving(tmp_path, monkeypatch, database)
    assert main(["drill", "save", str(incident_id)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("triagebot: error: triage run ")
    assert "read no evidence (not read: kubernetes:pods), nothing beyond the alert" in err
    assert not (drills / f"incident-{incident_id}").exists()


def test_force_replaces_a_saved_drill_and_only_a_saved_drill(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    database = tmp_path / "bot.sqlite"
    incident_id = store_triage(database, verdict="wrong")  # saved first without a ground truth
    drills = saving(tmp_path, monkeypatch, database)
    folder = drills / f"incident-{incident_id}"
    assert main(["drill", "save", str(incident_id)]) == 0
    assert load_incident(folder).meta.ground_truth is None
    capsys.readouterr()

    again = ["drill", "save", str(incident_id), "--ground-truth", "oom-killed/limit-too-low"]
    assert main(again) == 2
    err = capsys.readouterr().err
    assert err == f"triagebot: error: {folder} exists and is not empty; add --force to replace it\n"
    assert main([*again, "--force"]) == 0
    truth = load_incident(folder).meta.ground_truth
    assert truth is not None and (truth.playbook, truth.hypothesis) == ("oom-killed", "limit-too-low")
    assert sorted(p.name for p in drills.iterdir()) == [folder.name]  # nothing left aside

    elsewhere = tmp_path / "notes"
    elsewhere.mkdir()
    (elsewhere / "todo.txt").write_text("keep me")
    capsys.readouterr()
    assert main(["drill", "save", str(incident_id), "-o", str(elsewhere), "--force"]) == 2
    assert "is not a saved drill (no incident.yaml); --force only replaces saved drills" in capsys.readouterr().err
    assert (elsewhere / "todo.txt").read_text() == "keep me"
