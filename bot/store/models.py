"""The bot's state: incidents, alerts, triage runs, Slack messages, feedback, audit log and the Slack outbox.

Every table lives on `Base.metadata`; migrations/versions/ must create exactly these (a test compares them).
Times are aware UTC (`UTCDateTime`) and default in Python, not in the database: SQLite's CURRENT_TIMESTAMP uses
another text format than the one SQLAlchemy writes, which would break time comparisons.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from bot.store.types import JSONType, UTCDateTime, utcnow

# Named constraints, so later migrations can drop or alter them (SQLite batch mode needs the names).
NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

INCIDENT_STATUSES = ("open", "resolved")
INCIDENT_SOURCES = ("alert", "slash", "paste")
GROUP_STATUSES = ("firing", "resolved")
RUN_STATUSES = ("ok", "failed")
VERDICTS = ("correct", "wrong")
OUTBOX_METHODS = ("chat.postMessage", "chat.update", "files.upload_v2", "views.publish")
OUTBOX_STATUSES = ("pending", "sending", "sent", "failed", "dead")
JOB_STATUSES = ("pending", "running", "done")


def _one_of(column: str, values: tuple[str, ...], name: str) -> CheckConstraint:
    quoted = ", ".join(f"'{v}'" for v in values)
    return CheckConstraint(f"{column} IN ({quoted})", name=name)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


class Incident(Base):
    """Something a person is looking at: an alert group, a /triage request or a pasted bundle."""

    __tablename__ = "incidents"
    __table_args__ = (
        _one_of("status", INCIDENT_STATUSES, "status"),
        _one_of("source", INCIDENT_SOURCES, "source"),
        Index("ix_incidents_updated_at", "updated_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(300), unique=True)  # "alert:<groupKey>" or "triage:<uuid>"
    title: Mapped[str] = mapped_column(Text, default="")
    namespace: Mapped[str | None] = mapped_column(String(253))
    target: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    status: Mapped[str] = mapped_column(String(16), default="open")
    source: Mapped[str] = mapped_column(String(16))
    channel: Mapped[str | None] = mapped_column(String(64))
    thread_ts: Mapped[str | None] = mapped_column(String(32))
    # Slack's permalink of the incident's thread (chat.getPermalink), kept once fetched: recurrence notes link it.
    permalink: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class AlertGroup(Base):
    """One Alertmanager group (groupKey): one Slack message, updated in place, with a thread."""

    __tablename__ = "alert_groups"
    __table_args__ = (_one_of("status", GROUP_STATUSES, "status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_key: Mapped[str] = mapped_column(Text, unique=True)
    receiver: Mapped[str] = mapped_column(String(200), default="")
    status: Mapped[str] = mapped_column(String(16))
    common_labels: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    last_payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"))
    channel: Mapped[str | None] = mapped_column(String(64))
    message_ts: Mapped[str | None] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The firing episode shown now: 1 for the first; a group that fires again after it resolved starts the next.
    episode: Mapped[int] = mapped_column(Integer, default=1)
    # When the current episode's first webhook arrived (its root's clock, and the storm window's).
    episode_started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # The newest state seen of each alert, by fingerprint: {"status", "startsAt", "endsAt"} (bot.webhook.ordering).
    alert_states: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    # The outbox key of the roll-up message this episode's root is threaded under, during a storm.
    rollup_key: Mapped[str | None] = mapped_column(String(300))
    # The digest of the last notification applied (bot.webhook.repeat): the same again changed nothing.
    state_hash: Mapped[str | None] = mapped_column(String(64))


class Alert(Base):
    """One alert as received, every time it is received (repeats included): the raw record."""

    __tablename__ = "alerts"
    __table_args__ = (Index("ix_alerts_group_key_fingerprint", "group_key", "fingerprint"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    group_key: Mapped[str] = mapped_column(Text, ForeignKey("alert_groups.group_key"))
    fingerprint: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(16))
    labels: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)  # the alert object exactly as Alertmanager sent it
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    receiver_instance: Mapped[str] = mapped_column(String(200), default="")  # which bot replica took it


class TriageRun(Base):
    """One execution of the pipeline: what was asked, the report, and the (already redacted) evidence."""

    __tablename__ = "triage_runs"
    __table_args__ = (_one_of("status", RUN_STATUSES, "status"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), index=True)
    target: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    trigger: Mapped[str] = mapped_column(String(32))  # alert, slash, paste, button, cli ...
    requested_by: Mapped[str | None] = mapped_column(String(64))
    report: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    artifacts: Mapped[list[Any]] = mapped_column(JSONType, default=list)
    missing: Mapped[list[Any]] = mapped_column(JSONType, default=list)
    started_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(16))
    error: Mapped[str | None] = mapped_column(Text)


class SlackMessage(Base):
    """A message the bot posted, so buttons and replies can be traced back to their incident."""

    __tablename__ = "slack_messages"
    __table_args__ = (UniqueConstraint("channel", "ts", name="uq_slack_messages_channel_ts"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    channel: Mapped[str] = mapped_column(String(64))
    ts: Mapped[str] = mapped_column(String(32))
    thread_ts: Mapped[str | None] = mapped_column(String(32))
    kind: Mapped[str] = mapped_column(String(32))  # alert, triage, reply, chart ...
    incident_id: Mapped[int | None] = mapped_column(ForeignKey("incidents.id"), index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class Feedback(Base):
    """A person's verdict on a triage: was the leading hypothesis right, and if not, what was."""

    __tablename__ = "feedback"
    __table_args__ = (_one_of("verdict", VERDICTS, "verdict"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    incident_id: Mapped[int] = mapped_column(ForeignKey("incidents.id"), index=True)
    triage_run_id: Mapped[int | None] = mapped_column(ForeignKey("triage_runs.id"))
    user_id: Mapped[str] = mapped_column(String(64))
    verdict: Mapped[str] = mapped_column(String(16))
    right_playbook: Mapped[str | None] = mapped_column(String(100))
    right_hypothesis: Mapped[str | None] = mapped_column(String(100))
    note: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class AuditEntry(Base):
    """Who did what, where and when: every command and action, allowed or refused."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_at", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    actor: Mapped[str] = mapped_column(String(64))
    channel: Mapped[str | None] = mapped_column(String(64))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str | None] = mapped_column(Text)
    detail: Mapped[dict[str, Any]] = mapped_column(JSONType, default=dict)
    outcome: Mapped[str] = mapped_column(String(32), default="ok")


class OutboxItem(Base):
    """A Slack Web API call to make exactly once; see bot.store.outbox for the life cycle."""

    __tablename__ = "outbox"
    __table_args__ = (
        _one_of("method", OUTBOX_METHODS, "method"),
        _one_of("status", OUTBOX_STATUSES, "status"),
        Index("ix_outbox_status_next_attempt_at", "status", "next_attempt_at"),
        Index("ix_outbox_channel_status", "channel", "status"),
        Index("ix_outbox_collapse_key", "collapse_key"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(300), unique=True)
    channel: Mapped[str] = mapped_column(String(64))
    method: Mapped[str] = mapped_column(String(32))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONType)
    # The item whose result (its ts) this one needs: a thread reply or an update waits for its parent post.
    depends_on: Mapped[int | None] = mapped_column(ForeignKey("outbox.id"), index=True)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    locked_by: Mapped[str | None] = mapped_column(String(200))
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_error: Mapped[str | None] = mapped_column(Text)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSONType)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Lower goes first within a channel: roots and status changes (0) before reports and notes (1).
    priority: Mapped[int] = mapped_column(Integer, default=1)
    # Rows sharing a collapse key are versions of one thing (a root's state): a newer one replaces a queued one.
    collapse_key: Mapped[str | None] = mapped_column(String(300))
    # An earlier attempt may have reached Slack (a crash or a timeout after the call): look before posting again.
    maybe_sent: Mapped[bool] = mapped_column(Boolean, default=False)


class AlertStorm(Base):
    """A channel's alert storm: one row per channel, locked by every webhook that starts an episode there, so the
    storm is recognised once and its roll-up created once (bot.webhook.storm). `rollup_key` names the current or
    latest storm's roll-up (an outbox key); the storm is over once no group started within the window of
    `last_at`."""

    __tablename__ = "alert_storms"

    channel: Mapped[str] = mapped_column(String(64), primary_key=True)
    rollup_key: Mapped[str | None] = mapped_column(String(300), unique=True)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    last_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # the latest episode start in the storm


class ChannelPace(Base):
    """When the next post to a channel may start; rows are also the per-channel claim lock on PostgreSQL."""

    __tablename__ = "channel_pace"

    channel: Mapped[str] = mapped_column(String(64), primary_key=True)
    next_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)  # when the latest post was handed out


class TriageJob(Base):
    """A live triage waiting for, or run by, a worker process; see bot.store.triage_queue for the life cycle."""

    __tablename__ = "triage_jobs"
    __table_args__ = (
        _one_of("status", JOB_STATUSES, "status"),
        Index("ix_triage_jobs_status_locked_until", "status", "locked_until"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    idempotency_key: Mapped[str] = mapped_column(String(300), unique=True)
    request: Mapped[dict[str, Any]] = mapped_column(JSONType)
    status: Mapped[str] = mapped_column(String(16), default="pending")
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    locked_by: Mapped[str | None] = mapped_column(String(200))
    locked_until: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    # Filled by the worker, read by the serving process for its /metrics (then `counted`).
    outcome: Mapped[str | None] = mapped_column(String(16))
    seconds: Mapped[float | None] = mapped_column(Float)
    missing_sources: Mapped[list[str]] = mapped_column(JSONType, default=list)
    counted: Mapped[bool] = mapped_column(Boolean, default=False)


class DigestChannel(Base):
    """A channel's weekly digest: whether it is on (`/triage digest on|off`, or the `digest_channels` setting), and
    the last week sent, so a restart neither skips a week nor sends one twice (bot/runner/digests.py)."""

    __tablename__ = "digest_channels"

    channel: Mapped[str] = mapped_column(String(64), primary_key=True)
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    last_week: Mapped[str | None] = mapped_column(String(16))  # ISO week sent last, e.g. "2026-W48"
    changed_by: Mapped[str | None] = mapped_column(String(64))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)


class AlertIntake(Base):
    """An Alertmanager notification accepted (authenticated, validated, redacted) and not applied yet: the webhook
    appends it and answers; the ingester (bot/webhook/intake.py) applies the rows in arrival order and removes each
    with its effect. On SQLite with a file the rows live in a small database file of their own, beside the main
    one, so the webhook never waits for the main database's write lock; elsewhere in this table."""

    __tablename__ = "alert_intake"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    # Names the notification for AlertIntakeDone: ids restart if the separate intake file is ever recreated.
    token: Mapped[str] = mapped_column(String(32), unique=True)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
    # The redacted webhook body as JSON text: nothing queries into it, and text costs PostgreSQL no parse on
    # the webhook's INSERT (jsonb parsed a wide group's body again, on the request's time).
    body: Mapped[str] = mapped_column(Text)
    digest: Mapped[str | None] = mapped_column(String(64))  # bot.webhook.repeat's digest of the unredacted body
    # Set when applying it failed with a bug rather than an absent database: it is set aside, not retried forever.
    error: Mapped[str | None] = mapped_column(Text)


class AlertIntakeDone(Base):
    """Tokens of intake rows kept in the separate SQLite intake file whose effect is committed in the main
    database: written in the same transaction as the effect, so a process killed before it deleted the intake
    row does not apply it twice. Pruned after a day."""

    __tablename__ = "alert_intake_done"

    token: Mapped[str] = mapped_column(String(32), primary_key=True)
    applied_at: Mapped[datetime] = mapped_column(UTCDateTime, default=utcnow)
