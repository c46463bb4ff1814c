"""Initial schema: incidents, alert groups and alerts, triage runs, Slack messages, feedback, audit log, outbox.

Revision ID: 0001
Revises:
Create Date: 2026-11-22

Written from an autogenerate run against bot.store.models and reviewed. Types are spelled out here instead of
importing the model's TypeDecorator, so this file keeps meaning the same thing when the models change later.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _time() -> sa.DateTime:
    return sa.DateTime(timezone=True)  # TIMESTAMPTZ on PostgreSQL; naive-UTC text on SQLite (see bot.store.types)


def _json() -> sa.types.TypeEngine[Any]:
    return sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _one_of(column: str, values: tuple[str, ...], name: str) -> sa.CheckConstraint:
    quoted = ", ".join(f"'{v}'" for v in values)
    return sa.CheckConstraint(f"{column} IN ({quoted})", name=op.f(name))


def upgrade() -> None:
    op.create_table(
        "incidents",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=300), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("namespace", sa.String(length=253), nullable=True),
        sa.Column("target", _json(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=True),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("updated_at", _time(), nullable=False),
        _one_of("source", ("alert", "slash", "paste"), "ck_incidents_source"),
        _one_of("status", ("open", "resolved"), "ck_incidents_status"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_incidents")),
        sa.UniqueConstraint("key", name=op.f("uq_incidents_key")),
    )
    op.create_index("ix_incidents_updated_at", "incidents", ["updated_at"])

    op.create_table(
        "alert_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("group_key", sa.Text(), nullable=False),
        sa.Column("receiver", sa.String(length=200), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("common_labels", _json(), nullable=False),
        sa.Column("last_payload", _json(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("channel", sa.String(length=64), nullable=True),
        sa.Column("message_ts", sa.String(length=32), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("updated_at", _time(), nullable=False),
        _one_of("status", ("firing", "resolved"), "ck_alert_groups_status"),
        sa.ForeignKeyConstraint(["incident_id"], ["incidents.id"], name=op.f("fk_alert_groups_incident_id_incidents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alert_groups")),
        sa.UniqueConstraint("group_key", name=op.f("uq_alert_groups_group_key")),
    )

    op.create_table(
        "alerts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("group_key", sa.Text(), nullable=False),
        sa.Column("fingerprint", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("labels", _json(), nullable=False),
        sa.Column("payload", _json(), nullable=False),
        sa.Column("received_at", _time(), nullable=False),
        sa.Column("receiver_instance", sa.String(length=200), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_key"], ["alert_groups.group_key"], name=op.f("fk_alerts_group_key_alert_groups")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_alerts")),
    )
    op.create_index("ix_alerts_group_key_fingerprint", "alerts", ["group_key", "fingerprint"])

    op.create_table(
        "triage_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("target", _json(), nullable=False),
        sa.Column("trigger", sa.String(length=32), nullable=False),
        sa.Column("requested_by", sa.String(length=64), nullable=True),
        sa.Column("report", _json(), nullable=True),
        sa.Column("artifacts", _json(), nullable=False),
        sa.Column("missing", _json(), nullable=False),
        sa.Column("started_at", _time(), nullable=False),
        sa.Column("finished_at", _time(), nullable=True),
        sa.Column("duration_ms", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        _one_of("status", ("ok", "failed"), "ck_triage_runs_status"),
        sa.ForeignKeyConstraint(["incident_id"], ["incidents.id"], name=op.f("fk_triage_runs_incident_id_incidents")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_triage_runs")),
    )
    op.create_index(op.f("ix_triage_runs_incident_id"), "triage_runs", ["incident_id"])

    op.create_table(
        "slack_messages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("ts", sa.String(length=32), nullable=False),
        sa.Column("thread_ts", sa.String(length=32), nullable=True),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.ForeignKeyConstraint(
            ["incident_id"], ["incidents.id"], name=op.f("fk_slack_messages_incident_id_incidents")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_slack_messages")),
        sa.UniqueConstraint("channel", "ts", name="uq_slack_messages_channel_ts"),
    )
    op.create_index(op.f("ix_slack_messages_incident_id"), "slack_messages", ["incident_id"])

    op.create_table(
        "feedback",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("incident_id", sa.Integer(), nullable=False),
        sa.Column("triage_run_id", sa.Integer(), nullable=True),
        sa.Column("user_id", sa.String(length=64), nullable=False),
        sa.Column("verdict", sa.String(length=16), nullable=False),
        sa.Column("right_playbook", sa.String(length=100), nullable=True),
        sa.Column("right_hypothesis", sa.String(length=100), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        _one_of("verdict", ("correct", "wrong"), "ck_feedback_verdict"),
        sa.ForeignKeyConstraint(["incident_id"], ["incidents.id"], name=op.f("fk_feedback_incident_id_incidents")),
        sa.ForeignKeyConstraint(
            ["triage_run_id"], ["triage_runs.id"], name=op.f("fk_feedback_triage_run_id_triage_runs")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_feedback")),
    )
    op.create_index(op.f("ix_feedback_incident_id"), "feedback", ["incident_id"])

    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("at", _time(), nullable=False),
        sa.Column("actor", sa.String(length=64), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=True),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.Text(), nullable=True),
        sa.Column("detail", _json(), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index("ix_audit_log_at", "audit_log", ["at"])

    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=300), nullable=False),
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("payload", _json(), nullable=False),
        sa.Column("depends_on", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", _time(), nullable=False),
        sa.Column("locked_by", sa.String(length=200), nullable=True),
        sa.Column("locked_until", _time(), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("result", _json(), nullable=True),
        sa.Column("created_at", _time(), nullable=False),
        sa.Column("sent_at", _time(), nullable=True),
        _one_of("method", ("chat.postMessage", "chat.update", "files.upload_v2", "views.publish"), "ck_outbox_method"),
        _one_of("status", ("pending", "sending", "sent", "failed", "dead"), "ck_outbox_status"),
        sa.ForeignKeyConstraint(["depends_on"], ["outbox.id"], name=op.f("fk_outbox_depends_on_outbox")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_outbox_idempotency_key")),
    )
    op.create_index("ix_outbox_channel_status", "outbox", ["channel", "status"])
    op.create_index(op.f("ix_outbox_depends_on"), "outbox", ["depends_on"])
    op.create_index("ix_outbox_status_next_attempt_at", "outbox", ["status", "next_attempt_at"])

    op.create_table(
        "channel_pace",
        sa.Column("channel", sa.String(length=64), nullable=False),
        sa.Column("next_at", _time(), nullable=False),
        sa.Column("last_sent_at", _time(), nullable=True),
        sa.PrimaryKeyConstraint("channel", name=op.f("pk_channel_pace")),
    )


def downgrade() -> None:
    # Children before parents, so foreign keys never point at a dropped table.
    for table in ("channel_pace", "outbox", "audit_log", "feedback", "slack_messages", "triage_runs", "alerts",
                  "alert_groups", "incidents"):
        op.drop_table(table)
