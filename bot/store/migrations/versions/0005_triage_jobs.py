"""Live triages become jobs in the database, run by worker processes (bot.store.triage_queue).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    if sa.inspect(op.get_bind()).has_table("triage_jobs"):  # a terminal's create_all may have made it already
        return
    op.create_table(
        "triage_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=300), nullable=False),
        sa.Column("request", _json(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("locked_by", sa.String(length=200), nullable=True),
        sa.Column("locked_until", _time(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("finished_at", _time(), nullable=True),
        sa.Column("outcome", sa.String(length=16), nullable=True),
        sa.Column("seconds", sa.Float(), nullable=True),
        sa.Column("missing_sources", _json(), nullable=False),
        sa.Column("counted", sa.Boolean(), nullable=False),
        sa.CheckConstraint("status IN ('pending', 'running', 'done')", name=op.f("ck_triage_jobs_status")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_triage_jobs")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_triage_jobs_idempotency_key")),
    )
    op.create_index("ix_triage_jobs_status_locked_until", "triage_jobs", ["status", "locked_until"])


def downgrade() -> None:
    op.drop_index("ix_triage_jobs_status_locked_until", table_name="triage_jobs")
    op.drop_table("triage_jobs")
