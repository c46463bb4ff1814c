"""A list-and-watch cache of what triage reads from the cluster, kept by `serve` the way informers do.

One informer per resource and namespace in scope (or per resource cluster-wide): it lists the resource page by
page, then watches from the list's resourceVersion with bookmarks, and keeps the store current from the events.
A watch that ends (timeoutSeconds, a restarted API server) resumes from the last resourceVersion seen; an ERROR
event or a 410 that says the version is too old triggers a relist; any other failure is retried with jittered
exponential backoff (tenacity), while the last good state keeps answering. Responses are read raw and decoded
with orjson: no client model objects are built.

What the cache cannot hold (container logs, the node log API, custom resources) is read from the API as before.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson
from kubernetes import client
from kubernetes.client.exceptions import ApiException
from tenacity import RetryCallState, Retrying, retry_if_exception_type, wait_exponential, wait_random

from collectors.k8s_values import as_dict, as_list, as_str
from collectors.live.k8s_calls import bounded_client
from collectors.live.k8s_store import ObjectStore

log = logging.getLogger("triagebot.cache")

PAGE = 500


@dataclass(frozen=True)
class CachedKind:
    """A resource the cache holds: its name as the client's methods spell it (list_namespaced_<key>)."""

    key: str  # "pod", "stateful_set", "horizontal_pod_autoscaler"
    api: Callable[[client.ApiClient], Any]
    namespaced: bool
    resource: str  # how the API names it in errors: "pods", "deployments.apps"
    kind: str
    api_version: str
    fields: tuple[str, ...] = ()
    index: str | None = None


KINDS: tuple[CachedKind, ...] = (
    CachedKind("pod", client.CoreV1Api, True, "pods", "Pod", "v1", ("spec.nodeName", "status.phase"),
               "spec.nodeName"),
    CachedKind("event", client.CoreV1Api, True, "events", "Event", "v1",
               ("involvedObject.kind", "involvedObject.name", "involvedObject.namespace", "involvedObject.uid",
                "reason", "type"), "involvedObject.name"),
    CachedKind("node", client.CoreV1Api, False, "nodes", "Node", "v1"),
    CachedKind("namespace", client.CoreV1Api, False, "namespaces", "Namespace", "v1"),
    CachedKind("service", client.CoreV1Api, True, "services", "Service", "v1"),
    CachedKind("resource_quota", client.CoreV1Api, True, "resourcequotas", "ResourceQuota", "v1"),
    CachedKind("deployment", client.AppsV1Api, True, "deployments.apps", "Deployment", "apps/v1"),
    CachedKind("stateful_set", client.AppsV1Api, True, "statefulsets.apps", "StatefulSet", "apps/v1"),
    CachedKind("daemon_set", client.AppsV1Api, True, "daemonsets.apps", "DaemonSet", "apps/v1"),
    CachedKind("replica_set", client.AppsV1Api, True, "replicasets.apps", "ReplicaSet", "apps/v1"),
    CachedKind("job", client.BatchV1Api, True, "jobs.batch", "Job", "batch/v1"),
    CachedKind("network_policy", client.NetworkingV1Api, True, "networkpolicies.networking.k8s.io",
               "NetworkPolicy", "networking.k8s.io/v1"),
    CachedKind("horizontal_pod_autoscaler", client.AutoscalingV2Api, True,
               "horizontalpodautoscalers.autoscaling", "HorizontalPodAutoscaler", "autoscaling/v2"),
)
BY_KEY = {k.key: k for k in KINDS}


class Relist(Exception):
    """The resourceVersion is too old (410 Gone / Expired): the state must be listed again."""


class _ContinueExpired(Exception):
    """The list's continue token expired mid-list (410): list again from the start."""


class WatchFailed(Exception):
    """A list or watch failed in a way worth a backoff."""


def _too_old(status: dict[str, Any]) -> bool:
    return status.get("code") == 410 or as_str(status.get("reason")) in ("Expired", "Gone")


