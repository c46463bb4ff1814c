"""The watch cache's store for one resource: objects kept as compact JSON bytes, plus what selectors read.

Holding 50,000 events as Python dicts would take gigabytes' worth of small objects; as bytes they cost about
their JSON size, and a triage decodes only the few it selects. Each object is trimmed first to what triage and
the parsers read: `metadata.managedFields` and the last-applied-configuration annotation go (the same trim
`k8s_util.tidy` applies to every artifact, so a cached object reads exactly like a fresh one), as do list
items' kind and apiVersion, which the API leaves out of lists anyway.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from collectors.k8s_values import as_dict, as_str
from collectors.live.k8s_util import trim

_NO_LABELS: dict[str, str] = {}


@dataclass(slots=True)
class Entry:
    labels: Mapping[str, str]
    fields: Mapping[str, str]
    raw: bytes


def field_value(obj: dict[str, Any], path: str) -> str:
    value: Any = obj
    for part in path.split("."):
        value = as_dict(value).get(part)
    return as_str(value)


class ObjectStore:
    """Objects of one resource by namespace and name; `fields` are the field paths selectors may use, `index`
    one of them looked up directly (events by involvedObject.name: 50,000 events, a few per object)."""

    def __init__(self, fields: tuple[str, ...], index: str | None = None) -> None:
        self.fields = ("metadata.name", "metadata.namespace", *fields)
        self.index_field = index
        self._lock = threading.Lock()
        self._by_ns: dict[str, dict[str, Entry]] = {}
        self._index: dict[str, set[tuple[str, str]]] = {}
        self.raw_bytes = 0

    def _entry(self, obj: dict[str, Any]) -> tuple[str, str, Entry]:
        trim(obj)
        obj.pop("kind", None)
        obj.pop("apiVersion", None)
        meta = as_dict(obj.get("metadata"))
        labels = {k: as_str(v) for k, v in as_dict(meta.get("labels")).items()} or _NO_LABELS
        # Interned: the same few kinds, reasons and node names repeat across thousands of objects.
        fields = {f: sys.intern(field_value(obj, f)) for f in self.fields}
        # Copied to a bytes object of its own size: orjson's result keeps its whole (4 KB) write buffer.
        raw = bytes(memoryview(orjson.dumps(obj)))
        return fields["metadata.namespace"], fields["metadata.name"], Entry(labels, fields, raw)

    def replace(self, objects: Iterable[dict[str, Any]]) -> None:
        """A relist: the store becomes exactly these objects."""
        by_ns: dict[str, dict[str, Entry]] = {}
        index: dict[str, set[tuple[str, str]]] = {}
        size = 0
        for obj in objects:
            ns, name, entry = self._entry(obj)
            by_ns.setdefault(ns, {})[name] = entry
            size += len(entry.raw)
            if self.index_field:
                index.setdefault(entry.fields[self.index_field], set()).add((ns, name))
        with self._lock:
            self._by_ns, self._index, self.raw_bytes = by_ns, index, size

    def put(self, obj: dict[str, Any]) -> None:
        ns, name, entry = self._entry(obj)
        with self._lock:
            self._drop(ns, name)
            self._by_ns.setdefault(ns, {})[name] = entry
            self.raw_bytes += len(entry.raw)
            if self.index_field:
                self._index.setdefault(entry.fields[self.index_field], set()).add((ns, name))

    def delete(self, obj: dict[str, Any]) -> None:
        meta = as_dict(obj.get("metadata"))
        with self._lock:
            self._drop(as_str(meta.get("namespace")), as_str(meta.get("name")))

    def _drop(self, ns: str, name: str) -> None:
        old = self._by_ns.get(ns, {}).pop(name, None)
        if old is None:
            return
        self.raw_bytes -= len(old.raw)
        if self.index_field:
            keys = self._index.get(old.fields[self.index_field])
            if keys is not None:
                keys.discard((ns, name))
                if not keys:
                    del self._index[old.fields[self.index_field]]

    def get(self, namespace: str, name: str) -> bytes | None:
        with self._lock:
            entry = self._by_ns.get(namespace, {}).get(name)
        return entry.raw if entry is not None else None

    def select(self, namespace: str | None, matches: Callable[[Mapping[str, str], Mapping[str, str]], bool],
               indexed: str | None = None) -> list[bytes]:
        """Matching objects in the API's list order (namespace, then name); `indexed` is the index field's value
        when the selector pins it, so only those objects are looked at."""
        with self._lock:
            if indexed is not None:
                keys = sorted(k for k in self._index.get(indexed, ()) if namespace is None or k[0] == namespace)
                found = [(k, self._by_ns[k[0]][k[1]]) for k in keys]
            else:
                spaces = [namespace] if namespace is not None else sorted(self._by_ns, key=lambda ns: ns + "/")
                found = [((ns, name), self._by_ns[ns][name]) for ns in spaces
                         for name in sorted(self._by_ns.get(ns, {}))]
        return [e.raw for _, e in found if matches(e.labels, e.fields)]

    def __len__(self) -> int:
        with self._lock:
            return sum(len(v) for v in self._by_ns.values())
