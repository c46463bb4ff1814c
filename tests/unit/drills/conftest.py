"""Shared helpers for drill tests: load a bundled incident once, and walk a trainee's path through it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import cache

import pytest

from drills import session as drill
from drills.debrief import Debrief
from drills.recorded.incident import INCIDENT_DIR, Incident, incident_dirs, load_incident
from drills.session import DrillSession

T0 = datetime(2026, 11, 2, 4, 0, tzinfo=UTC)
INCIDENT_IDS = [p.name for p in incident_dirs()]


@cache
def bundled(incident_id: str) -> Incident:
    return load_incident(INCIDENT_DIR / incident_id)


def play(incident: Incident, steps: Sequence[str], trainee: str = "alice", channel: str = "#sre",
         session_id: str = "s1") -> tuple[DrillSession, Debrief | None]:
    """Run `evidence X`, `propose H`, `hint`, `declare P/H` steps; returns the session and the debrief if declared."""
    session, _ = drill.start(incident, trainee, channel, now=T0, session_id=session_id)
    debrief = None
    for step in steps:
        command, _, arg = step.partition(" ")
        if command == "evidence":
            session, _ = drill.request_evidence(session, incident, arg, now=T0)
        elif command == "propose":
            session, _ = drill.propose(session, incident, arg, now=T0)
        elif command == "hint":
            session, _ = drill.hint(session, incident, now=T0)
        elif command == "declare":
            playbook, _, hypothesis = arg.partition("/")
            session, debrief = drill.declare(session, incident, playbook, hypothesis, now=T0)
        else:
            raise AssertionError(f"unknown step {step!r}")
    return session, debrief


@pytest.fixture
def player() -> Callable[..., tuple[DrillSession, Debrief | None]]:
    return play


@pytest.fixture
def incident() -> Callable[[str], Incident]:
    return bundled
