"""Interviews held in Slack threads, in their own table (interview_sessions)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import Engine, insert, select, update

from bot.store.drill_sessions import interview_sessions, payload_of, utc
from drills.interview import InterviewSession


class InterviewRecord(BaseModel):
    """An interview in Slack: the core's session plus who, where, and what has been handled."""

    id: str
    user: str
    channel: str
    question_id: str
    started_at: datetime
    updated_at: datetime
    session: InterviewSession
    steps: int = 0  # actions handled so far; numbers the outbox keys
    thread_ts: str | None = None  # the root's ts, once a reply has shown it
    seen: list[str] = Field(default_factory=list)  # message ts already graded: Slack may deliver an event twice


class InterviewStore:
    """Interview records: add, save, load, and the open ones of a channel."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def add(self, record: InterviewRecord) -> None:
        with self.engine.begin() as conn:
            conn.execute(insert(interview_sessions).values(id=record.id, **self._row(record)))

    def save(self, record: InterviewRecord) -> None:
        with self.engine.begin() as conn:
            conn.execute(update(interview_sessions).where(interview_sessions.c.id == record.id)
                         .values(self._row(record)))

    def load(self, record_id: str) -> InterviewRecord | None:
        payload = payload_of(self.engine, interview_sessions, record_id)
        return InterviewRecord.model_validate(payload) if payload is not None else None

    def open_in(self, channel: str, limit: int = 50) -> list[InterviewRecord]:
        """The channel's unfinished interviews, most recently active first (the channel index covers it)."""
        query = (select(interview_sessions.c.payload)
                 .where(interview_sessions.c.channel == channel, interview_sessions.c.finished.is_(False))
                 .order_by(interview_sessions.c.updated_at.desc()).limit(limit))
        with self.engine.connect() as conn:
            return [InterviewRecord.model_validate(p) for p in conn.execute(query).scalars()]

    @staticmethod
    def _row(record: InterviewRecord) -> dict[str, Any]:
        overall = record.session.overall()
        return {"question_id": record.question_id, "user_id": record.user, "channel": record.channel,
                "finished": record.session.phase == "done", "score": overall.score if overall else None,
                "started_at": utc(record.started_at), "updated_at": utc(record.updated_at),
                "payload": record.model_dump(mode="json")}

