"""`triagebot eval --production`: accuracy from on-call feedback stored over weeks, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.cli.evaluate import EvalUsageError, parse_age
from bot.cli.main import main
from bot.memory.labels import labels_since
from bot.memory.production import NO_VERDICT, OTHER, Label, accuracy
from bot.store import repo
from bot.store.types import utcnow
from tests.harness.fixtures import MigratedStore, report_led_by

NOW = utcnow()


def _incident(store: MigratedStore, key: str, days_ago: float, lead: str | None,
              feedback: list[tuple[str, str | None, str, float]]) -> None:
    """One incident triaged `days_ago`, then judged: (verdict, right playbook/hypothesis, who, days ago)."""
    at = NOW - timedelta(days=days_ago)
    with store.factory.begin() as db:
        incident, _ = repo.open_incident(db, key, title=key, source="slash", now=at)
        run = repo.record_triage_run(db, incident_id=incident.id, target={}, trigger="slash", status="ok",
                                     started_at=at, finished_at=at, report=report_led_by(lead))
        for verdict, right, who, when in feedback:
            playbook, hypothesis = right.split("/") if right else (None, None)
            repo.add_feedback(db, incident_id=incident.id, triage_run_id=run.id, user_id=who, verdict=verdict,
                              right_playbook=playbook, right_hypothesis=hypothesis,
                              now=NOW - timedelta(days=when))


@pytest.fixture
def history(store: MigratedStore) -> MigratedStore:
    """Six weeks of incidents: recent verdicts mostly right, network-blocked wrong twice, one older label."""
    _incident(store, "a", 2, "oom-killed/limit-too-low", [("correct", None, "U1", 1.9)])
    _incident(store, "b", 5, "oom-killed/limit-too-low", [("correct", None, "U2", 4.5)])
    _incident(store, "c", 8, "service-unreachable/network-policy",
              [("wrong", "service-unreachable/dns", "U1", 7.5)])
    _incident(store, "d", 12, "service-unreachable/network-policy",
              [("wrong", "service-unreachable/dns", "U3", 11.0)])
    # Changed their mind: first "correct", then "wrong" with free text; the later label counts.
    _incident(store, "e", 20, "gpu-xid/hardware-fault",
              [("correct", None, "U2", 19.9), ("wrong", None, "U2", 19.0)])
    _incident(store, "f", 25, None, [("wrong", "pending/insufficient-gpu", "U4", 24.0)])
    _incident(store, "g", 40, "latency/queueing", [("wrong", "latency/dns", "U1", 39.0)])  # older than 30 days
    _incident(store, "h", 3, "crash-loop/app-error", [])  # never labelled
    return store


def test_accuracy_by_playbook_and_hypothesis_with_the_confusions(history: MigratedStore) -> None:
    with history.factory.begin() as db:
        result = accuracy(labels_since(db, NOW - timedelta(days=30)))
    assert (result.labelled, result.right, result.percent) == (6, 2, 33)
    playbooks = {t.key: (t.labelled, t.right) for t in result.by_playbook}
    assert playbooks == {"oom-killed": (2, 2), "service-unreachable": (2, 0), "gpu-xid": (1, 0),
                         NO_VERDICT: (1, 0)}
    assert result.by_playbook[-1].key == "oom-killed"  # worst first
    assert result.confusions[0] == ("service-unreachable/network-policy", "service-unreachable/dns", 2)
    assert ("gpu-xid/hardware-fault", OTHER, 1) in result.confusions
    assert (NO_VERDICT, "pending/insufficient-gpu", 1) in result.confusions


def test_since_keeps_only_recent_labels(history: MigratedStore) -> None:
    with history.factory.begin() as db:
        week = accuracy(labels_since(db, NOW - timedelta(days=7)))
        all_time = accuracy(labels_since(db, NOW - timedelta(days=60)))
    assert (week.labelled, week.right) == (2, 2)
    assert all_time.labelled == 7 and ("latency/queueing", "latency/dns", 1) in all_time.confusions


def test_the_cli_prints_the_tables(history: MigratedStore, monkeypatch: pytest.MonkeyPatch,
                                   capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", history.url)
    monkeypatch.setenv("COLUMNS", "160")
    assert main(["eval", "--production", "--since", "30d"]) == 0
    out = capsys.readouterr().out
    assert "2 of 6 labelled verdicts right (33 %)" in out
    assert "service-unreachable/network-policy" in out and "service-unreachable/dns" in out


@pytest.mark.parametrize("store", ["sqlite"], indirect=True)
def test_no_feedback_says_so(store: MigratedStore, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", store.url)
    assert main(["eval", "--production", "--since", "2w"]) == 0
    assert "No feedback in the last 2w" in capsys.readouterr().out


@pytest.mark.parametrize(("argv", "message"), [
    (["eval", "--production", "--since", "30 days"], "expected a number of hours, days or weeks"),
    (["eval", "--production", "--since", "0d"], "expected a number of hours, days or weeks"),
    (["eval", "--production", "tests/realworld"], "give no DIR"),
    (["eval"], "usage: triagebot eval DIR"),
])
def test_mistakes_are_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str],
                                          monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{tmp_path / 'absent.sqlite'}")
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1


def test_a_missing_database_is_not_created(tmp_path: Any, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "absent.sqlite"
    monkeypatch.setenv("TRIAGEBOT_DATABASE_URL", f"sqlite:///{path}")
    assert main(["eval", "--production"]) == 2
    assert "no bot database at" in capsys.readouterr().err and not path.exists()


def test_parse_age() -> None:
    assert parse_age("12h") == timedelta(hours=12) and parse_age("2w") == timedelta(weeks=2)
    with pytest.raises(EvalUsageError):
        parse_age("-3d")


_LEADS = st.sampled_from(["a/x", "a/y", "b/z", None])


@given(st.lists(st.tuples(st.integers(0, 5), _LEADS, st.booleans(), _LEADS, st.integers(0, 1000)), max_size=40))
def test_tallies_add_up_and_the_latest_label_of_a_run_wins(rows: list[tuple[int, str | None, bool, str | None,
                                                                             int]]) -> None:
    labels = [Label(run_id=r, said=s, right=ok, was=w, by="U", at=datetime(2026, 1, 1) + timedelta(minutes=m))
              for r, s, ok, w, m in rows]
    result = accuracy(labels)
    runs = {r for r, *_ in rows}
    assert result.labelled == len(runs) == sum(t.labelled for t in result.by_hypothesis)
    assert result.right == sum(t.right for t in result.by_playbook) == sum(t.right for t in result.by_hypothesis)
    assert sum(n for *_, n in result.confusions) == result.labelled - result.right