class Informer:
    """List-then-watch of one resource in one namespace (None: every namespace, or cluster-scoped)."""

    def __init__(self, kind: CachedKind, namespace: str | None, api: client.ApiClient, *, watch_timeout: int,
                 call_timeout: float, stopping: threading.Event) -> None:
        self.kind = kind
        self.namespace = namespace
        self.store = ObjectStore(kind.fields, kind.index)
        self.synced = threading.Event()
        self.resource_version = ""
        self.last_heard = 0.0  # monotonic time of the API's last word: a list, an event, a bookmark
        self.relists = 0
        self.last_error = ""
        self._api = kind.api(api)
        self._watch_timeout = watch_timeout
        self._call_timeout = call_timeout
        self._stopping = stopping
        self._response: Any = None
        self._thread = threading.Thread(target=self._run, name=f"watch-{kind.key}-{namespace or 'all'}",
                                        daemon=True)

    # ---- life cycle ------------------------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def interrupt(self) -> None:
        """Close the open watch so the thread notices `stopping` at once."""
        response = self._response
        if response is None:
            return
        # close() alone waits for the reader thread, which holds the stream's lock while it blocks in recv until
        # the API next says something (up to the watch timeout); shutting the socket down wakes it at once.
        sock = getattr(getattr(response, "connection", None), "sock", None)
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        with contextlib.suppress(Exception):  # closing a socket another thread reads may fail either way
            response.close()

    def join(self, timeout: float) -> None:
        self._thread.join(timeout)

    @property
    def age(self) -> float:
        return time.monotonic() - self.last_heard

    def _run(self) -> None:
        while not self._stopping.is_set():
            retrying = Retrying(
                retry=retry_if_exception_type(Exception),
                wait=wait_exponential(multiplier=0.2, max=30) + wait_random(0, 1),
                stop=lambda _state: self._stopping.is_set(), sleep=self._pause, before_sleep=self._failed,
                reraise=True)
            try:
                retrying(self._cycle)  # one list (when needed) and one watch; a failure streak resets after it
            except Exception:
                if not self._stopping.is_set():
                    log.exception("watch of %s stopped", self._name())

    def _pause(self, seconds: float) -> None:
        self._stopping.wait(seconds)  # a backoff that ends at once when the cache stops

    def _failed(self, state: RetryCallState) -> None:
        error = state.outcome.exception() if state.outcome else None
        self.last_error = f"{type(error).__name__}: {error}"[:300]
        log.warning("watch of %s failed (attempt %d): %s", self._name(), state.attempt_number, self.last_error)

    def _name(self) -> str:
        return f"{self.kind.resource} in {self.namespace}" if self.namespace else self.kind.resource

    def _cycle(self) -> None:
        if not self.resource_version:
            self._list()
        try:
            self._watch()
        except Relist:
            self.resource_version = ""  # listed again on the next cycle, at once

    # ---- calls -----------------------------------------------------------------------------------------

    def _method(self) -> Callable[..., Any]:
        key = self.kind.key
        if not self.kind.namespaced:
            return getattr(self._api, f"list_{key}")  # type: ignore[no-any-return]
        if self.namespace is None:
            return getattr(self._api, f"list_{key}_for_all_namespaces")  # type: ignore[no-any-return]
        method = getattr(self._api, f"list_namespaced_{key}")
        namespace = self.namespace
        return lambda **kwargs: method(namespace, **kwargs)

    def _list(self) -> None:
        """Every object, page by page, each page stored compactly before the next is read (50,000 events as
        dicts would take hundreds of MB at once); a continue token that expired mid-list starts it over."""
        while True:
            meta: dict[str, Any] = {}
            try:
                self.store.replace(self._pages(meta))
            except _ContinueExpired:
                continue
            break
        self.resource_version = as_str(meta.get("resourceVersion"))
        self.last_heard = time.monotonic()
        self.relists += 1
        self.synced.set()

    def _pages(self, meta: dict[str, Any]) -> Iterator[dict[str, Any]]:
        token = ""
        while True:
            try:
                response = self._method()(limit=PAGE, **({"_continue": token} if token else {}),
                                          _preload_content=False, _request_timeout=self._call_timeout)
            except ApiException as err:
                if err.status == 410 and token:
                    raise _ContinueExpired() from err
                raise WatchFailed(f"list: {err.status} {err.reason}") from err
            try:
                page = orjson.loads(response.data)
            finally:
                response.release_conn()
            meta.clear()
            meta.update(as_dict(page.get("metadata")))
            yield from (i for i in as_list(page.get("items")) if isinstance(i, dict))
            token = as_str(meta.get("continue"))
            if not token:
                return

    def _watch(self) -> None:
        try:
            response = self._method()(watch=True, resource_version=self.resource_version,
                                      allow_watch_bookmarks=True, timeout_seconds=self._watch_timeout,
                                      _preload_content=False,
                                      _request_timeout=(self._call_timeout, self._watch_timeout + 30))
        except ApiException as err:
            if err.status == 410:
                raise Relist() from err
            raise WatchFailed(f"watch: {err.status} {err.reason}") from err
        self._response = response
        opened, heard = time.monotonic(), 0
        try:
            for line in _lines(response):
                if self._stopping.is_set():
                    return
                self._apply(orjson.loads(line))
                heard += 1
        except (Relist, WatchFailed):
            raise
        except Exception as err:  # a dropped connection, a cut line: resume from the last resourceVersion
            if self._stopping.is_set():
                return
            raise WatchFailed(f"watch stream: {type(err).__name__}: {err}") from err
        finally:
            self._response = None
            response.release_conn()
        if not heard and time.monotonic() - opened < 1.0:
            # A server that closes every watch at once must not be asked again in a tight loop.
            raise WatchFailed("the watch ended as soon as it opened")

    def _apply(self, event: dict[str, Any]) -> None:
        kind, obj = as_str(event.get("type")), as_dict(event.get("object"))
        if kind == "ERROR":
            if _too_old(obj):
                raise Relist()
            raise WatchFailed(f"watch error event: {as_str(obj.get('message'))}")
        rv = as_str(as_dict(obj.get("metadata")).get("resourceVersion"))
        if kind in ("ADDED", "MODIFIED"):
            self.store.put(obj)
        elif kind == "DELETED":
            self.store.delete(obj)
        elif kind != "BOOKMARK":
            raise WatchFailed(f"unknown watch event type {kind!r}")
        if rv:
            self.resource_version = rv
        self.last_heard = time.monotonic()


