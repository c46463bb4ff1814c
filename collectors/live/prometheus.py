"""Prometheus: the metrics engineers check first, as the exact API responses, over the triage scope.

The queries are data (playbooks/queries/<playbook>.yaml, read by collectors/catalogs/queries.py), scoped to the
target by collectors/live/prom_plan.py and fetched by collectors/live/prom_client.py; this module runs them. A
discovery query first finds the service's own latency histogram and request counter; then the plan runs
concurrently; then, given a chart picker, the series the report's hypotheses chart. Every artifact records its
PromQL (artifact.command), so it turns into facts without knowing who collected it.

Instant queries are evaluated at `window.until`, passed explicitly, so a replay or a backfilled TSDB
answers the same as at capture time. A query that fails becomes a `missing` entry naming it; a
Prometheus that cannot be reached at all becomes one entry, found by a single probe before the plan runs.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from collectors.catalogs.queries import QueryCatalog, bundled
from collectors.live.base import Scope, SourceResult, Window, artifact_id
from collectors.live.prom_client import PromClient, QueryFailed
from collectors.live.prom_plan import Query, build_plan, chart_queries, discovered_names, discovery_query
from collectors.models import Artifact, ArtifactKind, Missing

log = logging.getLogger(__name__)

SOURCE = "prometheus"
# Given the evidence so far, the chart series to fetch, most needed first (bot/runner/triage.py builds it from the
# playbooks that evidence triggers: collectors cannot import them).
ChartPicker = Callable[[list[Artifact]], Sequence[str]]


def _artifact(query: Query, body: dict[str, Any], window: Window) -> Artifact:
    return Artifact(id=artifact_id("prom", query.name) + ".json", kind=ArtifactKind.PROMETHEUS_QUERY,
                    subject=query.subject, source=SOURCE, command=query.promql, captured_at=window.until,
                    content=json.dumps(body, indent=2, ensure_ascii=False) + "\n")


def _missing(query: Query, reason: str) -> Missing:
    return Missing(source=f"{SOURCE}:{query.name}", reason=f"{reason} (query: {query.promql})")


def _run(client: PromClient, query: Query, window: Window) -> Artifact | Missing:
    try:
        return _artifact(query, client.fetch(query, window), window)
    except QueryFailed as err:
        return _missing(query, str(err))


def _discover(client: PromClient, scope: Scope, window: Window, result: SourceResult) -> list[str]:
    query = discovery_query(scope)
    if query is None:
        return []
    try:
        body = client.fetch(query, window)
    except QueryFailed as err:
        result.missing.append(_missing(query, str(err)))
        return []
    result.artifacts.append(_artifact(query, body, window))
    return discovered_names(body)


def _record(result: SourceResult, outcome: Artifact | Missing) -> None:
    if isinstance(outcome, Artifact):
        result.artifacts.append(outcome)
    else:
        result.missing.append(outcome)


def run_queries(client: PromClient, queries: Sequence[Query], window: Window, max_workers: int = 6,
                budget: float | None = None) -> SourceResult:
    """Run queries concurrently (at most `max_workers` at once); results keep the plan's order.

    With a `budget` (seconds), a query still running when it is spent becomes a `missing` entry instead of
    holding the triage past its deadline (its thread ends on its own timeout, unread).
    """
    result = SourceResult()
    if not queries:
        return result
    pool = ThreadPoolExecutor(max_workers=max(1, min(max_workers, len(queries))), thread_name_prefix="prometheus")
    try:
        futures = [pool.submit(_run, client, q, window) for q in queries]
        done, _ = wait(futures, timeout=None if budget is None else max(0.0, budget))
        for query, future in zip(queries, futures, strict=True):
            _record(result, future.result() if future in done
                    else _missing(query, f"not answered within the {budget:g}s left before the triage's deadline"))
    finally:
        pool.shutdown(wait=budget is None, cancel_futures=True)
    return result


def _chart_series(charts: ChartPicker, artifacts: list[Artifact], result: SourceResult) -> Sequence[str]:
    """The series the picker asks for; a picker that fails costs the charts, never the evidence already read."""
    try:
        return charts(artifacts)
    except Exception as err:
        log.exception("choosing the chart series failed")
        result.missing.append(Missing(source=f"{SOURCE}:charts",
                                      reason=f"could not choose the chart series: {type(err).__name__}: {err}"))
        return ()


def _chart_wave(client: PromClient, scope: Scope, window: Window, charts: ChartPicker, plan: Sequence[Query],
                result: SourceResult, max_workers: int, finish_by: float | None, catalog: QueryCatalog) -> SourceResult:
    """The chart series' range queries, within what is left of the triage's deadline: a picture that comes too
    late is dropped, never the evidence the first wave read."""
    series = _chart_series(charts, list(result.artifacts), result)
    queries = chart_queries(scope, window, series, plan, catalog)
    budget = None if finish_by is None else round(finish_by - time.monotonic(), 1)
    if queries and budget is not None and budget <= 0:
        return SourceResult(missing=[Missing(source=f"{SOURCE}:charts", reason=f"{len(queries)} chart series not "
                                             "fetched: the triage's deadline was reached")])
    return run_queries(client, queries, window, max_workers, budget)


def collect_prometheus(url: str, scope: Scope, window: Window, *, timeout: float = 5.0, max_workers: int = 6,
                       headers: dict[str, str] | None = None, charts: ChartPicker | None = None,
                       finish_by: float | None = None, catalog: QueryCatalog | None = None) -> SourceResult:
    """Run the plan for the scope against Prometheus at `url`; never raises for a failing backend.

    With `charts`, a second wave follows: the picker reads the evidence so far and names the series the triggered
    playbooks' hypotheses chart, fetched concurrently as range queries within MAX_RANGE_QUERIES and,
    given `finish_by` (a time.monotonic() instant), before then. `catalog` defaults to the bundled query files.
    """
    catalog = catalog or bundled()
    client = PromClient(url, timeout, headers)
    try:
        down = client.probe(window.until)
        if down:
            return SourceResult(missing=[Missing(source=SOURCE, reason=down)])
        result = SourceResult()
        plan = build_plan(scope, window, _discover(client, scope, window, result), catalog)
        result.extend(run_queries(client, plan, window, max_workers))
        if charts is not None:
            result.extend(_chart_wave(client, scope, window, charts, plan, result, max_workers, finish_by, catalog))
        return result
    finally:
        client.close()
