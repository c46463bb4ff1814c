"""Triage worker processes: live triages run outside the interpreter that answers Slack and Alertmanager.

`serve` starts `triage_workers` processes (spawned, so none inherits the server's threads or sockets). Each keeps
the watch cache (collectors/live/watch_cache.py) and runs up to `max_concurrent_triages` jobs at once, claimed
from the database queue (bot/store/triage_queue.py); it renews its leases while it works, so a worker that is
killed leaves its job to be claimed again once the lease runs out. The serving process supervises them (a dead
worker is started again), and turns finished jobs into its /metrics: it only does I/O and bookkeeping.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import timedelta
from multiprocessing.connection import Connection
from multiprocessing.context import SpawnProcess
from typing import Any

from sqlalchemy.orm import Session, sessionmaker

from bot.config import ConfigError, Settings
from bot.metrics import Metrics
from bot.runner.cpu import background
from bot.runner.wake import Waker, stop_processes
from bot.runner.wake import wait as woken
from bot.store import triage_queue
from bot.store.sqlite_writer import yield_writes
from bot.store.types import utcnow

log = logging.getLogger("triagebot.workers")

POLL = 0.5  # seconds an idle worker waits for a wake-up before it looks at the queue again
CACHE_CALL_TIMEOUT = 30.0  # a list of 5,000 pods over a slow link needs more than a triage's call budget


class TriageWorkers:
    """The serving process's side: start, watch over and stop the worker processes."""

    def __init__(self, settings: Settings, factory: sessionmaker[Session], metrics: Metrics) -> None:
        self.settings = settings
        self.factory = factory
        self.metrics = metrics
        self._mp = multiprocessing.get_context("spawn")
        self.wake = Waker(self._mp)  # not a multiprocessing Event: see bot/runner/wake.py
        self.processes: list[SpawnProcess] = []
        self.restarts = 0
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._supervise, name="triage-workers", daemon=True)

    def start(self) -> TriageWorkers:
        for index in range(self.settings.triage_workers):
            self.processes.append(self._spawn(index))
        self._thread.start()
        return self

    def _spawn(self, index: int) -> SpawnProcess:
        wake = self.wake.pipe(index)
        process = self._mp.Process(target=worker_main, args=(self.settings, wake, os.getpid()),
                                   name=f"triage-worker-{index}", daemon=True)
        process.start()
        wake.close()
        log.info("triage worker started", extra={"pid": process.pid, "worker": index})
        return process

    def notify(self) -> None:
        self.wake.set()

    def _supervise(self) -> None:
        while not self._stopping.wait(1.0):
            for index, process in enumerate(self.processes):
                if not process.is_alive() and not self._stopping.is_set():
                    log.warning("triage worker %d (pid %s) exited with %s; starting another", index, process.pid,
                                process.exitcode)
                    self.processes[index] = self._spawn(index)
                    self.restarts += 1
            try:
                self.count_finished()
            except Exception:
                log.exception("could not read finished triage jobs")

    def count_finished(self) -> int:
        """Finished jobs into this process's /metrics (the workers' own registries are not scraped)."""
        done = triage_queue.take_finished(self.factory)
        for job in done:
            self.metrics.triages.labels(job.trigger, job.outcome).inc()
            self.metrics.triage_seconds.labels(job.trigger).observe(job.seconds)
            for source in job.missing_sources:
                self.metrics.missing_sources.labels(source).inc()
        return len(done)

    def stop(self, timeout: float = 10.0) -> None:
        self._stopping.set()
        stop_processes(self.processes, timeout)
        if self._thread.is_alive():
            self._thread.join(timeout)
        self.wake.close()


# ---- the worker process ------------------------------------------------------------------------------------


