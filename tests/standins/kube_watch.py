"""Watches as the API server serves them (GET <collection>?watch=true).

The answer is HTTP 200 with a chunked body of one JSON event per line, `{"type": T, "object": {...}}`:
- no resourceVersion (or "0"): the objects that exist now as ADDED events, then every change;
- resourceVersion N: the changes after revision N; when N is older than the history kept (compacted), a single
  ERROR event whose object is a Status with code 410 ("too old resource version"), and the stream ends;
- a label or field selector filters the events; an object modified out of the selection is sent as DELETED;
- allowWatchBookmarks=true: BOOKMARK events every `bookmark_interval` seconds, whose object carries only kind,
  apiVersion and metadata.resourceVersion (the revision the client may resume from);
- timeoutSeconds: the stream ends cleanly after that long (the server's own limit otherwise).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass

from tests.standins.kube_catalog import Resource, dumps
from tests.standins.kube_select import LabelRequirement
from tests.standins.kube_store import Change, Gone, ObjectStore, Stored

DEFAULT_TIMEOUT = 1800.0  # the API server's --min-request-timeout; it picks 1-2x that at random
_POLL = 0.25  # how often an idle stream looks at its stop conditions


@dataclass(frozen=True)
class WatchRequest:
    resource: Resource
    namespace: str | None
    labels: list[LabelRequirement]
    field_match: Callable[[Mapping[str, str]], bool]
    resource_version: int | None  # None: start with the current objects
    bookmarks: bool
    timeout: float


def _line(kind: str, obj: bytes) -> bytes:
    return b'{"type":"' + kind.encode() + b'","object":' + obj + b"}\n"


def gone_event(message: str) -> bytes:
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
              "reason": "Expired", "code": 410}
    return _line("ERROR", dumps(status))


def stream(store: ObjectStore, request: WatchRequest, render: Callable[[Stored], bytes], stopping: threading.Event,
           bookmark_interval: float) -> Iterator[bytes]:
    """The event lines of one watch, until its timeout, a 410, end_watches, or the server stopping."""
    res = request.resource
    deadline = time.monotonic() + request.timeout

    def selected(stored: Stored) -> bool:
        return all(r.matches(stored.labels) for r in request.labels) and request.field_match(stored.fields)

    with store.changed:
        generation = store.watch_generation
        if request.resource_version is None:
            initial = [s for s in store.all_in(res, request.namespace) if selected(s)]
            cursor = int(store.resource_version)
        else:
            initial, cursor = [], request.resource_version
    for stored in initial:
        yield _line("ADDED", render(stored))
    next_bookmark = time.monotonic() + bookmark_interval
    while not stopping.is_set():
        with store.changed:
            if store.watch_generation != generation:
                return
            try:
                changes, upto = store.changes_since(res.store_key, request.namespace, cursor)
                if not changes and upto == cursor:
                    wake = min(deadline, next_bookmark if request.bookmarks else deadline, time.monotonic() + _POLL)
                    store.changed.wait(max(0.0, wake - time.monotonic()))
                    changes, upto = store.changes_since(res.store_key, request.namespace, cursor)
            except Gone as err:
                yield gone_event(str(err))
                return
        for change in changes:
            if (line := _event(change, selected, render)) is not None:
                yield line
        cursor = upto
        now = time.monotonic()
        if request.bookmarks and now >= next_bookmark:
            yield _line("BOOKMARK", dumps({"kind": res.kind, "apiVersion": res.api_version,
                                           "metadata": {"resourceVersion": str(cursor)}}))
            next_bookmark = now + bookmark_interval
        if now >= deadline:
            return


def _event(change: Change, selected: Callable[[Stored], bool], render: Callable[[Stored], bytes]) -> bytes | None:
    now_in = selected(change.stored)
    if change.type == "MODIFIED" and change.before is not None:
        was_in = selected(change.before)
        if was_in and not now_in:
            return _line("DELETED", render(change.stored))  # left the selection: gone, as far as this watch knows
        if now_in and not was_in:
            return _line("ADDED", render(change.stored))
    return _line(change.type, render(change.stored)) if now_in else None
