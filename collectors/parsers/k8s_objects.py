"""Kubernetes objects as JSON or YAML: one object, a List, `kubectl get -o json|yaml`, multi-document YAML,
concatenated JSON (`jq .items[]`) or JSON lines. Dispatches on each object's `kind`.

Decoded JSON/YAML has no line numbers, so citations come from a forward text search for the key (and its
value) inside the object's stretch of text: exact for kubectl's pretty output, approximate otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from collectors.k8s_values import GPU_RESOURCE, as_dict, as_int, as_list, as_str, quantity, quantity_int, quantity_milli
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers import k8s_services, node_spread
from collectors.parsers.contract import Parser
from collectors.parsers.k8s_common import (
    DedupSink,
    DistEnv,
    EnvVar,
    NodeGpus,
    gpu_sharing,
    has_gpu_labels,
    is_rdma_resource,
    node_condition,
    subject_of,
    toleration_text,
    unique,
)
from collectors.parsers.k8s_event_facts import EventFacts
from collectors.parsers.k8s_event_rows import EventRecord
from collectors.parsers.k8s_messages import (
    eviction_condition,
    eviction_resource,
    missing_refs,
    node_not_ready_reasons,
    nodes_total,
    scheduling_reasons,
)
from collectors.text import normalise
from collectors.yaml_safe import safe_load

_STRUCTURED_START = re.compile(r"(?m)^(?:[{\[]|apiVersion:|kind:|items:|---)")
_DOC_SEPARATOR = re.compile(r"(?m)^(?:---|\.\.\.)(?:[ \t].*)?$")
_JSON_KIND = re.compile(r""""kind"\s*:\s*"[A-Za-z]+""")
_YAML_KIND = re.compile(r"(?m)^(?:- |  )?kind:\s*[A-Za-z]+")  # "  kind:" in a bare list of objects
_YAML_API = re.compile(r"(?m)^[ \t]*(?:- )?apiVersion:")
_WS = re.compile(r"\s*")
_AFTER_QUOTED_KEY = re.compile(r"""["'][ \t]*:[ \t]*""")
_AFTER_KEY = re.compile(r"""[ \t]*:(?:[ \t]+|(?=\n)|$)""")


_FRAGMENT_KEY = re.compile(
    r"""(?m)^[ \t]*(?:- )?["']?(containerStatuses|initContainerStatuses|lastState|restartCount|exitCode|phase|"""
    r"""qosClass|involvedObject|podIP|hostIP|startTime|containerID|imageID|lastProbeTime|lastTransitionTime)"""
    r"""["']?[ \t]*:""")


def sniff(text: str) -> int:
    """0-100 confidence that the text is Kubernetes objects as JSON or YAML (or a piece of one)."""
    head = text[:50_000]
    if len(set(_FRAGMENT_KEY.findall(head))) >= 2 and not _JSON_KIND.search(head) and not _YAML_KIND.search(head):
        return 60  # a kindless piece of an object: a `status:` block, one containerStatus, an Event
    first = head.lstrip()[:1]
    if first in ("{", "["):
        if _JSON_KIND.search(head) and '"apiVersion"' in head:
            return 90
        return 50 if '"metadata"' in head and _JSON_KIND.search(head) else 0
    if _YAML_KIND.search(head) and _YAML_API.search(head):
        return 90
    return 0


def parse(artifact: Artifact) -> ParseResult:
    """Facts from every object in the artifact."""
    text = normalise(artifact.content)
    sink = DedupSink(artifact, text.split("\n"))
    try:
        _parse(sink, text)
    except Exception as exc:  # a parser must never take the triage down with it
        sink.problem(f"internal: object parser failed: {type(exc).__name__}: {exc}")
    return sink.done()


# ---- loading -----------------------------------------------------------------------------------------


@dataclass
class _Doc:
    data: object
    start: int  # character offsets into the text
    end: int


def _load(text: str, problems: list[str]) -> list[_Doc]:
    docs = _load_from(text, 0, problems)
    if not any(isinstance(d.data, dict | list) for d in docs):
        # A paste often starts with the command that produced it.
        m = _STRUCTURED_START.search(text)
        if m and m.start() > 0:
            problems.clear()
            docs = _load_from(text, m.start(), problems)
    return docs


def _load_from(text: str, offset: int, problems: list[str]) -> list[_Doc]:
    if text[offset:].lstrip()[:1] in ("{", "["):
        docs = _json_docs(text, offset, problems)
        if docs:
            return docs
        problems.clear()
    return _yaml_docs(text, offset, problems)


def _json_docs(text: str, offset: int, problems: list[str]) -> list[_Doc]:
    """One JSON value, or several back to back (`jq .items[]`, JSON lines)."""
    decoder = json.JSONDecoder()
    docs: list[_Doc] = []
    pos = _skip_ws(text, offset)
    while pos < len(text):
        try:
            data, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            problems.append(f"JSON unreadable from character {pos}: {err}")
            break
        docs.append(_Doc(data, pos, end))
        pos = _skip_ws(text, end)
    return docs


def _skip_ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def _yaml_docs(text: str, offset: int, problems: list[str]) -> list[_Doc]:
    cuts = [offset] + [m.start() for m in _DOC_SEPARATOR.finditer(text, offset)] + [len(text)]
    docs: list[_Doc] = []
    for start, end in itertools.pairwise(cuts):
        chunk = text[start:end]
        if chunk.startswith(("---", "...")):
            chunk = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        if not chunk.strip():
            continue
        try:
            data = safe_load(chunk)
        except Exception as err:  # YAMLError, or RecursionError on absurd nesting
            problems.append(f"YAML unreadable at character {start}: {type(err).__name__}")
            continue
        docs.append(_Doc(data, start, end))
    return docs


