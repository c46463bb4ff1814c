"""Everything a running bot shares: settings, database, metrics, the triage pool, the poster, Slack."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from slack_sdk import WebClient
from slack_sdk.http_retry.builtin_handlers import ConnectionErrorRetryHandler
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session, sessionmaker

from bot.assist.llm import NO_MODEL, Assistant, assistant_from
from bot.config import ConfigError, Settings
from bot.delivery.poster import Poster
from bot.delivery.slack_reach import SlackReach
from bot.metrics import Metrics
from bot.runner.digests import DigestClock
from bot.runner.drill_catalog import drills_dir
from bot.runner.jobs import TriageJobs
from bot.runner.workers import TriageWorkers
from bot.store.db import make_engine, migrate, session_factory
from bot.webhook.apply import alert_ingester, reporters
from bot.webhook.ingester_process import IngesterProcess, Report, relay
from bot.webhook.intake import Ingester, Intake, open_intake
from playbooks.pipeline import default_playbooks

log = logging.getLogger("triagebot.context")
# Seconds a starting bot waits for its ingester process before it answers: ready means alerts are applied, not only
# accepted (a start of about 2 s of CPU, tens of seconds of wall time on a saturated node).
INGESTER_START = 60.0

if TYPE_CHECKING:
    from bot.assist.search import Index
    from collectors.live.collect import LiveAccess  # the Kubernetes client: loaded by the first triage


@dataclass
class BotContext:
    settings: Settings
    engine: Engine
    factory: sessionmaker[Session]
    metrics: Metrics
    jobs: TriageJobs
    poster: Poster | None
    slack: WebClient | None
    # Where the webhook appends accepted notifications, and what applies them (bot/webhook/intake.py): a process
    # of its own beside triage worker processes (bot/webhook/ingester_process.py), else a thread of this one.
    intake: Intake
    ingester: Ingester | IngesterProcess
    instance: str = field(default_factory=socket.gethostname)
    # The optional language model (NO_MODEL unless llm_provider is set): narratives and /ask answers.
    assistant: Assistant = field(default_factory=lambda: NO_MODEL)
    workers: TriageWorkers | None = None  # the processes that run live triages (None: threads of this one)
    slack_reach: SlackReach = field(default_factory=SlackReach)  # whether Slack answers (/healthz)
    digests: DigestClock | None = None  # queues the weekly digest of the channels that asked for it

    def search_index(self) -> Index:
        """The runbook search index /ask reads: built on first use, then shared by the whole process."""
        from bot.assist.search import index_for  # bm25s and the corpus are loaded only once someone asks

        return index_for(self.settings)

    def close(self) -> None:
        self.slack_reach.stop()
        self.ingester.stop()
        self.intake.close()
        if self.digests is not None:
            self.digests.stop()
        if self.poster is not None:
            self.poster.stop()
        if self.workers is not None:
            self.workers.stop()
        self.jobs.shutdown(wait=False)
        self.engine.dispose()


def slack_client(settings: Settings) -> WebClient | None:
    if settings.slack_bot_token is None:
        return None
    base = settings.slack_api_url if settings.slack_api_url.endswith("/") else settings.slack_api_url + "/"
    # 429s are not retried here: the outbox owns Retry-After so it can hold back the whole channel.
    return WebClient(token=settings.slack_bot_token.get_secret_value(), base_url=base,
                     timeout=settings.slack_timeout, retry_handlers=[ConnectionErrorRetryHandler(max_retry_count=1)])


def _lazy_access(settings: Settings) -> Any:
    """LiveAccess built on first use and kept: loading a kubeconfig costs most of a second."""
    lock = threading.Lock()
    cached: list[LiveAccess] = []

    def get() -> LiveAccess:
        with lock:
            if not cached:
                from bot.runner.triage import access_from, kube_client

                try:
                    kube = kube_client(settings)
                except ConfigError:
                    kube = None  # reported as a missing source in every triage, not a crash
                cached.append(access_from(settings, kube))
            return cached[0]

    return get


def build_context(settings: Settings, *, start_poster: bool = True, metrics: Metrics | None = None,
                  assistant: Assistant | None = None, start_workers: bool = False,
                  instance: str | None = None) -> BotContext:
    """Connect the database (migrating it), and wire the triage workers, the poster and the Slack client.

    With `start_workers` (what `serve` does) and `triage_workers` > 0, live triages are queued in the database
    and run by that many worker processes, each with its watch cache; otherwise they run on a thread pool of
    this process (tests that reach into one process, e.g. to swap `jobs.access`).

    `assistant` defaults to the model the settings name (a ConfigError if it cannot be built); tests pass a fake.
    `instance` names this replica in every alert it stores (default: the host name).
    """
    # First: a model that cannot be built stops the bot before anything is started.
    assistant = assistant if assistant is not None else assistant_from(settings)
    # Compile the playbooks now (~0.6 s) rather than in the first triages, where several pool threads would
    # compile them at once while holding the GIL and stall the webhooks of an alert storm for seconds.
    default_playbooks()
    engine = make_engine(settings.database_url)
    migrate(engine)
    factory = session_factory(engine)
    metrics = metrics or Metrics()
    slack = slack_client(settings)
    reach = SlackReach(retry_interval=settings.slack_retry_interval)
    poster = Poster(factory, slack, metrics, lease=timedelta(seconds=settings.outbox_lease), reach=reach) \
        if slack is not None else None
    workers = TriageWorkers(settings, factory, metrics).start() \
        if start_workers and settings.triage_workers > 0 else None
    instance = instance or socket.gethostname()
    intake = open_intake(engine, factory)
    # Started with the context: rows a killed process accepted and never applied are applied first. Beside worker
    # processes it is a process too (bot/webhook/ingester_process.py), started here so that its start overlaps
    # this one's; without them it is a thread of this one, as the triages are, and starts the triages it queued.
    ingester: Ingester | IngesterProcess | None = None
    if workers is not None:
        ingester = IngesterProcess(settings, intake, instance, _ingester_reports(metrics, workers, poster)).start()
    jobs = TriageJobs(factory, _lazy_access(settings), metrics, max_workers=settings.max_concurrent_triages,
                      templates_dir=settings.templates_dir, on_queued=poster.wake if poster else lambda: None,
                      assistant=assistant, capture_dir=drills_dir(settings), queue=workers is not None,
                      on_enqueued=workers.notify if workers is not None else lambda: None,
                      lease=timedelta(seconds=settings.triage_lease),
                      recurrence=timedelta(days=settings.recurrence_days))
    if workers is None:
        # No worker processes: this process runs the queue's jobs, starting with any a dead process left behind.
        jobs.start_sweeping()
    digests = None
    if poster is not None and start_poster:
        poster.start()
        digests = DigestClock(factory, settings.digest_channels, poster.wake).start()
        assert slack is not None
        reach.when_back(lambda waiting: _resume_posting(factory, poster, waiting))
        reach.start(slack)
    if ingester is None:
        ingester = alert_ingester(settings, factory, intake, metrics, jobs, poster, instance).start()
    elif isinstance(ingester, IngesterProcess) and not ingester.ready(INGESTER_START):
        # Serving anyway: the webhook appends meanwhile, and the ingester applies it all once it has started.
        log.warning("the alert ingester process has not started within %.0f s", INGESTER_START)
    return BotContext(settings=settings, engine=engine, factory=factory, metrics=metrics, jobs=jobs, poster=poster,
                      slack=slack, intake=intake, ingester=ingester, instance=instance, assistant=assistant,
                      workers=workers, slack_reach=reach, digests=digests)


def _ingester_reports(metrics: Metrics, workers: TriageWorkers, poster: Poster | None
                      ) -> Callable[[Report], None]:
    """What the ingester process's reports do here: what its thread would do in this process."""
    failed, ok = reporters(metrics)

    def after_commit(triages: int) -> None:
        if triages:
            workers.notify()
        if poster is not None:
            poster.wake()

    return relay(failed, ok, after_commit)


def _resume_posting(factory: sessionmaker[Session], poster: Poster, waiting: set[int]) -> None:
    """Slack answers again: what failed for want of a connection is due now, not after its backoff."""
    from bot.delivery import due_now

    with factory.begin() as session:
        due_now(session, waiting)
    poster.wake()
