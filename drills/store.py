"""Where drill sessions live between steps: the store contract, an in-memory store, and the leaderboard rule.

Surfaces save the session after every step, so a drill survives a restart (terminal) or a redeploy (chat).
The leaderboard is computed here from finished sessions, the same way for every store.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol

from pydantic import BaseModel

from drills.session import DrillSession


class LeaderboardRow(BaseModel):
    trainee: str
    points: int  # sum over incidents of the trainee's best score on each, so repeating one drill farms nothing
    drills: int  # finished drills
    incidents: int  # distinct incidents finished
    best: int
    average: float


class SessionStore(Protocol):
    def save(self, session: DrillSession) -> None:
        """Insert or replace the session with this id."""

    def load(self, session_id: str) -> DrillSession | None: ...

    def list_by_trainee(self, trainee: str, limit: int = 50) -> list[DrillSession]:
        """Newest first, finished or not."""

    def leaderboard(self, channel: str, limit: int = 10) -> list[LeaderboardRow]: ...


def leaderboard_rows(sessions: Iterable[DrillSession], limit: int = 10) -> list[LeaderboardRow]:
    """Rank trainees by points, then average, then name (deterministic)."""
    best: dict[str, dict[str, int]] = {}
    totals: dict[str, list[int]] = {}
    for s in sessions:
        if not s.finished or s.score is None:
            continue
        per_incident = best.setdefault(s.trainee, {})
        per_incident[s.incident_id] = max(per_incident.get(s.incident_id, 0), s.score.total)
        totals.setdefault(s.trainee, []).append(s.score.total)
    rows = [LeaderboardRow(trainee=t, points=sum(best[t].values()), drills=len(scores), incidents=len(best[t]),
                           best=max(scores), average=round(sum(scores) / len(scores), 1))
            for t, scores in totals.items()]
    rows.sort(key=lambda r: (-r.points, -r.average, r.trainee))
    return rows[:limit]


class MemorySessionStore:
    """For tests and one-off runs; holds copies so callers cannot change stored sessions by accident."""

    def __init__(self) -> None:
        self._sessions: dict[str, DrillSession] = {}

    def save(self, session: DrillSession) -> None:
        self._sessions[session.id] = session.model_copy(deep=True)

    def load(self, session_id: str) -> DrillSession | None:
        found = self._sessions.get(session_id)
        return found.model_copy(deep=True) if found else None

    def list_by_trainee(self, trainee: str, limit: int = 50) -> list[DrillSession]:
        mine = [s for s in self._sessions.values() if s.trainee == trainee]
        mine.sort(key=lambda s: (s.started_at, s.id), reverse=True)
        return [s.model_copy(deep=True) for s in mine[:limit]]

    def leaderboard(self, channel: str, limit: int = 10) -> list[LeaderboardRow]:
        return leaderboard_rows((s for s in self._sessions.values() if s.channel == channel), limit)
