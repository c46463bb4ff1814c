"""What the bot can say in Slack, as six typed posts. `bot.delivery.queue` turns one into outbox rows.

Each post names the outbox key it is stored under (keys depend only on what caused the post, so two replicas
queue the same key and Slack sees one post) and its `kind`, a word kept with the row and with the Slack message
it becomes. The stored shape (method and payload) is the one earlier versions wrote, so rows queued by an older
bot are still posted by this one.

- `Root`: a message a thread hangs off (an alert group, a `/triage` placeholder, a drill, a storm's roll-up).
- `Report`: a triage report in its thread, with its chart and its evidence file.
- `Reply`: any other message; in the thread of `parent`, of `thread_of` or `thread_ts`, else top-level.
- `Edit`: what a posted message shows now.
- `Upload`: a file in a thread.
- `View`: a user's Home tab.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from bot.store.models import OutboxItem

PRIORITY_ROOT = 0  # a root or roll-up post, a status change: what on-call looks at first
PRIORITY_REPORT = 1  # reports, notes, files
PRIORITY_REFRESH = 2  # a root's content while its status is unchanged


class _Post(BaseModel):
    # Frozen, and no field a caller could misspell: a typo is an error here, not a silently dropped field.
    # `parent` holds the queued row a post depends on (the ORM object), hence arbitrary types.
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    key: str
    channel: str
    incident_id: int | None = None


class Root(_Post):
    """A top-level message (a thread reply only under a storm's roll-up, `under`)."""

    post: Literal["root"] = "root"
    kind: str  # "alert", "triage-root", "drill-root", "rollup"
    text: str
    blocks: list[dict[str, Any]] | None = None
    metadata: dict[str, Any] | None = None  # Slack message metadata; the poster adds the outbox key
    under: OutboxItem | None = None
    # State kept with the root for whoever edits it later (bot.delivery.roots): the alert's data ("root"), the text
    # before a verdict ("base_text"), the placeholder's later wordings, the previous episode's key, the roll-up key.
    state: dict[str, Any] = {}
    priority: int = PRIORITY_ROOT


class Report(_Post):
    """A triage report, queued as `<key>:report` with `<key>:chart` and `<key>:evidence` files in its thread."""

    post: Literal["report"] = "report"
    text: str
    blocks: list[dict[str, Any]]
    chart_b64: str | None = None
    evidence: str | None = None
    parent: OutboxItem | None = None


class Reply(_Post):
    """A message in a thread: the thread of `parent` (which it waits for), of the message queued under `thread_of`,
    or `thread_ts`; top-level when none is given."""

    post: Literal["reply"] = "reply"
    kind: str  # "note", "status", "narrative", "drill", "silence", "fired-again", "rollup-outcomes", ...
    text: str
    blocks: list[dict[str, Any]] | None = None
    parent: OutboxItem | None = None
    thread_of: str | None = None
    thread_ts: str | None = None
    extra: dict[str, Any] = {}  # stored beside the text for the poster or the record ("episode", "generated")
    priority: int = PRIORITY_REPORT


class Edit(_Post):
    """Have `target` show `fields` (text, blocks, state). Without `key`, through the outbox's latest-state lane:
    edits of one message collapse to the newest and apply in order. With `key`, one edit of its own (kind `kind`)."""

    post: Literal["edit"] = "edit"
    target: OutboxItem
    fields: dict[str, Any]
    key: str = ""
    channel: str = ""
    kind: str = ""
    priority: int = PRIORITY_REFRESH


class Upload(_Post):
    """A file in the thread of `parent` (or top-level without one)."""

    post: Literal["upload"] = "upload"
    kind: str  # "chart", "evidence", "full-text", "drill-file"
    filename: str
    title: str
    content: str | None = None
    content_b64: str | None = None
    parent: OutboxItem | None = None


class View(_Post):
    """A user's Home tab (`channel` is the user)."""

    post: Literal["view"] = "view"
    view: dict[str, Any]


Post = Root | Report | Reply | Edit | Upload | View
