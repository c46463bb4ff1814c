"""One SQLite writer at a time across the bot's processes, with waiters asleep in the kernel.

SQLite's own answer to a busy database is to sleep and retry (1, 2, 5, ... then 100 ms at a time), with no
queue: a webhook waiting for the write lock keeps missing the short gaps between the triage workers'
transactions, and its tail grows to a second (docs/benchmarks.md, "Slash-command ack and webhooks under load").
An exclusive `flock` on a file beside the database, taken before `BEGIN IMMEDIATE`, makes the waiters block
until the holder lets go, so a write waits only for the transactions queued before it. BEGIN IMMEDIATE still
guards correctness on its own: a process that does not take this lock (the CLI, another tool) is serialised
by SQLite as before.

Background processes (the triage workers, `yield_writes()`) queue for the write lock behind a second file
lock, the gate, so at most one of them at a time competes with the serving process's writers: a webhook then
waits for the transaction in progress and at most one background one, not for every report queued before it.
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path
from typing import Any

_FD = "triagebot_writer_fd"
_GATE_FD = "triagebot_writer_gate_fd"
_HELD = "triagebot_writer_held"
_background = False


def yield_writes() -> None:
    """Mark this process as background work: its writers let the serving process's writers go first."""
    global _background
    _background = True


def _open(path: Path) -> int:
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


class WriterLock:
    """An exclusive file lock per database; each pooled connection opens the file itself (flock excludes open
    file descriptions, so two connections of one process exclude each other too)."""

    def __init__(self, database: Path) -> None:
        self.path = database.with_name(database.name + ".writer-lock")
        self.gate = database.with_name(database.name + ".writer-gate")
        self._thread = threading.local()

    def acquire(self, info: dict[str, Any]) -> None:
        """Block until this connection may write; `info` is the pooled connection's info dict."""
        if getattr(self._thread, "holding", False):
            # This thread already writes through another connection: waiting here would wait on itself.
            # SQLite's busy handling decides, as it did before this lock existed.
            return
        fd = info.get(_FD)
        if fd is None:
            fd = info[_FD] = _open(self.path)
        if _background:
            gate = info.get(_GATE_FD)
            if gate is None:
                gate = info[_GATE_FD] = _open(self.gate)
            fcntl.flock(gate, fcntl.LOCK_EX)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            finally:
                fcntl.flock(gate, fcntl.LOCK_UN)
        else:
            fcntl.flock(fd, fcntl.LOCK_EX)
        info[_HELD] = True
        self._thread.holding = True

    def release(self, info: dict[str, Any]) -> None:
        """Let the next writer in; a no-op for a connection that holds nothing."""
        if info.pop(_HELD, False):
            fcntl.flock(info[_FD], fcntl.LOCK_UN)
            self._thread.holding = False

    def close(self, info: dict[str, Any]) -> None:
        """The pooled connection is going away: release and close its file."""
        self.release(info)
        for key in (_FD, _GATE_FD):
            fd = info.pop(key, None)
            if fd is not None:
                os.close(fd)
