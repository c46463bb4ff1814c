"""Read-only calls to the Kubernetes API with bounded time, bounded retries and readable failures.

Every call returns either the decoded answer or a `Failure`; nothing here raises for a failing API, so a
403 on events or a slow node never takes the rest of the triage down. Responses are read raw
(`_preload_content=False`) and decoded with orjson: the artifact must be the object exactly as the API sent it
(unknown fields included), and building the client's model objects for thousands of pods only to serialise
them again would cost most of the time budget (orjson decodes a page of 500 pods several times faster than
`json.loads`: benchmarks/bench_live_triage.py).
"""

from __future__ import annotations

import copy
import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from http import HTTPStatus
from typing import Any, TypeVar
from urllib.parse import quote

import orjson
import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from tenacity import RetryCallState, Retrying, retry_if_exception

from collectors.k8s_values import as_dict, as_list, as_str
from collectors.rbac import forbidden_reason

T = TypeVar("T")

_MAX_ATTEMPTS = 3  # the first try and two retries after a 429
_PAGE = 500  # list page size: bounds the memory one response can take
# Calls in flight from this process, all triages together. One triage may send dozens at once (the cold path
# is a few waves of independent calls), but twenty triages doing so would pass the API server's default limit
# of 400 concurrent reads (--max-requests-inflight) and slow the cluster the bot is meant to help.
PROCESS_IN_FLIGHT = 64
_in_flight = threading.BoundedSemaphore(PROCESS_IN_FLIGHT)


@dataclass(frozen=True)
class Failure:
    """Why a call gave nothing: the HTTP status (None for timeouts and connection errors) and a readable reason."""

    status: int | None
    reason: str


def bounded_client(api: client.ApiClient, workers: int) -> client.ApiClient:
    """A client on the same cluster and credentials whose transport does not retry read timeouts.

    urllib3 retries a GET that timed out three more times by default, so one slow call would cost four
    timeouts; here a timeout is final and becomes a `missing` entry. The pool is sized for the workers.
    """
    config = copy.deepcopy(api.configuration)
    # Status codes are never retried here either: urllib3 would sleep out any Retry-After on its own.
    config.retries = urllib3.Retry(total=2, connect=2, read=0, status=0, other=0, redirect=2,
                                   respect_retry_after_header=False)
    config.client_go_retries = False  # 429 is retried here, within the call's budget
    config.connection_pool_maxsize = max(config.connection_pool_maxsize or 0, workers + 2)
    bounded = client.ApiClient(config)
    bounded.default_headers.update(api.default_headers)
    bounded.cookie = api.cookie
    return bounded


class _RetryAfter(Exception):
    """A 429 (or 503 with Retry-After) the API asked us to retry later."""

    def __init__(self, error: ApiException, seconds: float) -> None:
        super().__init__(str(error))
        self.error = error
        self.seconds = seconds


