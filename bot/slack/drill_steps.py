"""One step of a drill or an interview in Slack: what it shows (Outcome), the outbox keys of its posts, queueing
them in the thread, and the lock that applies steps on one session one after another (bot/slack/drill_service.py
has the ordering this relies on).
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from bot.delivery import PRIORITY_REPORT, Edit, Upload, queue
from bot.delivery import Reply as ThreadPost
from bot.render.drills.slack_drill import Reply, block_dicts, closed_root
from bot.store.models import OutboxItem
from drills.session import DrillSession

_STRIPES = 64


class Locks:
    """Striped locks: steps on one session apply one after another in this process; memory stays bounded."""

    def __init__(self, stripes: int = _STRIPES) -> None:
        self._locks = [threading.Lock() for _ in range(stripes)]

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._locks[hash(key) % len(self._locks)]:
            yield


@dataclass(frozen=True)
class Outcome:
    """What a step shows: thread replies, the audit detail, and whether the exercise ended."""

    replies: list[Reply]
    detail: dict[str, Any]
    finished: str | None = None  # a closing note for the root message, whose buttons then go
    note: str | None = None  # to the clicker alone


def step_prefix(session: DrillSession, action: str) -> str:
    """The outbox key prefix of a step's posts: from the session before the step (drill_service.py says why)."""
    return f"drill:{session.id}:{len(session.timeline)}:{action}"


def queue_outcome(db: Session, root: OutboxItem, prefix: str, outcome: Outcome) -> None:
    """The step's replies (and files) in the root's thread, and the root without buttons when it ended."""
    for n, reply in enumerate(outcome.replies):
        queue(db, ThreadPost(key=f"{prefix}:{n}", channel=root.channel, kind="drill", text=reply.text,
                        blocks=block_dicts(reply.blocks), parent=root))
        if reply.upload is not None:
            queue(db, Upload(key=f"{prefix}:{n}:file", channel=root.channel, kind="drill-file",
                             filename=reply.upload.filename, title=reply.upload.title, content=reply.upload.content,
                             parent=root))
        if reply.chart is not None:
            # Posted as live triage posts a report's chart (bot/delivery/queue.py), so a drill shows the same picture.
            queue(db, Upload(key=f"{prefix}:{n}:chart", channel=root.channel, kind="chart", filename="chart.png",
                             title="The series behind the leading hypothesis",
                             content_b64=base64.b64encode(reply.chart).decode("ascii"), parent=root))
    if outcome.finished is not None:
        closed = closed_root(root.payload.get("blocks") or [], outcome.finished)
        queue(db, Edit(key=f"{root.idempotency_key}:closed", kind="drill-root", target=root,
                       fields={"text": root.payload.get("text", ""), "blocks": closed}, priority=PRIORITY_REPORT))