# ---- finding lines -----------------------------------------------------------------------------------


class _Text:
    """The artifact text with forward key searches and cheap offset -> line conversion."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._pos = 0
        self._line = 1

    def line_at(self, pos: int) -> int:
        # Lookups mostly move forward, so counting from the previous answer keeps this linear overall.
        if pos >= self._pos:
            self._line += self.text.count("\n", self._pos, pos)
        else:
            self._line -= self.text.count("\n", pos, self._pos)
        self._pos = pos
        return self._line

    def find(self, key: str, value: str | None, start: int, end: int) -> int | None:
        """Offset of the first `key:` (with that value, if given) in text[start:end]."""
        text = self.text
        pos = start
        # str.find is far cheaper than a regex scan; only the few literal hits are checked in full.
        while (hit := text.find(key, pos, end)) >= 0:
            pos = hit + len(key)
            after = self._key_end(hit, len(key))
            if after is not None and (value is None or self._value_at(after, value)):
                return hit
        return None

    def _key_end(self, hit: int, length: int) -> int | None:
        """Where the value starts if text[hit:] is a whole mapping key, else None."""
        text = self.text
        quoted = hit > 0 and text[hit - 1] in "\"'"
        if not self._opens_key(hit - 1 if quoted else hit):
            return None
        m = (_AFTER_QUOTED_KEY if quoted else _AFTER_KEY).match(text, hit + length)
        return m.end() if m else None

    def _opens_key(self, pos: int) -> bool:
        """A key starts its line (after indent or a YAML `- `) or follows `{` or `,` in flow JSON."""
        text = self.text
        k = pos - 1
        while k >= 0 and text[k] in " \t":
            k -= 1
        if k < 0 or text[k] in "\n{,":
            return True
        if text[k] != "-" or k + 1 == pos:
            return False
        k -= 1
        while k >= 0 and text[k] in " \t":
            k -= 1
        return k < 0 or text[k] == "\n"

    def _value_at(self, pos: int, value: str) -> bool:
        window = self.text[pos:pos + len(value) * 2 + 8]
        escaped = json.dumps(value)[1:-1]
        for candidate in {value, escaped}:
            for quote in ('"', "'"):
                if window.startswith(quote + candidate + quote):
                    return True
            if window.startswith(candidate):
                after = window[len(candidate):len(candidate) + 1]
                if not after or after in " \t\r\n,}]#":
                    return True
        return False


Step = str | tuple[str, object]


@dataclass
class _Item:
    data: dict[str, Any]
    kind: str
    start: int
    end: int


class _Loc:
    """Line lookups confined to one object's stretch of text."""

    def __init__(self, text: _Text, item: _Item) -> None:
        self.text = text
        self.item = item
        self._memo: dict[tuple[str, str | None, int], int | None] = {}

    def at(self, *path: Step) -> int:
        """Line of the last step, each step searched after the previous one; falls back to the last hit.

        kubectl sorts keys, so a sibling can come before the key that identifies its object (`image`
        before `name` in a container): a step not found after the latest hit is retried after earlier ones.
        """
        anchors = [self.item.start]
        for i, step in enumerate(path):
            key, value = (step, None) if isinstance(step, str) else (step[0], as_str(step[1]) or None)
            found = self._search(key, value, anchors)
            if found is None and value is not None and i == len(path) - 1:
                found = self._search(key, None, anchors)
            if found is not None:
                anchors.append(found)
        return self.text.line_at(anchors[-1])

    def _search(self, key: str, value: str | None, anchors: list[int]) -> int | None:
        for anchor in reversed(anchors):
            memo = (key, value, anchor)
            if memo not in self._memo:  # paths share prefixes (spec, containers, env ...)
                self._memo[memo] = self.text.find(key, value, anchor, self.item.end)
            if (found := self._memo[memo]) is not None:
                return found
        return None

    def item_line(self) -> int:
        return self.text.line_at(self.item.start)


# ---- objects -----------------------------------------------------------------------------------------


def _items(text: _Text, docs: list[_Doc]) -> list[_Item]:
    items: list[_Item] = []
    for doc in docs:
        data = doc.data
        default_kind, members, cursor = "", [data], doc.start
        if isinstance(data, list):
            members = data
        elif isinstance(data, dict) and isinstance(data.get("items"), list):
            list_kind = as_str(data.get("kind"))
            default_kind = list_kind[:-4] if list_kind.endswith("List") and list_kind != "List" else ""
            members = data["items"]
            cursor = text.find("items", None, doc.start, doc.end) or doc.start
            if not members and list_kind:
                items.append(_Item({"kind": list_kind, "items": []}, list_kind, doc.start, doc.end))
        whole = len(members) == 1 and members[0] is data
        spans = None if whole else _json_spans(text.text, cursor, doc.end, len(members))
        if spans is not None:
            items += [_Item(m, as_str(m.get("kind")) or default_kind, a, b)
                      for m, (a, b) in zip(members, spans, strict=True) if isinstance(m, dict)]
            continue
        objects = [(m, as_str(m.get("kind")) or default_kind) for m in members if isinstance(m, dict)]
        items.extend(_place(text, objects, cursor, doc, whole))
    return items