def _lines(response: Any) -> Iterator[bytes]:
    """Event lines of a watch stream as chunks arrive; a line may span chunks."""
    pending = b""
    for chunk in response.stream(amt=None, decode_content=True):
        pending += chunk
        *complete, pending = pending.split(b"\n")
        yield from (line for line in complete if line.strip())
    if pending.strip():
        yield pending


class WatchCache:
    """Informers for every cached kind over the namespaces in scope (None: cluster-wide)."""

    def __init__(self, api: client.ApiClient, namespaces: list[str] | None = None, *, watch_timeout: int = 300,
                 call_timeout: float = 30.0, kinds: tuple[CachedKind, ...] = KINDS) -> None:
        self.namespaces = sorted(set(namespaces)) if namespaces else None
        self._stopping = threading.Event()
        scopes: list[str | None] = list(self.namespaces) if self.namespaces else [None]
        count = sum(len(scopes) if k.namespaced else 1 for k in kinds)
        # Each open watch holds a connection: the pool is sized for all of them plus the lists.
        self._api = bounded_client(api, count + 4)
        self.informers: dict[tuple[str, str | None], Informer] = {}
        for kind in kinds:
            for ns in scopes if kind.namespaced else [None]:
                self.informers[(kind.key, ns)] = Informer(kind, ns, self._api, watch_timeout=watch_timeout,
                                                          call_timeout=call_timeout, stopping=self._stopping)

    def start(self) -> WatchCache:
        for informer in self.informers.values():
            informer.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        for informer in self.informers.values():
            informer.interrupt()
        for informer in self.informers.values():
            informer.join(5)
        closable: Any = self._api
        closable.close()

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return all(i.synced.wait(max(0.0, deadline - time.monotonic())) for i in self.informers.values())

    @property
    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers.values())

    def covers_all_namespaces(self) -> bool:
        return self.namespaces is None

    def informer(self, key: str, namespace: str | None) -> Informer | None:
        """The synced informer that holds `key` objects of the namespace (None: of every namespace)."""
        kind = BY_KEY.get(key)
        if kind is None:
            return None
        if not kind.namespaced:
            found = self.informers.get((key, None))
        elif namespace is None or self.namespaces is None:
            found = self.informers.get((key, None)) if self.namespaces is None else None
        else:
            found = self.informers.get((key, namespace))
        return found if found is not None and found.synced.is_set() else None

    def stats(self) -> dict[str, int]:
        """Objects and encoded bytes held, by resource."""
        out: dict[str, int] = {}
        for (key, _ns), informer in self.informers.items():
            out[f"{key}.objects"] = out.get(f"{key}.objects", 0) + len(informer.store)
            out[f"{key}.bytes"] = out.get(f"{key}.bytes", 0) + informer.store.raw_bytes
        return out
