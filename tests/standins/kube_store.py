"""The stand-in's object store: objects indexed by resource and namespace, served as precomputed JSON.

Objects are kept as the JSON bytes the server will send plus the few values selectors need (labels, selectable
fields), not as live dicts: 50,000 events stay cheap to hold, and a list response is a join of byte strings.
Lists are ordered by etcd key ("namespace/name"), paginated with continue tokens shaped like the real ones.
Every write is also kept in a change history (like etcd's revisions) that watches replay from a resourceVersion;
`compact` drops that history, after which a watch from an older resourceVersion is 410 Gone.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import json
import threading
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import cache
from typing import Any

from tests.standins.kube_catalog import Resource, dumps, resource_for_object
from tests.standins.kube_events import to_core
from tests.standins.kube_select import LabelRequirement, selectable_fields

_UID_NAMESPACE = uuid.UUID("6f1d6a52-2d0e-4bb4-9a53-6c1b1d1f0a11")
BUILTIN_NAMESPACES = ("default", "kube-node-lease", "kube-public", "kube-system")


@dataclass(slots=True)
class Stored:
    key: str  # etcd-style key relative to the resource: "ns/name" or "name"
    namespace: str
    name: str
    uid: str
    seq: int  # store sequence at creation, for consistent continue snapshots
    labels: dict[str, str]
    fields: dict[str, str]
    item: bytes  # JSON as a list item (built-in kinds omit apiVersion/kind there, as the real server does)
    full: bytes  # JSON as a single GET returns it


@dataclass(frozen=True, slots=True)
class Change:
    """One write as a watch reports it: the revision, ADDED/MODIFIED/DELETED, and the object before and after."""

    seq: int
    type: str
    store_key: tuple[str, str]
    namespace: str
    stored: Stored  # the object after the write (for DELETED: as it was, with the deletion's resourceVersion)
    before: Stored | None  # the object before a MODIFIED, to tell a watch with a selector that it left


class Gone(Exception):
    """A watch asked for a resourceVersion older than the history kept (etcd compacted it)."""


class ContinueError(Exception):
    """A continue token the server rejects: bad (400) or expired (410)."""

    def __init__(self, expired: bool, message: str, fresh_token: str = "") -> None:
        super().__init__(message)
        self.expired = expired
        self.fresh_token = fresh_token


@dataclass
class Page:
    items: list[Stored]
    resource_version: str
    continue_token: str = ""
    remaining: int | None = None


# Field paths a list with an equality field selector on them reads through an index, as the API server's watch
# cache does for pods by node; without it the stand-in's own CPU time for 50,000 events would swamp the latency
# it is meant to show.
INDEXED = ("involvedObject.name", "spec.nodeName")


@dataclass
class _Bucket:
    by_key: dict[str, Stored] = field(default_factory=dict)
    sorted_keys: list[str] | None = None
    by_field: dict[tuple[str, str], set[str]] = field(default_factory=dict)

    def index(self, stored: Stored, add: bool) -> None:
        for path in INDEXED:
            if path in stored.fields:
                keys = self.by_field.setdefault((path, stored.fields[path]), set())
                (keys.add if add else keys.discard)(stored.key)

    def ordered(self) -> list[str]:
        if self.sorted_keys is None:
            self.sorted_keys = sorted(self.by_key)
        return self.sorted_keys


def _rfc3339(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%SZ")


class ObjectStore:
    def __init__(self, clock: Callable[[], datetime]) -> None:
        self._clock = clock
        self._lock = threading.RLock()
        self._buckets: dict[tuple[str, str], dict[str, _Bucket]] = {}
        self._seq = 1000  # resourceVersion counter, like etcd's revision
        self._compacted = 0  # continue tokens older than this are expired (410)
        self._history: list[Change] = []
        self._history_floor = 0  # watches from a resourceVersion below this are 410 Gone
        self.changed = threading.Condition(self._lock)  # notified on every write, for open watches
        self.watch_generation = 0  # bumped by end_watches; a watch opened in an older generation ends

    @property
    def resource_version(self) -> str:
        return str(self._seq)

    # --- writes (from tests, never from HTTP) ------------------------------------------------------------------------

    def add(self, obj: Mapping[str, Any]) -> None:
        """Add or replace an object; a List (kind ending in "List" with items) adds each item."""
        kind = str(obj.get("kind", ""))
        if kind.endswith("List") and isinstance(obj.get("items"), list):
            item_kind = kind[: -len("List")] if kind != "List" else ""
            for item in obj["items"]:
                self.add(self._with_type(item, str(obj.get("apiVersion", "")), item_kind))
            return
        if (obj.get("apiVersion"), kind) == ("events.k8s.io/v1", "Event"):
            obj = to_core(obj)  # one store for both views, as in the real server
        res = resource_for_object(str(obj.get("apiVersion", "")), kind)
        with self._lock:
            self._put(res, obj)
            ns = self._namespace_of(res, obj)
            if ns:
                self.ensure_namespace(ns)

    @staticmethod
    def _with_type(item: Mapping[str, Any], api_version: str, kind: str) -> dict[str, Any]:
        out = dict(item)
        out.setdefault("apiVersion", api_version)
        out.setdefault("kind", kind)
        return out

    def ensure_namespace(self, name: str) -> None:
        """Namespaces exist in a real cluster before anything is created in them."""
        with self._lock:
            bucket = self._buckets.get(("", "namespaces"), {}).get("")
            if bucket is None or name not in bucket.by_key:
                self._put(resource_for_object("v1", "Namespace"),
                          {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name},
                           "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})

    def _namespace_of(self, res: Resource, obj: Mapping[str, Any]) -> str:
        if not res.namespaced:
            return ""
        return str(obj.get("metadata", {}).get("namespace") or "default")

    def _put(self, res: Resource, obj: Mapping[str, Any]) -> None:
        self._seq += 1
        filled = self._filled(res, obj)
        meta = filled["metadata"]
        given_rv = str(meta["resourceVersion"])
        if given_rv.isdigit() and int(given_rv) > self._seq:
            self._seq = int(given_rv)  # keep list resourceVersions monotonic past recorded ones
        ns = str(meta.get("namespace", ""))
        name = str(meta["name"])
        key = f"{ns}/{name}" if ns else name
        bucket = self._buckets.setdefault(res.store_key, {}).setdefault(ns, _Bucket())
        previous = bucket.by_key.get(key)
        if previous is not None:
            meta["resourceVersion"] = str(self._seq)  # an update always gets the new revision, as in etcd
        stored = self._stored(res, filled, key, previous.seq if previous else self._seq)
        bucket.by_key[key] = stored
        if previous is None:
            bucket.sorted_keys = None
        else:
            bucket.index(previous, add=False)
        bucket.index(stored, add=True)
        self._record("MODIFIED" if previous else "ADDED", res, stored, previous)

    def _stored(self, res: Resource, filled: dict[str, Any], key: str, seq: int) -> Stored:
        meta = filled["metadata"]
        full = dumps(filled)
        return Stored(key=key, namespace=str(meta.get("namespace", "")), name=str(meta["name"]),
                      uid=str(meta["uid"]), seq=seq, labels=dict(meta.get("labels") or {}),
                      fields=selectable_fields(filled, res), item=full if res.custom else _without_type(full, res),
                      full=full)

    def _record(self, kind: str, res: Resource, stored: Stored, before: Stored | None) -> None:
        self._history.append(Change(self._seq, kind, res.store_key, stored.namespace, stored, before))
        self.changed.notify_all()

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        """Remove an object (a test's write); watches see DELETED with the deletion's resourceVersion."""
        res = resource_for_object(api_version, kind)
        ns = (namespace or "default") if res.namespaced else ""
        with self._lock:
            bucket = self._buckets.get(res.store_key, {}).get(ns)
            key = f"{ns}/{name}" if ns else name
            gone = bucket.by_key.pop(key, None) if bucket else None
            if gone is None or bucket is None:
                return False
            bucket.sorted_keys = None
            bucket.index(gone, add=False)
            self._seq += 1
            last = json.loads(gone.full)
            last["metadata"]["resourceVersion"] = str(self._seq)
            self._record("DELETED", res, self._stored(res, last, key, gone.seq), None)
            return True

    def compact(self) -> None:
        """Like an etcd compaction: the change history so far is gone, and so are continue tokens. Open watches
        are behind the new floor too, so each gets 410 Gone and must relist."""
        with self._lock:
            self._seq += 1
            self._compacted = self._history_floor = self._seq
            self._history.clear()
            self.changed.notify_all()

    def end_watches(self) -> None:
        """Every open watch ends, as when an API server restarts; clients resume from their resourceVersion."""
        with self._lock:
            self.watch_generation += 1
            self.changed.notify_all()

    def changes_since(self, store_key: tuple[str, str], namespace: str | None, rv: int) -> tuple[list[Change], int]:
        """Changes to one resource after revision rv (in one namespace, or all), and the revision read up to.
        Raises Gone when rv is older than the history kept. Call with the lock held (see `changed`)."""
        if rv < self._history_floor:  # the real message: "too old resource version: 1000 (1234)"
            raise Gone(f"too old resource version: {rv} ({self._history_floor})")
        start = bisect.bisect_right(self._history, rv, key=lambda c: c.seq)
        found = [c for c in self._history[start:] if c.store_key == store_key
                 and (namespace is None or c.namespace == namespace)]
        return found, self._seq

    def _filled(self, res: Resource, obj: Mapping[str, Any]) -> dict[str, Any]:
        out = dict(obj)
        meta = dict(out.get("metadata") or {})
        if not meta.get("name"):
            raise ValueError(f"{res.kind} without metadata.name: {obj!r:.200}")
        if res.namespaced:
            meta["namespace"] = meta.get("namespace") or "default"
        else:
            meta.pop("namespace", None)
        if not meta.get("uid"):
            meta["uid"] = _uid(res, meta.get("namespace", ""), meta["name"])
        if not meta.get("resourceVersion"):
            meta["resourceVersion"] = str(self._seq)
        if not meta.get("creationTimestamp"):
            meta["creationTimestamp"] = _rfc3339(self._clock())
        out["metadata"] = meta
        out["apiVersion"] = res.api_version
        out["kind"] = res.kind
        if res.store_key == ("", "events") and isinstance(out.get("involvedObject"), dict):
            out["involvedObject"] = self._with_uid(out["involvedObject"])
        return _ordered(out)

    def _with_uid(self, ref: dict[str, Any]) -> dict[str, Any]:
        """Recorders always set involvedObject.uid (kubectl describe selects events by it); fill it if missing."""
        if ref.get("uid") or not ref.get("name"):
            return ref
        try:
            target = resource_for_object(str(ref.get("apiVersion") or "v1"), str(ref.get("kind", "")))
        except ValueError:
            return ref
        ns = str(ref.get("namespace") or "") if target.namespaced else ""
        stored = self.get(target, ns, str(ref["name"]))
        uid = stored.uid if stored else _uid(target, ns, str(ref["name"]))
        return {**ref, "uid": uid}

    # --- reads --------------------------------------------------------------------------------------------------------

    def get(self, res: Resource, namespace: str, name: str) -> Stored | None:
        with self._lock:
            bucket = self._buckets.get(res.store_key, {}).get(namespace if res.namespaced else "")
            if bucket is None:
                return None
            return bucket.by_key.get(f"{namespace}/{name}" if res.namespaced else name)

    def all_in(self, res: Resource, namespace: str | None) -> list[Stored]:
        """Objects in key order; namespace None means every namespace."""
        with self._lock:
            buckets = self._buckets.get(res.store_key, {})
            if namespace is not None or not res.namespaced:
                bucket = buckets.get(namespace or "")
                return [bucket.by_key[k] for k in bucket.ordered()] if bucket else []
            # Sorting namespaces by "ns/" keeps the whole list in etcd key order ("a-b/x" < "a/x").
            order = sorted(buckets, key=lambda ns: ns + "/")
            return [b.by_key[k] for ns in order for b in (buckets[ns],) for k in b.ordered()]

    def indexed_in(self, res: Resource, namespace: str | None, path: str, value: str) -> list[Stored]:
        """The objects whose indexed field `path` equals `value`, in key order (as all_in orders them)."""
        with self._lock:
            buckets = self._buckets.get(res.store_key, {})
            chosen = [buckets.get(namespace or "")] if namespace is not None or not res.namespaced \
                else list(buckets.values())
            found = [(k, b.by_key[k]) for b in chosen if b is not None for k in b.by_field.get((path, value), ())]
        return [stored for _, stored in sorted(found, key=lambda item: item[0])]

    def expire_continue_tokens(self) -> None:
        """Like an etcd compaction: every continue token issued so far now answers 410 Expired."""
        with self._lock:
            self._seq += 1
            self._compacted = self._seq

    def list_page(self, res: Resource, namespace: str | None, labels: list[LabelRequirement],
                  field_match: Callable[[Mapping[str, str]], bool], limit: int | None, token: str,
                  pinned: tuple[str, str] | None = None) -> Page:
        # Tokens hold keys relative to the list's prefix, as etcd3 tokens do: "name" in a namespace, "ns/name" across.
        prefix = f"{namespace}/" if namespace and res.namespaced else ""
        with self._lock:
            start, snapshot = self._decode_continue(token, prefix) if token else ("", self._seq)
            objects = self.indexed_in(res, namespace, *pinned) if pinned else self.all_in(res, namespace)
            current = self._seq
        if snapshot < 0:  # a token handed out with a 410: continue inconsistently, at the latest version
            snapshot = current
        selected = _select(objects, start, snapshot, labels, field_match)
        rv = str(snapshot)
        if limit is None or limit <= 0:
            return Page(list(selected), rv)
        page: list[Stored] = []
        for obj in selected:
            if len(page) == limit:
                rest = 1 + sum(1 for _ in selected)
                remaining = rest if not labels and field_match is _MATCH_ALL else None
                return Page(page, rv, encode_continue(page[-1].key[len(prefix):], snapshot), remaining)
            page.append(obj)
        return Page(page, rv)

    def _decode_continue(self, token: str, prefix: str) -> tuple[str, int]:
        try:
            raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
            decoded = json.loads(raw)
        except (binascii.Error, ValueError) as exc:
            raise ContinueError(False, f"invalid continue token: continue key is not valid: {exc}") from None
        if not isinstance(decoded, dict) or decoded.get("v") != "meta.k8s.io/v1":
            version = decoded.get("v") if isinstance(decoded, dict) else None
            raise ContinueError(False, f"invalid continue token: got unrecognized encoded version {version}")
        start, rv = decoded.get("start"), decoded.get("rv")
        if not isinstance(start, str) or not start or not isinstance(rv, int):
            raise ContinueError(False, "invalid continue token: continue key is not valid: encoded key is empty")
        if 0 <= rv < self._compacted:
            raise ContinueError(True, _INCONSISTENT_CONTINUE, encode_continue(start.rstrip("\x00"), -1))
        return prefix + start, rv


_INCONSISTENT_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. You can start a new list "
    "without the continue parameter, or use the continue token in this response to retrieve the remainder of the "
    "results. Continuing with the provided token results in an inconsistent list - objects that were created, "
    "modified, or deleted between the time the first chunk was returned and now may show up in the list.")


def _MATCH_ALL(fields: Mapping[str, str]) -> bool:
    return True


MATCH_ALL: Callable[[Mapping[str, str]], bool] = _MATCH_ALL


def encode_continue(last_key: str, rv: int) -> str:
    """The real token: base64url (no padding) of {"v","rv","start"}, start being the last key plus NUL."""
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _select(objects: list[Stored], start: str, snapshot: int, labels: list[LabelRequirement],
            field_match: Callable[[Mapping[str, str]], bool]) -> Iterable[Stored]:
    for obj in objects:
        if start and obj.key < start:
            continue
        if obj.seq > snapshot:
            continue  # created after the first page: a consistent continue does not show it
        if labels and not all(r.matches(obj.labels) for r in labels):
            continue
        if field_match is not _MATCH_ALL and not field_match(obj.fields):
            continue
        yield obj


def _uid(res: Resource, namespace: str, name: str) -> str:
    """Deterministic, so an event can name its object's uid before or after the object is added."""
    return str(uuid.uuid5(_UID_NAMESPACE, f"{res.store_key}/{namespace}/{name}"))


def _without_type(full: bytes, res: Resource) -> bytes:
    """The list-item form: the same JSON without its leading kind and apiVersion (see _ordered)."""
    head = _type_head(res.kind, res.api_version)
    assert full.startswith(head)
    return b"{" + full[len(head):]


@cache
def _type_head(kind: str, api_version: str) -> bytes:
    return dumps({"kind": kind, "apiVersion": api_version})[:-1] + b","


def _ordered(obj: dict[str, Any]) -> dict[str, Any]:
    """Key order as Go encodes API structs: kind, apiVersion, metadata, then the rest."""
    head: dict[str, Any] = {k: obj[k] for k in ("kind", "apiVersion", "metadata") if k in obj}
    return {**head, **{k: v for k, v in obj.items() if k not in head}}


def loads(raw: bytes) -> dict[str, Any]:
    value = json.loads(raw)
    assert isinstance(value, dict)
    return value