def _json_spans(text: str, cursor: int, end: int, count: int) -> list[tuple[int, int]] | None:
    """Exact extents of the members of a JSON array starting at or after cursor, by decoding each one.

    None when the text there is not that JSON array (YAML, or an array that does not match).
    """
    pos = text.find("[", cursor, end)
    if pos < 0 or text[cursor:pos].strip(" \t\r\n\"items:") != "":
        return None
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    pos = _skip_ws(text, pos + 1)
    try:
        while len(spans) < count:
            _, stop = decoder.raw_decode(text, pos)
            spans.append((pos, stop))
            pos = _skip_ws(text, stop)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
    except (ValueError, RecursionError):
        return None
    return spans


def _place(text: _Text, objects: list[tuple[dict[str, Any], str]], cursor: int, doc: _Doc,
           whole: bool) -> list[_Item]:
    """Each object's start: its own `kind:` line (or its name), searched forward in document order."""
    if whole:
        return [_Item(objects[0][0], objects[0][1], doc.start, doc.end)] if objects else []
    starts: list[int] = []
    for data, kind in objects:
        name = as_str(as_dict(data.get("metadata")).get("name"))
        found = (text.find("kind", kind, cursor, doc.end) if "kind" in data else None) or (
            text.find("name", name, cursor, doc.end) if name else None)
        start = found if found is not None else cursor
        starts.append(start)
        cursor = start + 1
    ends = [*starts[1:], doc.end]
    return [_Item(data, kind, s, max(e, s)) for (data, kind), s, e in zip(objects, starts, ends, strict=False)]


@dataclass
class _Ctx:
    sink: DedupSink
    text: _Text
    events: EventFacts
    dist: DistEnv = field(default_factory=DistEnv)
    netpols: list[tuple[bool, int]] = field(default_factory=list)
    netpol_list_line: int = 0
    placements: list[node_spread.Placement] = field(default_factory=list)


def _parse(sink: DedupSink, text: str) -> None:
    problems: list[str] = []
    docs = _load(text, problems)
    for p in problems:
        sink.problem(p)
    tx = _Text(text)
    ctx = _Ctx(sink, tx, EventFacts(sink))
    for item in _items(tx, docs):
        kind, data = (item.kind, item.data) if item.kind else _fragment(item.data)
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(ctx, data, _Loc(tx, item))
    ctx.dist.flush(sink)
    node_spread.emit(sink, ctx.placements)
    ctx.events.finish()
    _netpol_totals(ctx)


# Keys that say what a kindless piece of an object is: people paste `status:` or one containerStatus, not the Pod.
_POD_STATUS_KEYS = {"containerStatuses", "initContainerStatuses", "phase", "qosClass", "podIP", "hostIP", "startTime"}
_CONTAINER_STATUS_KEYS = {"lastState", "restartCount", "containerID", "imageID"}
_EVENT_KEYS = {"involvedObject", "reason", "message"}


