"""bot/delivery/ is the one door to Slack: nothing else writes the outbox, each typed post is stored in the shape the
poster has always read, and rows an older bot stored are still sent."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest
from slack_sdk import WebClient
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from bot.delivery import Edit, Reply, Report, Root, Upload, View, queue, take_back, thread_under
from bot.delivery.poster import Poster
from bot.delivery.roots import latest_shown, queue_note
from bot.store import outbox
from bot.store.db import make_engine, migrate
from bot.store.models import OutboxItem

ROOT = Path(__file__).resolve().parents[3]
# The store's own modules, and the door itself, are the only writers of the outbox table.
WRITERS = ("bot/store/", "bot/delivery/")
WRITES = {"insert", "update", "delete", "insert_ignoring_conflicts"}


def _outbox_writes(path: Path) -> list[str]:
    """Where a module reaches the outbox: an import of bot.store.outbox, or an INSERT/UPDATE/DELETE of OutboxItem."""
    found: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module == "bot.store" and \
                any(alias.name == "outbox" for alias in node.names):
            found.append(f"{path.name}:{node.lineno} imports bot.store.outbox")
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
            found += [f"{path.name}:{node.lineno} imports {n}" for n in names if n == "bot.store.outbox"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in WRITES and \
                any(isinstance(a, ast.Name) and a.id == "OutboxItem" for a in node.args):
            found.append(f"{path.name}:{node.lineno} {node.func.id}(OutboxItem)")
    return found


def test_nothing_outside_delivery_writes_the_outbox() -> None:
    offenders = [hit for path in sorted((ROOT / "bot").rglob("*.py"))
                 if not path.relative_to(ROOT).as_posix().startswith(WRITERS) for hit in _outbox_writes(path)]
    assert offenders == []


def test_the_scan_sees_a_write() -> None:
    sample = ROOT / "bot" / "webhook" / "alert_flow.py"
    assert _outbox_writes(sample) == []
    assert _outbox_writes(ROOT / "bot" / "delivery" / "queue.py")  # the door itself imports the store's outbox


@pytest.fixture(scope="module")
def factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[sessionmaker[Session]]:
    engine = make_engine(f"sqlite:///{tmp_path_factory.mktemp('door') / 'state.db'}")
    migrate(engine)
    yield sessionmaker(engine, expire_on_commit=False)
    engine.dispose()


def _row(session: Session, key: str) -> OutboxItem:
    return session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == key)).one()


def test_each_post_is_stored_as_the_poster_reads_it(factory: sessionmaker[Session]) -> None:
    with factory.begin() as session:
        root = queue(session, Root(key="t:root", channel="C1", kind="triage-root", text="Triaging…", incident_id=7,
                                   state={"done_text": "Triaged", "ended_text": "Ended"}))
        queue(session, Report(key="t", channel="C1", incident_id=7, text="report", blocks=[{"type": "divider"}],
                              chart_b64="AA==", evidence="ev", parent=root))
        queue(session, Reply(key="t:note", channel="C1", kind="note", text="a note", parent=root))
        queue(session, Reply(key="t:silence", channel="C1", kind="silence", text="silenced", thread_ts="1.5"))
        queue(session, Reply(key="t:top", channel="C1", kind="note", text="top level"))
        queue(session, View(key="home:U1:e1", channel="U1", view={"type": "home", "blocks": []}))
        queue(session, Upload(key="t:file", channel="C1", kind="drill-file", filename="a.txt", title="A",
                              content="x", parent=root))
        rows = {key: _row(session, key) for key in ("t:root", "t:report", "t:chart", "t:evidence", "t:note",
                                                     "t:silence", "t:top", "home:U1:e1", "t:file")}
        shapes = {key: (r.method, r.payload["kind"], r.payload.get("in_thread"), r.depends_on == root.id,
                        r.priority) for key, r in rows.items()}
    assert shapes == {
        "t:root": ("chat.postMessage", "triage-root", False, False, outbox.PRIORITY_ROOT),
        "t:report": ("chat.postMessage", "report", True, True, outbox.PRIORITY_REPORT),
        "t:chart": ("files.upload_v2", "chart", True, True, outbox.PRIORITY_REPORT),
        "t:evidence": ("files.upload_v2", "evidence", True, True, outbox.PRIORITY_REPORT),
        "t:note": ("chat.postMessage", "note", True, True, outbox.PRIORITY_REPORT),
        "t:silence": ("chat.postMessage", "silence", True, False, outbox.PRIORITY_REPORT),
        "t:top": ("chat.postMessage", "note", False, False, outbox.PRIORITY_REPORT),
        "home:U1:e1": ("views.publish", "home", None, False, outbox.PRIORITY_REPORT),
        "t:file": ("files.upload_v2", "drill-file", True, True, outbox.PRIORITY_REPORT),
    }
    assert rows["t:root"].payload["done_text"] == "Triaged" and rows["t:root"].payload["incident_id"] == 7
    assert rows["t:chart"].payload["content_b64"] == "AA==" and rows["t:evidence"].payload["content"] == "ev"
    assert rows["t:silence"].payload["thread_ts"] == "1.5" and "blocks" not in rows["t:note"].payload
    assert rows["home:U1:e1"].payload["user_id"] == "U1"


def test_edits_of_a_root_collapse_and_the_note_keeps_the_newest(factory: sessionmaker[Session]) -> None:
    with factory.begin() as session:
        root = queue(session, Root(key="e:root", channel="C2", kind="alert", text="firing", blocks=[{"type": "x"}]))
        root.status, root.result = "sent", {"ts": "1.0", "channel": "C2"}  # posted long ago
    with factory.begin() as session:
        root = _row(session, "e:root")
        first = queue(session, Edit(target=root, fields={"text": "resolved"}))
        second = queue(session, Edit(target=root, fields={"text": "resolved again"}))
        noted = queue_note(session, root, "Resolved by <@U1>")
        shown = latest_shown(session, root)
        ids = (first.id, second.id, noted.id, root.id)
    assert ids[0] == ids[1] == ids[2] != ids[3]  # one queued edit, rewritten: Slack sees the newest only
    assert shown["text"] == "resolved again\nResolved by <@U1>"
    assert shown["blocks"][-1]["elements"][0]["text"] == "Resolved by <@U1>"
    assert shown["kind"] == "alert-state"


def test_a_waiting_root_moves_under_a_rollup_and_a_waiting_note_is_taken_back(
        factory: sessionmaker[Session]) -> None:
    with factory.begin() as session:
        rollup = queue(session, Root(key="m:rollup", channel="C3", kind="rollup", text="storm"))
        queue(session, Root(key="m:root", channel="C3", kind="alert", text="firing"))
        queue(session, Reply(key="m:note", channel="C3", kind="note", text="gone"))
        assert thread_under(session, "m:root", rollup)
        assert take_back(session, ["m:note", "m:absent"]) == 1
        moved = _row(session, "m:root")
        assert (moved.depends_on, moved.payload["in_thread"]) == (rollup.id, True)
        assert session.scalars(select(OutboxItem).where(OutboxItem.idempotency_key == "m:note")).first() is None


class _Slack:
    """Just the Web API calls the poster makes for a message and an edit, recorded."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def chat_postMessage(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("chat.postMessage", kwargs))
        return {"ts": f"{len(self.calls)}.0", "channel": kwargs["channel"]}

    def chat_update(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("chat.update", kwargs))
        return {"ts": kwargs["ts"], "channel": kwargs["channel"]}


