"""Waking a spawned process from the serving process without ever blocking, even once that process was killed;
and stopping the spawned processes (the triage workers, the alert ingester) the same way.

A multiprocessing Event is the obvious tool and the wrong one: its set() waits until every process sleeping in
wait() has acknowledged, and one killed with SIGKILL while it slept never does, so every later set() hangs for
good (and with it the webhook or the ack that called it). A pipe per child instead: the serving process writes one
byte without blocking (a full pipe is already a wake-up; a dead reader is an error to ignore), and the child
waits for its end to be readable.
"""

from __future__ import annotations

import contextlib
import os
import select
import threading
import time
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnContext, SpawnProcess


class Waker:
    """The serving process's ends, one per child slot; a slot's end is replaced when its child is."""

    def __init__(self, mp: SpawnContext) -> None:
        self._mp = mp
        self._fds: dict[object, int] = {}
        self._lock = threading.Lock()  # a wake never writes to a descriptor being closed for a new child's

    def pipe(self, slot: object) -> Connection:
        """A new pipe for the child about to start in `slot`: its reading end, to pass to that child (and close
        here once it started)."""
        read, write = self._mp.Pipe(duplex=False)
        os.set_blocking(write.fileno(), False)
        with self._lock:
            old = self._fds.pop(slot, -1)
            if old >= 0:
                os.close(old)
            self._fds[slot] = os.dup(write.fileno())
        write.close()
        return read

    def set(self) -> None:
        """Wake every child; never blocks."""
        with self._lock:
            for fd in self._fds.values():
                with contextlib.suppress(OSError):
                    os.write(fd, b"\0")

    def close(self) -> None:
        with self._lock:
            for fd in self._fds.values():
                os.close(fd)
            self._fds.clear()


def wait(wake: Connection, timeout: float) -> bool:
    """In the child: True when woken within `timeout` seconds (the wake-ups so far are consumed). Also when the
    serving process closed its end (False, after `timeout`: it stopped or died, which the caller sees by its
    parent)."""
    fd = wake.fileno()
    with contextlib.suppress(InterruptedError):
        if select.select([fd], [], [], timeout)[0]:
            if os.read(fd, 4096):
                return True
            time.sleep(timeout)  # closed: readable for good, so wait as if nothing came rather than spin
    return False


def stop_processes(processes: list[SpawnProcess], timeout: float) -> None:
    """SIGTERM every child first, so they wind down together rather than one after another; then wait for each,
    and SIGKILL one still alive after `timeout` seconds."""
    for process in processes:
        if process.is_alive():
            process.terminate()
    for process in processes:
        process.join(timeout)
        if process.is_alive():
            process.kill()
            process.join(timeout)
