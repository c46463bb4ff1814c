"""The alert ingester in a process of its own, so the serving interpreter only answers requests.

Applying a notification is about 50 ms of Python (docs/benchmarks.md, note `webhook-intake`); on a thread of the
serving process it competed with every webhook and ack for that interpreter's lock. `serve` with triage worker
processes runs it here instead: spawned (nothing of the server's threads or sockets is inherited), supervised
(restarted when it dies, as the triage workers are), and stopped when the serving process is gone.

The webhook wakes it with one byte on a pipe, written without blocking (bot/runner/wake.py: a multiprocessing Event
would hang the webhook for good once the ingester was killed in its wait()); it also looks at the intake every
second by itself (bot/webhook/intake.py). Back on another pipe it reports what the serving process turns into
/healthz and /metrics (database errors and recovery at `alert-intake`) and what follows a commit there (wake the
poster, wake the triage workers). Rows are claimed as before (SKIP LOCKED on PostgreSQL, done tokens on SQLite's
separate intake file), so a kill -9 of this process at any point loses and doubles nothing: its successor applies
what is left, once.
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import threading
import time
from collections.abc import Callable
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any

from bot.config import Settings
from bot.runner.cpu import behind_requests
from bot.runner.wake import Waker, stop_processes
from bot.runner.wake import wait as woken
from bot.webhook.intake import Intake

log = logging.getLogger("triagebot.alerts")

POLL = 0.5  # seconds between the child's looks at its parent and its stop flag
SUPERVISE = 1.0  # seconds between the serving process's looks at the child

# Reports from the child: ("ready",) once started, ("ok",) after a failure, ("failed", kind, first line),
# ("applied", triages started).
Report = tuple[Any, ...]


class IngesterProcess:
    """The serving process's side: start, wake, watch over and stop the ingester process."""

    def __init__(self, settings: Settings, intake: Intake, instance: str, on_report: Callable[[Report], None]
                 ) -> None:
        self.settings, self.intake, self.instance = settings, intake, instance
        self._on_report = on_report
        self._mp = multiprocessing.get_context("spawn")
        self.process: SpawnProcess | None = None
        self.restarts = 0
        self._waker = Waker(self._mp)
        self._reports: Connection | None = None
        self._stopping = threading.Event()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="alert-ingester-supervisor", daemon=True)

    def start(self) -> IngesterProcess:
        self._spawn()
        self._thread.start()
        return self

    def _spawn(self) -> None:
        # New pipes for each child: one killed mid-write leaves nothing half-written to its successor.
        wake_read = self._waker.pipe("ingester")
        report_read, report_write = self._mp.Pipe(duplex=False)
        process = self._mp.Process(target=ingester_main, name="alert-ingester", daemon=True,
                                   args=(self.settings, self.instance, wake_read, report_write, os.getpid()))
        process.start()
        wake_read.close()
        report_write.close()  # the child holds the only writer: its death reads as EOF here
        if self._reports is not None:
            self._reports.close()
        self._reports, self.process = report_read, process
        log.info("alert ingester started", extra={"pid": process.pid})

    def ready(self, timeout: float) -> bool:
        """Wait until the first ingester process has started applying (its imports take about 2 s of CPU)."""
        return self._ready.wait(timeout)

    def wake(self) -> None:
        """After an append: never blocks (a full pipe already wakes the child; a dead one is restarted)."""
        self._waker.set()

    def settled(self, timeout: float = 30.0) -> bool:
        """Wait until the intake has nothing left to apply (rows set aside excepted)."""
        deadline = time.monotonic() + timeout
        while self.intake.pending():
            if time.monotonic() > deadline:
                return False
            time.sleep(0.05)
        return True

    def _supervise(self) -> None:
        looked = time.monotonic()
        while not self._stopping.is_set():
            reports = self._reports
            try:
                if reports is not None and reports.poll(SUPERVISE):
                    message = reports.recv()
                    if message[0] == "ready":
                        self._ready.set()
                    else:
                        self._on_report(message)
            except (EOFError, OSError):
                self._stopping.wait(0.1)  # the child is gone; the check below restarts it
            except Exception:
                log.exception("could not handle a report of the alert ingester")
            if time.monotonic() - looked < SUPERVISE:
                continue
            looked = time.monotonic()
            process = self.process
            if process is not None and not process.is_alive() and not self._stopping.is_set():
                log.warning("alert ingester (pid %s) exited with %s; starting another", process.pid,
                            process.exitcode)
                self._spawn()
                self.restarts += 1

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        if self.process is not None:
            stop_processes([self.process], timeout)
        if self._thread.is_alive():
            self._thread.join(timeout)
        self._waker.close()
        if self._reports is not None:
            self._reports.close()


# ---- the ingester process ----------------------------------------------------------------------------------


def ingester_main(settings: Settings, instance: str, wake: Connection, reports: Connection,
                  parent: int | None = None) -> None:
    """Entry point of the ingester process: apply the intake until SIGTERM, or until the serving process
    (`parent`, its pid) is gone."""
    from bot.logs import configure
    from bot.store.db import make_engine, session_factory
    from bot.webhook.apply import applier
    from bot.webhook.intake import Ingester, open_intake

    configure(settings.log_level)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    failing = [False]

    def report(message: Report) -> None:
        with contextlib.suppress(OSError):  # the serving process is gone: the loop below notices
            reports.send(message)

    def applied(requests: list[Any]) -> None:
        report(("applied", len(requests)))

    def failed(err: BaseException) -> None:
        failing[0] = True
        report(("failed", type(err).__name__, (str(err).splitlines() or [""])[0][:200]))

    def ok() -> None:
        if failing[0]:  # the serving process only needs to hear of success after a failure
            failing[0] = False
            report(("ok",))

    engine = make_engine(settings.database_url)
    factory = session_factory(engine)
    intake = open_intake(engine, factory)
    # Behind the serving process and ahead of the triage workers (SCHED_BATCH at nice 5; bot/runner/cpu.py says
    # why): a notification applied late delays its root post and its triage, which users wait for, while a triage
    # is throughput work. Lowered only now: starting (about 2 s of CPU, mostly imports) at the serving process's
    # priority gets the rows a killed predecessor left applied in seconds rather than tens of seconds on a busy
    # node; it happens only at start and after a crash.
    log.info("alert ingester runs %s", behind_requests())
    ingester = Ingester(intake, factory, applier(settings, instance), applied, failed, ok).start()
    report(("ready",))
    try:
        while not stopping.is_set():
            if parent is not None and os.getppid() != parent:
                log.warning("alert ingester: its serving process is gone; stopping")
                break
            if woken(wake, POLL):
                ingester.wake()
    finally:
        ingester.stop()
        intake.close()
        engine.dispose()


def relay(metrics_failed: Callable[[BaseException], None], metrics_ok: Callable[[], None],
          after_commit: Callable[[int], None]) -> Callable[[Report], None]:
    """The serving process's handling of the child's reports: the same calls the ingester thread makes."""

    def on_report(message: Report) -> None:
        if message[0] == "applied":
            after_commit(int(message[1]))
        elif message[0] == "failed":
            # Rebuilt with the child's error kind and first line: all /healthz and the log say of it.
            metrics_failed(type(str(message[1]), (Exception,), {})(str(message[2])))
        elif message[0] == "ok":
            metrics_ok()

    return on_report
