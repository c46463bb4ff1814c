"""Interview sessions get their own table; rows kept in drill_sessions under "interview:" prefixes move there.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25

Before this revision an interview was a drill_sessions row whose trainee, channel and incident_id columns carried an
"interview:" prefix. The payload (the whole record) moves unchanged; the columns lose the prefix.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PREFIX = "interview:"


def upgrade() -> None:
    bind = op.get_bind()
    if not sa.inspect(bind).has_table("interview_sessions"):  # a terminal's create_all may have made it already
        op.create_table(
            "interview_sessions",
            sa.Column("id", sa.String(length=64), nullable=False),
            sa.Column("question_id", sa.String(length=200), nullable=False),
            sa.Column("user_id", sa.String(length=200), nullable=False),
            sa.Column("channel", sa.String(length=200), nullable=False),
            sa.Column("finished", sa.Boolean(), nullable=False),
            sa.Column("score", sa.Integer(), nullable=True),
            sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
            sa.Column("payload", sa.JSON(), nullable=False),
            sa.PrimaryKeyConstraint("id", name=op.f("pk_interview_sessions")),
        )
        op.create_index("ix_interview_sessions_channel_finished", "interview_sessions", ["channel", "finished"])
        op.create_index(op.f("ix_interview_sessions_user_id"), "interview_sessions", ["user_id"])
    old = sa.table("drill_sessions", *(sa.column(c) for c in (
        "id", "incident_id", "trainee", "channel", "finished", "score", "started_at", "updated_at")),
        sa.column("payload", sa.JSON()))
    new = sa.table("interview_sessions", *(sa.column(c) for c in (
        "id", "question_id", "user_id", "channel", "finished", "score", "started_at", "updated_at")),
        sa.column("payload", sa.JSON()))
    moved = bind.execute(sa.select(old).where(old.c.channel.startswith(_PREFIX))).mappings().all()
    for row in moved:
        bind.execute(sa.insert(new).values(
            id=row["id"], question_id=row["incident_id"].removeprefix(_PREFIX),
            user_id=row["trainee"].removeprefix(_PREFIX), channel=row["channel"].removeprefix(_PREFIX),
            finished=row["finished"], score=row["score"], started_at=row["started_at"],
            updated_at=row["updated_at"], payload=row["payload"]))
    if moved:
        bind.execute(sa.delete(old).where(old.c.channel.startswith(_PREFIX)))


def downgrade() -> None:
    op.drop_table("interview_sessions")