def worker_main(settings: Settings, wake: Connection, parent: int | None = None) -> None:
    """Entry point of one worker process: claim jobs and run them until SIGTERM, or until the serving process
    (`parent`, its pid) is gone."""
    from bot.logs import configure

    configure(settings.log_level)
    # Triages are throughput work; acks and webhooks are latency work: SCHED_IDLE, so a request's thread that
    # wakes takes a core from a triage at once (bot/runner/cpu.py says why, and what the fallback is).
    policy = background()
    yield_writes()  # the same on SQLite's write lock (bot/store/sqlite_writer.py)
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    worker = _Worker(settings)
    try:
        log.info("triage worker runs %s", policy)
        worker.run(wake, stopping, parent=parent)
    finally:
        worker.close()


class _Worker:
    def __init__(self, settings: Settings) -> None:
        from bot.assist.llm import assistant_from
        from bot.runner.drill_catalog import drills_dir
        from bot.runner.jobs import TriageJobs
        from bot.runner.triage import access_from, kube_client
        from bot.store.db import make_engine, session_factory
        from collectors.live.watch_cache import WatchCache
        from playbooks.pipeline import default_playbooks

        self.settings = settings
        self.id = f"{socket.gethostname()}:{os.getpid()}"
        self.lease = timedelta(seconds=settings.triage_lease)
        self.engine = make_engine(settings.database_url)
        self.factory = session_factory(self.engine)
        default_playbooks()  # compiled once, before the first job
        try:
            kube: Any = kube_client(settings)
        except ConfigError:
            kube = None  # every triage reports the Kubernetes source as missing
        self.cache: WatchCache | None = None
        if kube is not None and settings.watch_cache:
            # Not waited for: until each informer has listed, its calls go to the API (the cold path).
            self.cache = WatchCache(kube, settings.watch_namespaces or None, call_timeout=CACHE_CALL_TIMEOUT).start()
        access = replace(access_from(settings, kube), cache=self.cache)
        self.jobs = TriageJobs(self.factory, lambda: access, Metrics(), max_workers=settings.max_concurrent_triages,
                               templates_dir=settings.templates_dir, assistant=assistant_from(settings),
                               capture_dir=drills_dir(settings),
                               recurrence=timedelta(days=settings.recurrence_days))
        self.slots = threading.BoundedSemaphore(settings.max_concurrent_triages)
        self.pool = ThreadPoolExecutor(max_workers=settings.max_concurrent_triages, thread_name_prefix="job")

    def run(self, wake: Connection, stopping: threading.Event, parent: int | None = None) -> None:
        heartbeat = threading.Thread(target=self._heartbeat, args=(stopping,), name="lease", daemon=True)
        heartbeat.start()
        log.info("triage worker ready", extra={"worker": self.id})
        while not stopping.is_set():
            if parent is not None and os.getppid() != parent:
                # The serving process was killed (SIGKILL skips its clean-up): nobody supervises this worker, and
                # the server's next start spawns its own. Stop; a job in hand is taken over once its lease runs out.
                log.warning("triage worker %s: its serving process is gone; stopping", self.id)
                break
            if not self.slots.acquire(timeout=POLL):
                continue
            try:
                job = triage_queue.claim(self.factory, self.id, utcnow(), self.lease)
            except Exception:
                log.exception("claiming a triage job failed")
                job = None
            if job is None:
                self.slots.release()
                woken(wake, POLL)
                continue
            log.info("triage job claimed", extra={"job": job.key, "attempt": job.attempts, "worker": self.id})
            self.pool.submit(self._run, job)

    def _run(self, job: triage_queue.ClaimedJob) -> None:
        try:
            self.jobs.run_job(job, self.id)
        except Exception:
            log.exception("triage job %s failed in its worker", job.key)
        finally:
            self.slots.release()

    def _heartbeat(self, stopping: threading.Event) -> None:
        every = max(0.5, self.lease.total_seconds() / 3)
        while not stopping.wait(every):
            try:
                triage_queue.renew(self.factory, self.id, utcnow(), self.lease)
            except Exception:
                log.exception("renewing triage leases failed")

    def close(self) -> None:
        self.pool.shutdown(wait=True, cancel_futures=True)
        if self.cache is not None:
            self.cache.stop()
        self.jobs.shutdown(wait=False)
        self.engine.dispose()
