"""Waking spawned processes (bot/runner/wake.py): one byte per child on a pipe, never blocking the waker, also when
the child is dead or asleep for long. A multiprocessing Event's set() hangs for good once a process sleeping in its
wait() was killed with SIGKILL; this checks the pipe does not, with a real child killed in its wait."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from multiprocessing.connection import Connection

from bot.runner.wake import Waker, wait


def _sleeper(wake: Connection) -> None:
    while True:
        wait(wake, 60.0)


def test_a_wake_is_consumed_once_and_never_blocks() -> None:
    waker = Waker(multiprocessing.get_context("spawn"))
    one, two = waker.pipe("a"), waker.pipe("b")
    assert not wait(one, 0.0)
    waker.set()
    assert wait(one, 0.0) and wait(two, 0.0)
    assert not wait(one, 0.0)  # consumed
    for _ in range(100_000):  # far more than a pipe holds: a full pipe is already a wake-up, not a wait
        waker.set()
    assert wait(one, 0.0) and wait(one, 0.0)  # still readable: 4 KiB consumed per wait
    again = waker.pipe("a")  # a new child in slot a: the old end is closed, the new one woken
    one.close()
    waker.set()
    assert wait(again, 0.0)
    waker.close()
    waker.set()  # after close: nothing to write to, and no error


def test_waking_a_child_killed_while_it_waited_returns_at_once() -> None:
    mp = multiprocessing.get_context("spawn")
    waker = Waker(mp)
    read = waker.pipe(0)
    child = mp.Process(target=_sleeper, args=(read,), daemon=True)
    child.start()
    read.close()
    time.sleep(0.5)  # let it reach its wait (a kill before that is the easy case)
    assert child.pid is not None
    os.kill(child.pid, signal.SIGKILL)
    child.join(10)
    setter = threading.Thread(target=lambda: [waker.set() for _ in range(3)], daemon=True)
    setter.start()
    setter.join(5)
    assert not setter.is_alive()
    waker.close()
