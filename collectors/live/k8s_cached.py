"""Kubernetes calls answered from the watch cache where it holds the answer, and from the API otherwise.

`CachedCalls` is a `KubeCalls`: the collection code calls the same client methods either way, and a method the
cache serves (a get or a list of a cached kind, in a namespace it watches, with selectors it can evaluate) is
answered locally in the shape the API would give: the object, a list, or the API's own 404 `Failure`.
Everything else (logs, the node log API, custom resources, namespaces outside the scope) goes to the API.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from typing import Any

import orjson
from kubernetes import client

from collectors.live.k8s_calls import Failure, KubeCalls
from collectors.live.k8s_select import matcher, parse_fields, parse_labels
from collectors.live.watch_cache import BY_KEY, Informer, WatchCache

_METHOD = re.compile(r"^(read|list)_(namespaced_)?([a-z_]+?)(_for_all_namespaces)?$")


class CachedCalls(KubeCalls):
    def __init__(self, api: client.ApiClient, call_timeout: float, cache: WatchCache) -> None:
        super().__init__(api, call_timeout)
        self.cache = cache
        self.used: set[Informer] = set()  # the informers that answered, for the cache's age in the report
        self._lock = threading.Lock()

    def age(self) -> float | None:
        """Seconds since the API last spoke on the watches this triage read from (None: it read none)."""
        with self._lock:
            return max((i.age for i in self.used), default=None)

    def get(self, method: Callable[..., Any], *args: Any, **kwargs: Any) -> dict[str, Any] | Failure:
        answer = self._answer(getattr(method, "__name__", ""), args, kwargs)
        return answer if answer is not None else super().get(method, *args, **kwargs)

    def _answer(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any] | Failure | None:
        m = _METHOD.match(name)
        if m is None:
            return None
        verb, namespaced, key, all_namespaces = m.groups()
        kind = BY_KEY.get(key)
        if kind is None or kind.namespaced != bool(namespaced or all_namespaces):
            return None
        if verb == "read":
            if len(args) != (2 if namespaced else 1) or set(kwargs) - {"_request_timeout"}:
                return None
            namespace = args[1] if namespaced else None
            informer = self.cache.informer(key, namespace)
            if informer is None:
                return None
            self._used(informer)
            raw = informer.store.get(namespace or "", args[0])
            if raw is None:
                return Failure(404, f'404 Not Found: {kind.resource} "{args[0]}" not found')
            obj: dict[str, Any] = orjson.loads(raw)
            return {"kind": kind.kind, "apiVersion": kind.api_version, **obj}
        namespace = args[0] if namespaced else None
        if len(args) != (1 if namespaced else 0) or set(kwargs) - {"label_selector", "field_selector", "limit",
                                                                   "_continue", "_request_timeout"}:
            return None
        informer = self.cache.informer(key, namespace)
        if informer is None:
            return None
        labels = parse_labels(kwargs.get("label_selector") or "")
        fields = parse_fields(kwargs.get("field_selector") or "", frozenset(informer.store.fields))
        if labels is None or fields is None:
            return None  # a selector the cache cannot evaluate: the API server can
        pinned = next((next(iter(r.values)) for r in fields if r.key == informer.store.index_field and r.op == "="),
                      None)
        self._used(informer)
        raws = informer.store.select(namespace, matcher(labels, fields), pinned)
        return {"kind": f"{kind.kind}List", "apiVersion": kind.api_version,
                "metadata": {"resourceVersion": informer.resource_version},
                "items": [orjson.loads(r) for r in raws]}

    def _used(self, informer: Informer) -> None:
        with self._lock:
            self.used.add(informer)
