"""Alert episodes and a reliable outbox: per-alert order, episode numbers, storm roll-ups, collapsing updates.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25

alert_groups gain the current episode (existing groups are in their first), when it started, the newest state of
each alert (by fingerprint) and the roll-up their root is threaded under. outbox rows gain a priority, a collapse
key (versions of one message's state) and `maybe_sent` (an attempt that may have reached Slack). New NOT NULL
columns get a server default so existing rows are filled in.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("alert_groups") as batch:
        batch.add_column(sa.Column("episode", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("episode_started_at", sa.DateTime(timezone=True), nullable=True))
        batch.add_column(sa.Column("alert_states", _json(), nullable=False, server_default="{}"))
        batch.add_column(sa.Column("rollup_key", sa.String(length=300), nullable=True))
    with op.batch_alter_table("outbox") as batch:
        batch.add_column(sa.Column("priority", sa.Integer(), nullable=False, server_default="1"))
        batch.add_column(sa.Column("collapse_key", sa.String(length=300), nullable=True))
        batch.add_column(sa.Column("maybe_sent", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.create_index("ix_outbox_collapse_key", "outbox", ["collapse_key"])


def downgrade() -> None:
    op.drop_index("ix_outbox_collapse_key", table_name="outbox")
    with op.batch_alter_table("outbox") as batch:
        for column in ("maybe_sent", "collapse_key", "priority"):
            batch.drop_column(column)
    with op.batch_alter_table("alert_groups") as batch:
        for column in ("rollup_key", "alert_states", "episode_started_at", "episode"):
            batch.drop_column(column)