def test_rows_an_older_bot_stored_are_still_sent(factory: sessionmaker[Session]) -> None:
    """The shapes the modules wrote by hand before bot/delivery/: a silence note with no thread, and Resolve's own
    chat.update of a root (now an `Edit` through the root editor)."""
    now = datetime(2026, 1, 1, tzinfo=UTC)
    with factory.begin() as session:
        root = outbox.enqueue(session, "old:root", "C4", "chat.postMessage",
                              {"kind": "triage-root", "text": "Triaging…", "incident_id": None, "in_thread": False,
                               "done_text": "done"}, now=now)
        outbox.enqueue(session, "old:silence", "C5", "chat.postMessage",
                       {"kind": "silence", "text": "silenced", "thread_ts": None, "in_thread": True}, now=now)
        outbox.enqueue(session, "old:resolved:root", "C4", "chat.update",
                       {"kind": "status", "text": "Triaging…\nresolved", "incident_id": None}, depends_on=root,
                       now=now)
    slack = _Slack()
    clock = [now]
    poster = Poster(factory, cast(WebClient, slack), worker_id="door", clock=lambda: clock[0])
    for _ in range(4):
        poster.run_once()
        clock[0] += timedelta(seconds=2)
    sent = [(method, call["channel"], call.get("thread_ts"), call["text"]) for method, call in slack.calls]
    assert sorted(sent, key=str) == sorted([
        ("chat.postMessage", "C4", None, "Triaging…"),
        ("chat.postMessage", "C5", None, "silenced"),
        ("chat.update", "C4", None, "Triaging…\nresolved"),
    ], key=str)
    post = next(call for method, call in slack.calls if call["text"] == "silenced")
    assert post["metadata"]["event_payload"]["outbox_key"] == "old:silence"
