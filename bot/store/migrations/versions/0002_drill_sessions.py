"""Drill sessions (the drill_sessions table of bot/store/drill_sessions.py).

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

Written from an autogenerate run against that module's metadata and reviewed. SqlSessionStore also runs
`create_all` itself, so a database may already hold this table without a revision saying so: it is adopted as is.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | Sequence[str] | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("drill_sessions"):
        return
    op.create_table(
        "drill_sessions",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("incident_id", sa.String(length=200), nullable=False),
        sa.Column("trainee", sa.String(length=200), nullable=False),
        sa.Column("channel", sa.String(length=200), nullable=False),
        sa.Column("finished", sa.Boolean(), nullable=False),
        sa.Column("score", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_drill_sessions")),
    )
    op.create_index("ix_drill_sessions_channel_finished", "drill_sessions", ["channel", "finished"])
    op.create_index(op.f("ix_drill_sessions_incident_id"), "drill_sessions", ["incident_id"])
    op.create_index(op.f("ix_drill_sessions_trainee"), "drill_sessions", ["trainee"])


def downgrade() -> None:
    op.drop_table("drill_sessions")
