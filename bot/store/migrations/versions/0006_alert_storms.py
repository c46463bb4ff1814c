"""Alert storms get a row per channel, which decides once whether a new episode starts a storm (bot.webhook.storm).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-26

The roll-up used to be found from the groups' `rollup_key`s, with the count of recent groups read before any lock:
webhooks that reached the threshold together could each count too few and start no storm. Every webhook that
starts an episode now locks its channel's row first. A storm in progress during the upgrade is carried over from
its groups, so it keeps its one roll-up.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    storms = op.create_table(
        "alert_storms",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("rollup_key", sa.String(length=300), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("channel", name=op.f("pk_alert_storms")),
        sa.UniqueConstraint("rollup_key", name=op.f("uq_alert_storms_rollup_key")),
    )
    groups = sa.table("alert_groups", sa.column("channel", sa.String()), sa.column("rollup_key", sa.String()),
                      sa.column("episode_started_at", sa.DateTime(timezone=True)))
    rows = op.get_bind().execute(
        sa.select(groups.c.channel, groups.c.rollup_key, sa.func.min(groups.c.episode_started_at),
                  sa.func.max(groups.c.episode_started_at))
        .where(groups.c.rollup_key.is_not(None), groups.c.channel.is_not(None))
        .group_by(groups.c.channel, groups.c.rollup_key)).all()
    latest: dict[str, tuple[str, datetime | None, datetime | None]] = {}
    for channel, key, first, last in rows:
        if channel not in latest or (last is not None and (latest[channel][2] is None or last > latest[channel][2])):
            latest[channel] = (key, first, last)
    if latest:
        op.bulk_insert(storms, [{"channel": c, "rollup_key": k, "started_at": f, "last_at": la}
                                for c, (k, f, la) in latest.items()])


def downgrade() -> None:
    op.drop_table("alert_storms")
