"""The intake's body as JSON text instead of jsonb: nothing queries into it, and PostgreSQL parsing a wide group's
body into jsonb was on every changing webhook's time (issue 31 point 5).

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-30
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0011"
down_revision: str | Sequence[str] | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # Rows not applied yet keep their content: jsonb cast to text is its JSON text.
    with op.batch_alter_table("alert_intake") as batch:
        batch.alter_column("body", existing_type=sa.JSON().with_variant(postgresql.JSONB(), "postgresql"),
                           type_=sa.Text(), existing_nullable=False, postgresql_using="body::text")


def downgrade() -> None:
    with op.batch_alter_table("alert_intake") as batch:
        batch.alter_column("body", existing_type=sa.Text(),
                           type_=sa.JSON().with_variant(postgresql.JSONB(), "postgresql"), existing_nullable=False,
                           postgresql_using="body::jsonb")