def _fragment(data: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The kind of a piece of an object pasted without `kind`, and the piece wrapped as that object."""
    keys = set(data)
    if "status" in keys and keys & {"spec", "metadata"}:
        return "Pod", data
    if isinstance(data.get("status"), dict) and set(data["status"]) & _POD_STATUS_KEYS:
        return "Pod", data
    if len(keys & _POD_STATUS_KEYS) >= 1 and ("containerStatuses" in keys or len(keys & _POD_STATUS_KEYS) >= 2
                                            or {"reason", "message"} <= keys):
        return "Pod", {"status": data}
    if len(keys & _CONTAINER_STATUS_KEYS) >= 1 and ("state" in keys or "lastState" in keys):
        return "Pod", {"status": {"containerStatuses": [data]}}
    if keys >= _EVENT_KEYS:
        return "Event", data
    return "", data


def _identity(d: dict[str, Any], kind: str) -> tuple[str, str, str | None]:
    meta = as_dict(d.get("metadata"))
    name, ns = as_str(meta.get("name")), as_str(meta.get("namespace"))
    return name, ns, (subject_of(kind, name, ns) if name else None)


# ---- Pod ---------------------------------------------------------------------------------------------


def _pod(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    name, ns, subject = _identity(d, "pod")
    spec, status = as_dict(d.get("spec")), as_dict(d.get("status"))
    add = ctx.sink.add
    name_line = loc.at("metadata", ("name", name))
    if name:
        add("pod.name", name, name_line, subject=subject)
        add("pods.names", [name], name_line, subject=subject)
    if ns:
        add("pod.namespace", ns, loc.at("metadata", ("namespace", ns)), subject=subject)
    if "nodeName" in spec or ("phase" in status and spec):  # a pasted status block alone says nothing of the node
        node = as_str(spec.get("nodeName"))
        add("pod.node", node, loc.at("spec", ("nodeName", node)) if node else name_line, subject=subject)
    _pod_phase(ctx, loc, name, status, subject)
    if name and (node := as_str(spec.get("nodeName"))):
        ctx.placements.append(node_spread.Placement(name, node, _failing(status), name_line, subject))
    _pod_spec(ctx, loc, spec, subject)
    _pod_statuses(ctx, loc, spec, status, subject)
    _pod_conditions(ctx, loc, status, subject)
    _pod_env(ctx, loc, spec, subject)
    _pod_gang(ctx, loc, d, subject)


def _failing(status: dict[str, Any]) -> bool:
    """Not Running or Succeeded, a container waiting on an error, or any restart."""
    if as_str(status.get("phase")) not in ("Running", "Succeeded"):
        return True
    for st in map(as_dict, as_list(status.get("containerStatuses"))):
        waiting = as_dict(as_dict(st.get("state")).get("waiting"))
        if (as_int(st.get("restartCount")) or 0) > 0 or as_str(waiting.get("reason")) not in ("", "ContainerCreating"):
            return True
    return False


def _pod_phase(ctx: _Ctx, loc: _Loc, name: str, status: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    phase, reason, message = (as_str(status.get(k)) for k in ("phase", "reason", "message"))
    if phase:
        line = loc.at("status", ("phase", phase))
        add("pod.phase", phase, line, subject=subject)
        if phase not in ("Running", "Succeeded") and name:
            add("pods.not_running", [name], line, subject=subject)
        if phase == "Pending" and name:
            add("pods.pending", [name], line, subject=subject)
    if reason:
        reason_line = loc.at("status", ("reason", reason))
        add("pod.status.reason", reason, reason_line, subject=subject)
        if reason == "Preempting":
            add("scheduling.preempted", True, reason_line, subject=subject)
        if reason == "Evicted":
            add("eviction.seen", True, reason_line, subject=subject)
            if resource := eviction_resource(message):
                add("eviction.resource", resource, loc.at("status", "message"), subject=subject)
            if condition := eviction_condition(message):
                add("node.conditions", [condition], loc.at("status", "message"), subject=subject)
    if message:
        add("pod.status.message", message, loc.at("status", "message"), subject=subject)
    if qos := as_str(status.get("qosClass")):
        add("pod.qos_class", qos, loc.at("status", ("qosClass", qos)), subject=subject)


def _containers(spec: dict[str, Any], key: str = "containers") -> list[dict[str, Any]]:
    return [as_dict(c) for c in as_list(spec.get(key)) if isinstance(c, dict)]


def _gpu_request(c: dict[str, Any]) -> int:
    resources = as_dict(c.get("resources"))
    requests, limits = as_dict(resources.get("requests")), as_dict(resources.get("limits"))
    # An extended resource's request defaults to its limit.
    value = requests.get(GPU_RESOURCE, limits.get(GPU_RESOURCE))
    return quantity_int(value) or 0


def _pod_spec(ctx: _Ctx, loc: _Loc, spec: dict[str, Any], subject: str | None) -> None:
    if not spec:
        return
    add = ctx.sink.add
    main, init = _containers(spec), _containers(spec, "initContainers")
    if main:
        total = max(sum(_gpu_request(c) for c in main), max((_gpu_request(c) for c in init), default=0))
        add("pod.gpu_request", total, loc.at("spec", "containers", GPU_RESOURCE), subject=subject)
        rdma = [r for c in main + init for r in _resource_names(c) if is_rdma_resource(r)]
        add("pod.rdma_request", bool(rdma), loc.at("spec", "containers", rdma[0] if rdma else "resources"),
            subject=subject)
        caps = unique(as_str(cap) for c in main + init for cap in as_list(
            as_dict(as_dict(c.get("securityContext")).get("capabilities")).get("add")))
        add("pod.capabilities", caps, loc.at("spec", "capabilities" if caps else "containers"), subject=subject)
        _probes(ctx, loc, main, subject)
        _shm(ctx, loc, spec, main + init, subject)
    add("pod.host_network", spec.get("hostNetwork") is True, loc.at("spec", "hostNetwork"), subject=subject)
    for key, fact in (("priorityClassName", "pod.priority_class"), ("schedulerName", "pod.scheduler_name")):
        if value := as_str(spec.get(key)):
            add(fact, value, loc.at("spec", (key, value)), subject=subject)
    if "tolerations" in spec:
        tolerations = [_toleration(as_dict(t)) for t in as_list(spec.get("tolerations"))]
        add("pod.tolerations", unique(tolerations), loc.at("spec", "tolerations"), subject=subject)


def _resource_names(c: dict[str, Any]) -> list[str]:
    resources = as_dict(c.get("resources"))
    return [k for part in ("limits", "requests") for k in as_dict(resources.get(part)) if isinstance(k, str)]


def _toleration(t: dict[str, Any]) -> str:
    return toleration_text(as_str(t.get("key")), as_str(t.get("operator")), as_str(t.get("value")),
                           as_str(t.get("effect")))


def _probes(ctx: _Ctx, loc: _Loc, main: list[dict[str, Any]], subject: str | None) -> None:
    ready = [as_int(as_dict(c.get("readinessProbe")).get("initialDelaySeconds")) or 0
             for c in main if isinstance(c.get("readinessProbe"), dict)]
    if ready:
        ctx.sink.add("probe.readiness_delay_seconds", min(ready), loc.at("spec", "readinessProbe"), subject=subject)
    delays = [as_int(as_dict(c.get("livenessProbe")).get("initialDelaySeconds")) or 0
              for c in main if isinstance(c.get("livenessProbe"), dict)]
    if not delays:
        return
    line = loc.at("spec", "livenessProbe")
    ctx.sink.add("probe.liveness_delay_seconds", min(delays), line, subject=subject)
    startup = any(isinstance(c.get("startupProbe"), dict) for c in main)
    ctx.sink.add("probe.startup_configured", startup, loc.at("spec", "startupProbe") if startup else line,
                 subject=subject)


# With no memory-backed volume at /dev/shm (and the host's IPC namespace not shared), Docker and containerd give
# each pod a 64 MiB tmpfs there.
RUNTIME_SHM_BYTES = 64 * 2**20


def _shm(ctx: _Ctx, loc: _Loc, spec: dict[str, Any], containers: list[dict[str, Any]],
         subject: str | None) -> None:
    memory = {as_str(v.get("name")): as_dict(v.get("emptyDir")) for v in map(as_dict, as_list(spec.get("volumes")))
              if as_str(as_dict(v.get("emptyDir")).get("medium")) == "Memory"}
    mounts = [as_str(m.get("name")) for c in containers for m in map(as_dict, as_list(c.get("volumeMounts")))
              if as_str(m.get("mountPath")).rstrip("/") == "/dev/shm" and as_str(m.get("name")) in memory]
    line = loc.at("spec", "containers", ("mountPath", "/dev/shm")) if mounts else loc.at("spec", "volumes")
    ctx.sink.add("pod.shm_volume", bool(mounts), line, subject=subject)
    if mounts:
        # No sizeLimit: bounded only by the pod's memory, so no size to state.
        size = quantity_int(memory[mounts[0]].get("sizeLimit"))
        if size is not None and size > 0:
            ctx.sink.add("pod.shm_size_bytes", size, loc.at("spec", "volumes", ("name", mounts[0]), "sizeLimit"),
                         subject=subject)
    elif spec.get("hostIPC") is not True and not any(
            as_str(m.get("mountPath")).rstrip("/") == "/dev/shm"
            for c in containers for m in map(as_dict, as_list(c.get("volumeMounts")))):
        # A disk-backed volume mounted there is as large as its disk: only an empty mount point is the default.
        ctx.sink.add("pod.shm_size_bytes", RUNTIME_SHM_BYTES, line, subject=subject)


# ---- container states --------------------------------------------------------------------------------


@dataclass
class _Status:
    data: dict[str, Any]
    init: bool

    @property
    def name(self) -> str:
        return as_str(self.data.get("name"))

    def section(self) -> str:
        return "initContainerStatuses" if self.init else "containerStatuses"

    def terminated(self) -> tuple[dict[str, Any], str] | None:
        """The most recent termination and where it is: the current state first, then lastState."""
        for where in ("state", "lastState"):
            term = as_dict(self.data.get(where)).get("terminated")
            if isinstance(term, dict):
                return term, where
        return None

    def trouble(self) -> int:
        term = self.terminated()
        if term is not None and (as_str(term[0].get("reason")) not in ("", "Completed")
                                 or as_int(term[0].get("exitCode")) not in (None, 0)):
            return 0
        if "waiting" in as_dict(self.data.get("state")) or (as_int(self.data.get("restartCount")) or 0) > 0:
            return 1
        return 3 if self.init else 2


def _pod_statuses(ctx: _Ctx, loc: _Loc, spec: dict[str, Any], status: dict[str, Any],
                  subject: str | None) -> None:
    statuses = [_Status(as_dict(s), False) for s in as_list(status.get("containerStatuses"))]
    statuses += [_Status(as_dict(s), True) for s in as_list(status.get("initContainerStatuses"))]
    specs = {as_str(c.get("name")): c for c in _containers(spec) + _containers(spec, "initContainers")}
    seen: set[str] = set()
    for st in sorted(statuses, key=_Status.trouble):
        if st.init and st.trouble() > 1:
            continue  # a finished init container must not shadow the main one in `first` merges
        seen.add(st.name)
        _container_status(ctx, loc, st, subject)
        _container_spec(ctx, loc, specs.get(st.name, {}), subject)
    for c in _containers(spec):  # containers without a status yet (not scheduled, or a manifest)
        cname = as_str(c.get("name"))
        if cname in seen:
            continue
        if cname:
            ctx.sink.add("container.name", cname, loc.at("spec", "containers", ("name", cname)), subject=subject)
        _container_spec(ctx, loc, c, subject)


def _container_status(ctx: _Ctx, loc: _Loc, st: _Status, subject: str | None) -> None:
    add, sec, cname = ctx.sink.add, st.section(), st.name
    if cname:
        add("container.name", cname, loc.at(sec, ("name", cname)), subject=subject)
    if (term := st.terminated()) is not None:
        data, where = term
        anchor: tuple[Step, ...] = (sec, ("name", cname), "state", "terminated") if where == "state" else (
            sec, "lastState", "terminated")
        if reason := as_str(data.get("reason")):
            add("container.last_terminated.reason", reason, loc.at(*anchor, ("reason", reason)), subject=subject)
        if (code := as_int(data.get("exitCode"))) is not None:
            add("container.last_terminated.exit_code", code, loc.at(*anchor, ("exitCode", code)), subject=subject)
    waiting = as_dict(st.data.get("state")).get("waiting")
    if isinstance(waiting, dict) and (reason := as_str(waiting.get("reason"))):
        add("container.waiting.reason", reason, loc.at(sec, ("name", cname), "waiting", ("reason", reason)),
            subject=subject)
        if message := as_str(waiting.get("message")):
            add("container.waiting.message", message, loc.at(sec, ("name", cname), "waiting", "message"),
                subject=subject)
            if refs := missing_refs(message):
                add("pod.missing_refs", refs, loc.at(sec, ("name", cname), "waiting", "message"), subject=subject)
    if (restarts := as_int(st.data.get("restartCount"))) is not None:
        add("container.restart_count", restarts, loc.at(sec, ("name", cname), ("restartCount", restarts)),
            subject=subject)


def _container_spec(ctx: _Ctx, loc: _Loc, c: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    # Not anchored on the container's name: sorted output puts `image` and `resources` before it, and the
    # value itself tells containers apart well enough.
    anchor: tuple[Step, ...] = ("spec", "containers")
    if image := as_str(c.get("image")):
        add("container.image", image, loc.at(*anchor, ("image", image)), subject=subject)
    resources = as_dict(c.get("resources"))
    for part, resource, fact, convert in (
        ("limits", "memory", "container.memory_limit_bytes", quantity_int),
        ("requests", "memory", "container.memory_request_bytes", quantity_int),
        ("limits", "cpu", "container.cpu_limit_millicores", quantity_milli),
    ):
        raw = as_dict(resources.get(part)).get(resource)
        if (value := convert(raw)) is not None:
            add(fact, value, loc.at(*anchor, part, (resource, raw)), subject=subject)


# ---- conditions, env, gang -----------------------------------------------------------------------------


def _pod_conditions(ctx: _Ctx, loc: _Loc, status: dict[str, Any], subject: str | None) -> None:
    add = ctx.sink.add
    for cond in map(as_dict, as_list(status.get("conditions"))):
        kind, state, reason = (as_str(cond.get(k)) for k in ("type", "status", "reason"))
        message = as_str(cond.get("message"))
        if kind == "PodScheduled" and state == "False":
            line = loc.at("conditions", ("message", message)) if message else loc.at("conditions", ("type", kind))
            add("scheduling.failed", True, line, subject=subject)
            if message:
                add("scheduling.message", message, line, subject=subject)
                if (total := nodes_total(message)) is not None:
                    add("scheduling.nodes_total", total, line, subject=subject)
                if reasons := scheduling_reasons(message):
                    add("scheduling.reasons", reasons, line, subject=subject)
        if kind == "DisruptionTarget" and state == "True" and reason.startswith("Preemption"):
            add("scheduling.preempted", True, loc.at("conditions", ("reason", reason)), subject=subject)


def _pod_env(ctx: _Ctx, loc: _Loc, spec: dict[str, Any], subject: str | None) -> None:
    for c in _containers(spec):
        env: dict[str, EnvVar] = {}
        for e in map(as_dict, as_list(c.get("env"))):
            var = as_str(e.get("name"))
            if not var:
                continue
            value = as_str(e.get("value")) if "valueFrom" not in e else None
            # Cited to the value's own line (the line after the name in JSON and YAML), where a reader sees it.
            path: tuple[Step, ...] = ("spec", "containers", "env", ("name", var))
            env[var] = EnvVar(value, loc.at(*path, ("value", value)) if value else loc.at(*path))
        if env:
            ctx.dist.pod(ctx.sink, env, bool(as_list(c.get("envFrom"))), subject)


_GROUP_KEYS = ("scheduling.k8s.io/group-name", "scheduling.x-k8s.io/pod-group", "pod-group.scheduling.sigs.k8s.io",
               "kueue.x-k8s.io/queue-name")


def _group_key(meta: dict[str, Any]) -> str:
    """The label or annotation that puts an object into a gang (PodGroup) or a Kueue queue, or ""."""
    tags = as_dict(meta.get("labels")) | as_dict(meta.get("annotations"))
    return next((k for k in _GROUP_KEYS if as_str(tags.get(k))), "")


def _pod_gang(ctx: _Ctx, loc: _Loc, d: dict[str, Any], subject: str | None) -> None:
    # A pod alone cannot show that gang scheduling is absent, only that it is present.
    if key := _group_key(as_dict(d.get("metadata"))):
        ctx.sink.add("gang.configured", True, loc.at("metadata", key), subject=subject)


# ---- Node --------------------------------------------------------------------------------------------


def _node(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    name, _, subject = _identity(d, "node")
    spec, status, meta = as_dict(d.get("spec")), as_dict(d.get("status")), as_dict(d.get("metadata"))
    add = ctx.sink.add
    name_line = loc.at("metadata", ("name", name))
    if name:
        add("node.name", name, name_line, subject=subject)
    taints = [_taint(as_dict(t)) for t in as_list(spec.get("taints"))]
    add("node.taints", unique(taints), loc.at("spec", "taints") if taints else name_line, subject=subject)
    add("node.unschedulable", spec.get("unschedulable") is True,
        loc.at("spec", "unschedulable") if "unschedulable" in spec else name_line, subject=subject)
    _node_conditions(ctx, loc, status, subject)
    labels = {k: as_str(v) for k, v in as_dict(meta.get("labels")).items() if isinstance(k, str)}
    if mode := gpu_sharing(labels):
        key = next(k for k in ("nvidia.com/gpu.sharing-strategy", "nvidia.com/mig.strategy",
                               "nvidia.com/gpu.replicas") if k in labels)
        add("node.gpu_sharing", mode, loc.at("labels", key), subject=subject)
    _node_gpus(ctx, loc, status, labels, subject or ctx.sink.artifact.subject)


def _taint(t: dict[str, Any]) -> str:
    key, value, effect = as_str(t.get("key")), as_str(t.get("value")), as_str(t.get("effect"))
    return f"{key}={value}:{effect}" if value else f"{key}:{effect}"


def _node_conditions(ctx: _Ctx, loc: _Loc, status: dict[str, Any], subject: str | None) -> None:
    rows = [as_dict(c) for c in as_list(status.get("conditions"))]
    found = [(n, as_str(c.get("type"))) for c in rows
             if (n := node_condition(as_str(c.get("type")), as_str(c.get("status"))))]
    if found:
        line = loc.at("status", "conditions", ("type", found[0][1]))
        ctx.sink.add("node.conditions", unique(n for n, _ in found), line, subject=subject)
    elif rows:
        ctx.sink.add("node.conditions", [], loc.at("status", "conditions"), subject=subject)
    for c in rows:
        if as_str(c.get("type")) == "Ready" and as_str(c.get("status")) in ("False", "Unknown"):
            text = f"{as_str(c.get('reason'))} {as_str(c.get('message'))}"
            if reasons := node_not_ready_reasons(text):
                ctx.sink.add("node.not_ready_reasons", reasons, loc.at("status", "conditions", ("type", "Ready")),
                             subject=subject)


def _node_gpus(ctx: _Ctx, loc: _Loc, status: dict[str, Any], labels: dict[str, str], subject: str) -> None:
    gpus = NodeGpus()
    for part in ("capacity", "allocatable"):
        section = status.get(part)
        if not isinstance(section, dict):
            continue
        raw = section.get(GPU_RESOURCE)
        value = quantity_int(raw) if raw is not None else (0 if has_gpu_labels(labels) else None)
        line = loc.at("status", part, (GPU_RESOURCE, raw)) if raw is not None else loc.at("status", part)
        if value is not None:
            setattr(gpus, part, value)
            setattr(gpus, f"{part}_line", line)
    gpus.emit(ctx.sink, subject)  # allocated is unknown from a Node object, so no free counts


# ---- Event -------------------------------------------------------------------------------------------


def _event(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    reason = as_str(d.get("reason"))
    message = as_str(d.get("message")) or as_str(d.get("note"))  # core/v1 or events.k8s.io/v1
    obj = as_dict(d.get("involvedObject")) or as_dict(d.get("regarding"))
    kind, name = as_str(obj.get("kind")).lower(), as_str(obj.get("name"))
    ns = as_str(obj.get("namespace")) or as_str(as_dict(d.get("metadata")).get("namespace"))

    def lines() -> tuple[int, int]:
        # Only events that yield a new fact need a line; most are repeats, so this runs rarely.
        start = loc.at(("reason", reason)) if reason else loc.item_line()
        end = loc.at("message" if "message" in d else "note") if message else start
        return min(start, end), max(start, end)

    ev = EventRecord(as_str(d.get("type")), reason, message, 0, 0, kind, name, ns, locate=lines)
    subject = None
    if name:
        subject = subject_of("node", name) if kind == "node" else subject_of(kind or "object", name, ns)
    ctx.events.feed(ev, subject)


def _event_list(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    """An EventList with no items: events were read and there are none."""
    if not d.get("items"):
        ctx.events.none_seen(loc.item_line())


# ---- ResourceQuota, jobs, NetworkPolicy, HPA -----------------------------------------------------------


def _quota(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    _, _, subject = _identity(d, "resourcequota")
    status = as_dict(d.get("status"))
    hard = as_dict(status.get("hard")) or as_dict(as_dict(d.get("spec")).get("hard"))
    used = as_dict(status.get("used"))
    at_limit: list[str] = []
    compared = False
    for resource, limit in hard.items():
        h, u = quantity(limit), quantity(used.get(resource))
        if h is None or u is None:
            continue
        compared = True
        # A zero quota forbids a resource outright; that is policy, not exhaustion.
        if h > 0 and u >= h:
            at_limit.append(str(resource))
    if not compared:
        return
    line = loc.at("status", "used", at_limit[0]) if at_limit else loc.at("status", "used")
    ctx.sink.add("quota.exceeded", bool(at_limit), line, subject=subject)
    ctx.sink.add("quota.resources_at_limit", at_limit, line, subject=subject)


def _templates(spec: dict[str, Any]) -> list[dict[str, Any]]:
    """Pod templates of a batch Job, Kubeflow job, Volcano Job or JobSet."""
    found: list[object] = [spec.get("template")]
    for key in ("pytorchReplicaSpecs", "mpiReplicaSpecs", "tfReplicaSpecs", "xgbReplicaSpecs", "paddleReplicaSpecs"):
        found += [as_dict(rs).get("template") for rs in as_dict(spec.get(key)).values()]
    found += [as_dict(task).get("template") for task in as_list(spec.get("tasks"))]  # Volcano
    found += [as_dict(as_dict(as_dict(rj).get("template")).get("spec")).get("template")
              for rj in as_list(spec.get("replicatedJobs"))]  # JobSet
    return [t for t in found if isinstance(t, dict)]


def _job(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    kind = as_str(d.get("kind"))
    _, _, subject = _identity(d, kind or "job")
    spec = as_dict(d.get("spec"))
    policy = as_dict(as_dict(spec.get("runPolicy")).get("schedulingPolicy")) or as_dict(spec.get("schedulingPolicy"))
    minimum, min_key = _min_members(spec, policy)
    evidence = _gang_evidence(kind, d, spec, policy, min_key)
    line = loc.at("spec", evidence) if evidence in ("minMember", "minAvailable", "schedulingPolicy",
                                                     "schedulerName") else loc.at(evidence or "name")
    ctx.sink.add("gang.configured", bool(evidence), line, subject=subject)
    if minimum is not None:
        ctx.sink.add("gang.min_available", minimum, loc.at("spec", min_key), subject=subject)


def _min_members(spec: dict[str, Any], policy: dict[str, Any]) -> tuple[int | None, str]:
    """PodGroup minMember, Volcano Job minAvailable, or a Kubeflow schedulingPolicy minAvailable."""
    for source, key in ((spec, "minMember"), (spec, "minAvailable"), (policy, "minAvailable")):
        if (value := as_int(source.get(key))) is not None:
            return value, key
    return None, ""


def _gang_evidence(kind: str, d: dict[str, Any], spec: dict[str, Any], policy: dict[str, Any], min_key: str) -> str:
    """The key that shows gang scheduling, or "" when the spec has none."""
    if min_key:
        return min_key
    if policy:
        return "schedulingPolicy"
    if kind in ("PodGroup", "Workload"):
        return "kind"
    if key := _group_key(as_dict(d.get("metadata"))):
        return key
    for template in _templates(spec):
        if as_str(as_dict(template.get("spec")).get("schedulerName")) == "volcano":
            return "schedulerName"
        if key := _group_key(as_dict(template.get("metadata"))):
            return key
    return ""


def _netpol(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    spec = as_dict(d.get("spec"))
    types = [as_str(t) for t in as_list(spec.get("policyTypes"))]
    if not types:
        types = ["Ingress"] + (["Egress"] if "egress" in spec else [])
    # A direction is restricted unless one of its rules is empty (`{}` allows everything).
    restricts = any(not any(rule == {} for rule in as_list(spec.get(t.lower()))) for t in types)
    ctx.netpols.append((restricts, loc.at("metadata", "name")))


def _netpol_list(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    if not d.get("items"):
        ctx.netpol_list_line = loc.item_line()


def _netpol_totals(ctx: _Ctx) -> None:
    if ctx.netpols:
        lines = [n for _, n in ctx.netpols]
        ctx.sink.add("netpol.count", len(ctx.netpols), min(lines), max(lines))
        restricting = [n for r, n in ctx.netpols if r]
        ctx.sink.add("netpol.restricts_pods", bool(restricting), restricting[0] if restricting else lines[0])
    elif ctx.netpol_list_line:
        ctx.sink.add("netpol.count", 0, ctx.netpol_list_line)


def _hpa(ctx: _Ctx, d: dict[str, Any], loc: _Loc) -> None:
    _, _, subject = _identity(d, "horizontalpodautoscaler")
    spec, status = as_dict(d.get("spec")), as_dict(d.get("status"))
    maximum = as_int(spec.get("maxReplicas"))
    if maximum is None:
        return
    max_line = loc.at("spec", "maxReplicas")
    ctx.sink.add("hpa.max_replicas", maximum, max_line, subject=subject)
    current = as_int(status.get("currentReplicas"))
    if current is not None and current >= maximum:
        ctx.sink.add("hpa.at_max", True, loc.at("status", "currentReplicas"), subject=subject)
    elif _scaling_limited(d):
        ctx.sink.add("hpa.at_max", True, loc.at("conditions", ("type", "ScalingLimited")), subject=subject)
    elif current is not None:
        ctx.sink.add("hpa.at_max", False, loc.at("status", "currentReplicas"), subject=subject)


def _scaling_limited(d: dict[str, Any]) -> bool:
    """ScalingLimited=True because of the maximum (v2 conditions, or the v1 conditions annotation)."""
    conditions = as_list(as_dict(d.get("status")).get("conditions"))
    annotation = as_str(as_dict(as_dict(d.get("metadata")).get("annotations")).get(
        "autoscaling.alpha.kubernetes.io/conditions"))
    if annotation:
        with contextlib.suppress(ValueError, RecursionError):
            conditions = conditions + as_list(json.loads(annotation))
    return any(as_str(c.get("type")) == "ScalingLimited" and as_str(c.get("status")) == "True"
               and as_str(c.get("reason")) != "TooFewReplicas" for c in map(as_dict, conditions))


Handler = Callable[[_Ctx, dict[str, Any], _Loc], None]

_HANDLERS: dict[str, Handler] = {
    "Pod": _pod,
    "Node": _node,
    "Event": _event,
    "EventList": _event_list,
    "ResourceQuota": _quota,
    "Job": _job,
    "PyTorchJob": _job,
    "MPIJob": _job,
    "TFJob": _job,
    "JobSet": _job,
    "PodGroup": _job,
    "Workload": _job,
    "NetworkPolicy": _netpol,
    "NetworkPolicyList": _netpol_list,
    "HorizontalPodAutoscaler": _hpa,
    "Service": lambda ctx, d, loc: k8s_services.service(ctx.sink, d, loc.at),
    "Endpoints": lambda ctx, d, loc: k8s_services.endpoints(ctx.sink, d, loc.at),
    "EndpointSlice": lambda ctx, d, loc: k8s_services.endpoint_slice(ctx.sink, d, loc.at),
    "PersistentVolumeClaim": lambda ctx, d, loc: k8s_services.claim(ctx.sink, d, loc.at),
}


PARSER = Parser(kinds=(ArtifactKind.K8S_OBJECT, ArtifactKind.POD, ArtifactKind.NODE), parse=parse, sniff=sniff)
