"""Alert groups remember a digest of the last notification applied to them (bot.webhook.repeat).

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-28

Alertmanager sends a group again every repeat_interval, and an HA pair sends each notification twice. A repeat
that matches the digest changed nothing: the webhook answers it with one read, without redacting it again and
without waiting for the database's write lock.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | Sequence[str] | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("alert_groups") as batch:
        batch.add_column(sa.Column("state_hash", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("alert_groups") as batch:
        batch.drop_column("state_hash")