def _retry_after_seconds(error: ApiException) -> float | None:
    """Seconds from a Retry-After header (delta or HTTP date); None when the response has none."""
    headers = error.headers or {}
    raw = headers.get("Retry-After") if hasattr(headers, "get") else None
    if raw is None:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        return max(parsedate_to_datetime(raw).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return None


def describe_error(exc: BaseException, budget: float) -> Failure:
    """A one-line reason a person can act on: `403 Forbidden: events is forbidden: User ...`."""
    if isinstance(exc, _RetryAfter):
        base = describe_error(exc.error, budget)
        return Failure(base.status, f"{base.reason} (still throttled, Retry-After {exc.seconds:g}s; "
                                    f"gave up within the {budget:g}s budget)")
    if isinstance(exc, ApiException):
        status = int(exc.status or 0) or None
        phrase = exc.reason or (HTTPStatus(status).phrase if status and status in HTTPStatus._value2member_map_
                                else "")
        message = _status_message(exc.body)
        head = f"{status} {phrase}".strip() if status else f"request failed: {phrase}"
        # A 403 is evidence too: say which permission was missing and what grants it, not the raw Forbidden.
        granted = forbidden_reason(message) if status == 403 else None
        if granted is not None:
            return Failure(status, granted)
        return Failure(status, f"{head}: {message}" if message else head)
    if _is_timeout(exc):
        return Failure(None, f"timeout after {budget:g}s")
    if isinstance(exc, urllib3.exceptions.HTTPError | OSError):
        return Failure(None, f"connection failed: {_root_cause(exc)}")
    if isinstance(exc, ValueError):
        return Failure(None, f"unreadable response: {exc}"[:300])
    return Failure(None, f"internal: {type(exc).__name__}: {exc}"[:300])


def _status_message(body: object) -> str:
    """The `message` of a Status body, or the start of a non-JSON body."""
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body.strip():
        return ""
    try:
        data = json.loads(body)
    except ValueError:
        return " ".join(body.split())[:200]
    message = data.get("message") if isinstance(data, dict) else None
    return message if isinstance(message, str) else ""


def _is_timeout(exc: BaseException) -> bool:
    seen: BaseException | None = exc
    for _ in range(5):
        if seen is None:
            return False
        if isinstance(seen, TimeoutError | urllib3.exceptions.TimeoutError):
            return True
        seen = getattr(seen, "reason", None) or seen.__cause__ or seen.__context__
    return False


def _root_cause(exc: BaseException) -> str:
    reason = getattr(exc, "reason", None)
    if isinstance(reason, BaseException):
        return _root_cause(reason)
    return f"{type(exc).__name__}: {exc}"[:200]


class KubeCalls:
    """Typed API groups plus the call discipline: per-call timeout, 429 retries within it, failures as data."""

    def __init__(self, api: client.ApiClient, call_timeout: float) -> None:
        self.api = api
        self.timeout = call_timeout
        self.core = client.CoreV1Api(api)
        self.apps = client.AppsV1Api(api)
        self.batch = client.BatchV1Api(api)
        self.custom = client.CustomObjectsApi(api)
        self.networking = client.NetworkingV1Api(api)
        self.autoscaling = client.AutoscalingV2Api(api)

    # ---- the retry discipline ----------------------------------------------------------------------

    def _run(self, attempt: Callable[[float], T]) -> T | Failure:
        """Run attempt(remaining_seconds); retry a 429 after its Retry-After while the budget allows."""
        deadline = time.monotonic() + self.timeout

        def once() -> T:
            remaining = deadline - time.monotonic()
            if remaining <= 0.05 or not _in_flight.acquire(timeout=remaining - 0.05):
                raise TimeoutError("budget spent")
            try:
                return attempt(deadline - time.monotonic())
            except ApiException as exc:
                wait_for = _retry_after_seconds(exc)
                if exc.status == 429 or (exc.status == 503 and wait_for is not None):
                    raise _RetryAfter(exc, 1.0 if wait_for is None else wait_for) from exc
                raise
            finally:
                _in_flight.release()

        def stop(state: RetryCallState) -> bool:
            exc = state.outcome.exception() if state.outcome else None
            if state.attempt_number >= _MAX_ATTEMPTS or not isinstance(exc, _RetryAfter):
                return True
            return time.monotonic() + exc.seconds >= deadline - 0.05

        def pause(state: RetryCallState) -> float:
            exc = state.outcome.exception() if state.outcome else None
            return exc.seconds if isinstance(exc, _RetryAfter) else 0.0

        retrying = Retrying(stop=stop, wait=pause, retry=retry_if_exception(lambda e: isinstance(e, _RetryAfter)),
                            reraise=True)
        try:
            return retrying(once)
        except Exception as exc:  # every failure is reported, never raised: the triage goes on without it
            return describe_error(exc, self.timeout)

    # ---- JSON objects and lists ---------------------------------------------------------------------

    def get(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any] | Failure:
        """One object (or one page) as the API sent it."""

        def attempt(remaining: float) -> dict[str, Any]:
            response = method(*args, **kwargs, _preload_content=False, _request_timeout=remaining)
            try:
                data = orjson.loads(response.data)
            finally:
                response.release_conn()
            if not isinstance(data, dict):
                raise ValueError("expected a JSON object")
            return data

        return self._run(attempt)

    def pages(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> Iterator[dict[str, Any] | Failure]:
        """A list page by page (limit/continue), so a huge namespace never sits in memory at once.

        A failure ends the iteration; it is yielded so the caller knows the list is incomplete.
        """
        token: str | None = None
        while True:
            extra = {"_continue": token} if token else {}
            page = self.get(method, *args, limit=_PAGE, **kwargs, **extra)
            yield page
            if isinstance(page, Failure):
                return
            token = as_str(as_dict(page.get("metadata")).get("continue")) or None
            if not token:
                return

    def get_list(self, method: Callable[..., Any], *args: Any, max_items: int = 2000,
             **kwargs: Any) -> dict[str, Any] | Failure:
        """A whole list up to max_items; a failure after the first page keeps what was read."""
        first: dict[str, Any] | None = None
        items: list[Any] = []
        for page in self.pages(method, *args, **kwargs):
            if isinstance(page, Failure):
                if first is None:
                    return page
                break
            first = first or page
            items.extend(as_list(page.get("items")))
            if len(items) >= max_items:
                break
        assert first is not None
        first["items"] = items[:max_items]
        return first

    # ---- text: container logs and the node log API --------------------------------------------------

    def pod_log(self, pod: str, namespace: str, container: str, *, previous: bool, tail_lines: int,
                limit_bytes: int) -> str | Failure:
        def attempt(remaining: float) -> str:
            response = self.core.read_namespaced_pod_log(
                pod, namespace, container=container, previous=previous, tail_lines=tail_lines,
                limit_bytes=limit_bytes, _preload_content=False, _request_timeout=remaining)
            return _read_bounded(response, limit_bytes)

        return self._run(attempt)

    def node_log(self, node: str, query: list[tuple[str, str]], limit_bytes: int) -> str | Failure:
        """GET /api/v1/nodes/NODE/proxy/logs/?query=... through the API server's node proxy.

        Built with call_api rather than connect_get_node_proxy_with_path, which percent-encodes the `/`
        of `logs/`; the path then differs from what `kubectl get --raw` sends.
        """

        def attempt(remaining: float) -> str:
            request = self.api.param_serialize(
                method="GET", resource_path="/api/v1/nodes/{name}/proxy/logs/", path_params={"name": node},
                query_params=query, header_params={"Accept": "text/plain, */*"}, auth_settings=["BearerToken"])
            response = self.api.call_api(*request, _request_timeout=remaining)
            raw: Any = response  # the generated RESTResponse is untyped
            if not 200 <= raw.status <= 299:
                raw.read()
                raise ApiException.from_response(http_resp=raw, body=_decoded(raw.data), data=None)
            return _read_bounded(raw.response, limit_bytes)

        return self._run(attempt)


    def node_file(self, node: str, path: str, limit_bytes: int) -> bytes | Failure:
        """GET /api/v1/nodes/NODE/proxy/logs/PATH: a file (or a folder's HTML listing) under the node's /var/log,
        as the kubelet serves it, at most limit_bytes. `path` is checked by the caller (no `..`)."""

        def attempt(remaining: float) -> bytes:
            request = self.api.param_serialize(
                method="GET", resource_path="/api/v1/nodes/{name}/proxy/logs/" + quote(path),
                path_params={"name": node}, header_params={"Accept": "*/*"}, auth_settings=["BearerToken"])
            response = self.api.call_api(*request, _request_timeout=remaining)
            raw: Any = response
            if not 200 <= raw.status <= 299:
                raw.read()
                raise ApiException.from_response(http_resp=raw, body=_decoded(raw.data), data=None)
            return _read_bounded_bytes(raw.response, limit_bytes)

        return self._run(attempt)


def _decoded(data: bytes | None) -> str:
    return (data or b"").decode("utf-8", "replace")


def _read_bounded(response: Any, limit_bytes: int) -> str:
    """At most limit_bytes of a streamed body, as text."""
    return _decoded(_read_bounded_bytes(response, limit_bytes))


def _read_bounded_bytes(response: Any, limit_bytes: int) -> bytes:
    """At most limit_bytes of a streamed body; a body cut short closes its connection instead of draining it."""
    try:
        data = response.read(limit_bytes + 1)
        if len(data) > limit_bytes:
            data = data[:limit_bytes]
            response.close()
        else:
            response.release_conn()
    except BaseException:
        response.close()
        raise
    return bytes(data)


class Runner:
    """Runs thunks on a bounded pool; each result is handed to its callback on the calling thread.

    Callbacks may submit more work (a node's pods once the GPU nodes are known), and since they all run
    on one thread, the collection state they touch needs no locks.
    """

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self._pool = pool
        self._pending: dict[Future[Any], Callable[[Any], None]] = {}

    def submit(self, thunk: Callable[[], T], then: Callable[[T], None]) -> None:
        self._pending[self._pool.submit(thunk)] = then

    def drain(self) -> None:
        while self._pending:
            done, _ = wait(self._pending, return_when=FIRST_COMPLETED)
            for future in done:
                then = self._pending.pop(future)
                error = future.exception()
                then(describe_error(error, 0) if error is not None else future.result())

    def gather(self, thunks: dict[str, Callable[[], T]]) -> dict[str, T]:
        """Run independent thunks together and wait for all of them."""
        results: dict[str, T] = {}
        for key, thunk in thunks.items():
            self.submit(thunk, lambda value, key=key: results.__setitem__(key, value))  # type: ignore[misc]
        self.drain()
        return results
