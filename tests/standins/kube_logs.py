"""Pod logs (`pods/log`) and node logs (`nodes/proxy/logs/`), with the API server's and the kubelet's rules.

Pod logs follow the API server's LogLocation (which container, validation) and the kubelet's container-status
checks (waiting, previous). Node logs follow the kubelet's /logs/ handler: with the NodeLogQuery feature gate on,
`?query=` reads journald services (or files by heuristics) with sinceTime/untilTime/tailLines/pattern; with it off,
/logs/ is a plain file server over /var/log, so a query answers with the directory listing, HTML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from tests.standins.kube_errors import bad_request, invalid, kubelet_text

PodLogs = Mapping[tuple[str, str, str], str]
NodeLogs = Mapping[tuple[str, str], str | bytes]  # bytes: a binary file under /var/log

_TRUE = {"1", "t", "T", "TRUE", "true", "True"}
_FALSE = {"0", "f", "F", "FALSE", "false", "False"}
_ISO_TS = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:?\d{2})?")
_JOURNAL_TS = re.compile(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d{2}):(\d{2}):(\d{2})(\.\d+)?")
_MONTHS = {m: i for i, m in enumerate(
    ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1)}


# --- shared helpers -------------------------------------------------------------------------------------------------


def parse_time(value: str) -> datetime | None:
    """RFC 3339 as Go's time.Parse(time.RFC3339, ...) accepts it (fractional seconds allowed)."""
    m = _ISO_TS.match(value)
    if not m or m.end() != len(value) or m.group(4) is None or "T" not in value:
        return None
    return _iso_match_time(m)


def _iso_match_time(m: re.Match[str]) -> datetime:
    frac = (m.group(3) or "")[:7]  # Python keeps microseconds
    zone = m.group(4) or "Z"
    zone = "+00:00" if zone == "Z" else (zone if ":" in zone else f"{zone[:3]}:{zone[3:]}")
    return datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}{frac}{zone}").astimezone(UTC)


def line_time(line: str, year: int) -> datetime | None:
    """The time a log line carries at its start, if any (ISO 8601 or journalctl's short-precise)."""
    m = _ISO_TS.match(line)
    if m:
        return _iso_match_time(m)
    j = _JOURNAL_TS.match(line)
    if j and j.group(1) in _MONTHS:
        micro = int(((j.group(6) or ".0")[1:] + "000000")[:6])
        return datetime(year, _MONTHS[j.group(1)], int(j.group(2)), int(j.group(3)), int(j.group(4)),
                        int(j.group(5)), micro, tzinfo=UTC)
    return None


def rfc3339_nano(ts: datetime) -> str:
    """Go's time.RFC3339Nano: fractional seconds without trailing zeros."""
    base = ts.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S")
    frac = f"{ts.microsecond:06d}000".rstrip("0")
    return f"{base}.{frac}Z" if frac else f"{base}Z"


def _timed_lines(text: str, start: datetime) -> list[tuple[datetime, str]]:
    """Each line with the time it was written: its own leading timestamp, else the previous line's."""
    out: list[tuple[datetime, str]] = []
    current = start
    for line in text.splitlines(keepends=True):
        current = line_time(line, current.year) or current
        out.append((current, line))
    return out


# --- pod logs -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PodLogOptions:
    container: str = ""
    previous: bool = False
    timestamps: bool = False
    tail_lines: int | None = None
    limit_bytes: int | None = None
    since_seconds: int | None = None
    since_time: datetime | None = None


def _bool_param(query: Mapping[str, str], name: str) -> bool:
    value = query.get(name, "false")
    if value in _TRUE:
        return True
    if value in _FALSE or value == "":
        return False
    raise bad_request(f'strconv.ParseBool: parsing "{value}": invalid syntax')


def _int_param(query: Mapping[str, str], name: str) -> int | None:
    value = query.get(name)
    if value is None or value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise bad_request(f'strconv.ParseInt: parsing "{value}": invalid syntax') from None


def parse_pod_log_options(query: Mapping[str, str], pod_name: str) -> PodLogOptions:
    since_time = None
    if query.get("sinceTime"):
        since_time = parse_time(query["sinceTime"])
        if since_time is None:
            raise bad_request(f'parsing time "{query["sinceTime"]}" as "2006-01-02T15:04:05Z07:00": cannot parse')
    opts = PodLogOptions(
        container=query.get("container", ""), previous=_bool_param(query, "previous"),
        timestamps=_bool_param(query, "timestamps"), tail_lines=_int_param(query, "tailLines"),
        limit_bytes=_int_param(query, "limitBytes"), since_seconds=_int_param(query, "sinceSeconds"),
        since_time=since_time)
    _validate_pod_log_options(opts, pod_name)
    return opts


def _validate_pod_log_options(opts: PodLogOptions, pod_name: str) -> None:
    """ValidatePodLogOptions: 422 Invalid with one cause per bad field."""
    causes: list[tuple[str, str]] = []
    if opts.tail_lines is not None and opts.tail_lines < 0:
        causes.append(("tailLines", f"Invalid value: {opts.tail_lines}: must be greater than or equal to 0"))
    if opts.limit_bytes is not None and opts.limit_bytes < 1:
        causes.append(("limitBytes", f"Invalid value: {opts.limit_bytes}: must be greater than 0"))
    if opts.since_seconds is not None and opts.since_time is not None:
        causes.append(("", "Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified"))
    if opts.since_seconds is not None and opts.since_seconds < 1:
        causes.append(("sinceSeconds", f"Invalid value: {opts.since_seconds}: must be greater than 0"))
    if causes:
        raise invalid("PodLogOptions", pod_name, causes)


def _names(containers: Any) -> list[str]:
    return [str(c.get("name", "")) for c in containers or [] if isinstance(c, dict)]


def resolve_container(pod: Mapping[str, Any], requested: str) -> str:
    """The API server's choice of container, with its exact 400 messages."""
    name = pod["metadata"]["name"]
    spec = pod.get("spec") or {}
    containers, inits = _names(spec.get("containers")), _names(spec.get("initContainers"))
    if not requested:
        if len(containers) == 1:
            return containers[0]
        if not containers:
            raise bad_request(f"a container name must be specified for pod {name}")
        message = f"a container name must be specified for pod {name}, choose one of: [{' '.join(containers)}]"
        if inits:
            message += f" or one of the init containers: [{' '.join(inits)}]"
        raise bad_request(message)
    if requested not in containers + inits + _names(spec.get("ephemeralContainers")):
        raise bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def _container_status(pod: Mapping[str, Any], container: str) -> dict[str, Any] | None:
    status = pod.get("status") or {}
    for key in ("containerStatuses", "initContainerStatuses", "ephemeralContainerStatuses"):
        for cs in status.get(key) or []:
            if isinstance(cs, dict) and cs.get("name") == container:
                return cs
    return None


def _kubelet_container_check(pod: Mapping[str, Any], container: str, previous: bool) -> None:
    """The kubelet's validateContainerLogStatus, for a container with no recorded log text."""
    pod_name = pod["metadata"]["name"]
    cs = _container_status(pod, container)
    if cs is None:
        raise bad_request(f'container "{container}" in pod "{pod_name}" is not available')
    state, last = cs.get("state") or {}, cs.get("lastState") or {}
    last_terminated = last.get("terminated") or {}
    if previous:
        if not last_terminated.get("containerID"):
            raise bad_request(f'previous terminated container "{container}" in pod "{pod_name}" not found')
        return
    if "running" in state:
        return
    terminated = state.get("terminated")
    if terminated is not None or last_terminated:
        if (terminated or {}).get("containerID") or last_terminated.get("containerID"):
            return
        raise bad_request(f'container "{container}" in pod "{pod_name}" is terminated')
    waiting = state.get("waiting")
    if waiting is not None:
        reason = str(waiting.get("reason", ""))
        why = {"ErrImagePull": "image can't be pulled",
               "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
        raise bad_request(f'container "{container}" in pod "{pod_name}" is waiting to start: {why}')
    raise bad_request(f'container "{container}" in pod "{pod_name}" is waiting to start - no logs yet')


def _log_start(pod: Mapping[str, Any], container: str, previous: bool) -> datetime:
    cs = _container_status(pod, container) or {}
    state = (cs.get("lastState") if previous else cs.get("state")) or {}
    for sub in ("running", "terminated"):
        started = (state.get(sub) or {}).get("startedAt")
        if isinstance(started, str) and (ts := parse_time(started)):
            return ts
    created = parse_time(str(pod["metadata"].get("creationTimestamp", "")))
    return created or datetime.now(UTC)


def pod_log(pod: Mapping[str, Any], opts: PodLogOptions, logs: PodLogs, now: datetime) -> bytes:
    container = resolve_container(pod, opts.container)
    if not (pod.get("spec") or {}).get("nodeName"):
        return b""  # not scheduled: the API server has no kubelet to ask and answers with nothing
    meta = pod["metadata"]
    ns, name = meta["namespace"], meta["name"]
    suffix = ":previous" if opts.previous else ""
    text = logs.get((ns, name, container + suffix), logs.get((ns, name, suffix)))
    if text is None:
        _kubelet_container_check(pod, container, opts.previous)
        return b""
    lines = _timed_lines(text, _log_start(pod, container, opts.previous))
    return _apply_pod_log_options(lines, opts, now)


def _apply_pod_log_options(lines: list[tuple[datetime, str]], opts: PodLogOptions, now: datetime) -> bytes:
    # The kubelet seeks to the tail first, then filters by time while reading forward, then caps bytes.
    if opts.tail_lines is not None:
        lines = lines[max(0, len(lines) - opts.tail_lines):]
    since = opts.since_time
    if opts.since_seconds is not None:
        since = now - timedelta(seconds=opts.since_seconds)
    if since is not None:
        lines = [(t, line) for t, line in lines if t >= since]
    out = "".join(f"{rfc3339_nano(t)} {line}" if opts.timestamps else line for t, line in lines).encode()
    return out[: opts.limit_bytes] if opts.limit_bytes is not None else out


# --- node logs ------------------------------------------------------------------------------------------------------

_SERVICE_UNSAFE = re.compile(r"[^a-zA-Z\-_0-9@]+")
_MAX_TAIL = 100000
_STANDARD_DIRS = ("containers/", "journal/", "pods/")


@dataclass
class NodeLogQuery:
    services: list[str]
    files: list[str]
    since: datetime | None = None
    until: datetime | None = None
    tail_lines: int | None = None
    boot: int | None = None
    pattern: str = ""

    @property
    def has_options(self) -> bool:
        return any(v is not None for v in (self.since, self.until, self.tail_lines, self.boot)) or bool(self.pattern)


def _field_invalid(path: str, value: object, why: str) -> str:
    shown = f'"{value}"' if isinstance(value, str) else (
        "[]string{" + ", ".join(f'"{v}"' for v in value) + "}" if isinstance(value, list) else str(value))
    return f"{path}: Invalid value: {shown}: {why}"


def _aggregate(errors: Sequence[str]) -> str:
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def _parse_node_log_query(query: Mapping[str, Sequence[str]]) -> tuple[NodeLogQuery | None, list[str]]:
    """newNodeLogQuery: None when no log-query parameter is present at all."""
    errors: list[str] = []
    nlq = NodeLogQuery(services=[], files=[])
    queries = list(query.get("query", []))
    for q in queries:
        if "/" in q or "\\" in q:
            nlq.files.append(q)
        elif q.strip():
            nlq.services.append(q)
    if "query" in query and not nlq.files and not nlq.services:
        errors.append(_field_invalid("query", queries, "query cannot be empty"))
    for key in ("sinceTime", "untilTime"):
        raw = _first(query, key)
        if raw:
            parsed = parse_time(raw)
            if parsed is None:
                errors.append(_field_invalid(key, raw, "invalid time format"))
            elif key == "sinceTime":
                nlq.since = parsed
            else:
                nlq.until = parsed
    for key in ("boot", "tailLines"):
        raw = _first(query, key)
        if raw:
            try:
                setattr(nlq, "boot" if key == "boot" else "tail_lines", int(raw))
            except ValueError:
                errors.append(_field_invalid(key, raw, f'strconv.Atoi: parsing "{raw}": invalid syntax'))
    nlq.pattern = _first(query, "pattern")
    if errors:
        return None, errors
    if not nlq.services and not nlq.files and not nlq.has_options:
        return None, []
    return nlq, []


def _first(query: Mapping[str, Sequence[str]], key: str) -> str:
    values = query.get(key) or [""]
    return values[0]


def _validate_node_log_query(nlq: NodeLogQuery, node_files: set[str]) -> list[str]:
    errors: list[str] = []
    for s in nlq.services:
        if len(s) > 256:
            errors.append(_field_invalid("query", s, "length must be less than 100"))
        elif _SERVICE_UNSAFE.search(s):
            errors.append(_field_invalid("query", s, "input contains unsupported characters"))
    if len(nlq.services) > 4:
        errors.append(f"query: Too many: {len(nlq.services)}: must have at most 4 items")
    if not nlq.files and not nlq.services:
        errors.append("query: Required value: cannot be empty with options")
    elif nlq.files and nlq.services:
        errors.append(_field_invalid("query", f"{nlq.files}, {nlq.services}", "cannot specify a file and service"))
    elif len(nlq.files) > 1:
        errors.append(_field_invalid("query", nlq.files, "cannot specify more than one file"))
    elif nlq.files and nlq.has_options:
        errors.append(_field_invalid("query", nlq.files, "cannot specify file with options"))
    elif nlq.files and nlq.files[0].strip("/") not in node_files:
        errors.append(_field_invalid("query", nlq.files,
                                     f"stat /var/log/{nlq.files[0].lstrip('/')}: no such file or directory"))
    errors.extend(_validate_node_log_options(nlq))
    return errors


def _validate_node_log_options(nlq: NodeLogQuery) -> list[str]:
    errors: list[str] = []
    if nlq.since and nlq.until and nlq.since > nlq.until:
        errors.append(_field_invalid("untilTime", rfc3339_nano(nlq.until), "must be after `sinceTime`"))
    if nlq.boot is not None and nlq.boot > 0:
        errors.append(_field_invalid("boot", nlq.boot, "must be less than 1"))
    if nlq.tail_lines is not None and not 0 <= nlq.tail_lines <= _MAX_TAIL:
        errors.append(_field_invalid("tailLines", nlq.tail_lines, f"must be between 0 and {_MAX_TAIL}, inclusive"))
    try:
        re.compile(nlq.pattern)
    except re.error as exc:
        errors.append(_field_invalid("pattern", nlq.pattern, f"error parsing regexp: {exc}"))
    return errors


@dataclass(frozen=True)
class NodeLogResponse:
    body: bytes
    content_type: str


def node_log(node: str, subpath: str, query: Mapping[str, Sequence[str]], logs: NodeLogs, gate: bool,
             now: datetime) -> NodeLogResponse:
    """What GET /api/v1/nodes/{node}/proxy/{subpath} returns for the kubelet's /logs handler."""
    if not subpath.startswith("logs/"):
        raise kubelet_text(404, "404 page not found")  # "/logs" misses StripPrefix("/logs/"); other paths unmodelled
    rel = subpath[len("logs/"):]
    entries = {key: text for (n, key), text in logs.items() if n == node}
    files = {k for k in entries if _is_file(k)}
    if gate:
        nlq, errors = _parse_node_log_query(query)
        if errors:
            raise kubelet_text(400, _aggregate(errors))
        if nlq is not None:
            if rel:
                raise kubelet_text(406, "path not allowed in query mode")
            errors = _validate_node_log_query(nlq, files)
            if errors:
                raise kubelet_text(406, _aggregate(errors))
            if nlq.services:
                return NodeLogResponse(_journal(nlq, entries, files, now), "text/plain;charset=UTF-8")
            rel = nlq.files[0].lstrip("/")
    return _file_server(rel, entries, files)


def _is_file(key: str) -> bool:
    return "." in key or "/" in key


def _text(data: str | bytes) -> str:
    return data if isinstance(data, str) else data.decode("utf-8", "replace")


def _file_server(rel: str, entries: Mapping[str, str | bytes], files: set[str]) -> NodeLogResponse:
    """http.FileServer over /var/log: a directory listing for "" (query parameters ignored), else the file, typed
    the way Go's DetectContentType types it (text, or application/octet-stream for binary data)."""
    if rel == "" or rel.endswith("/"):
        return NodeLogResponse(_dir_listing(rel, files), "text/html; charset=utf-8")
    if rel in files:
        data = entries[rel]
        if isinstance(data, bytes):
            return NodeLogResponse(data, "application/octet-stream")
        return NodeLogResponse(data.encode(), "text/plain; charset=utf-8")
    raise kubelet_text(404, "404 page not found")


def _dir_listing(rel: str, files: set[str]) -> bytes:
    names = set(_STANDARD_DIRS) if rel == "" else set()
    for f in files:
        if f.startswith(rel):
            head, sep, _ = f[len(rel):].partition("/")
            names.add(head + sep)
    rows = "".join(f'<a href="{n}">{n}</a>\n' for n in sorted(names))
    return f'<!doctype html>\n<meta name="viewport" content="width=device-width">\n<pre>\n{rows}</pre>\n'.encode()


def _journal(nlq: NodeLogQuery, entries: Mapping[str, str | bytes], files: set[str], now: datetime) -> bytes:
    """journalctl -u ... for services journald knows; the file heuristics otherwise, as the kubelet does."""
    native = [s for s in nlq.services if s in entries and not _is_file(s)]
    by_file = [s for s in nlq.services if s not in native]
    out = ""
    if native:
        out += _journal_output(nlq, [_text(entries[s]) for s in native], now)
    if by_file and nlq.has_options:
        return (out + f"\noptions present and query resolved to log files for [{' '.join(by_file)}]\n"
                "try without specifying options\n").encode()
    for service in by_file:
        found = next((f for f in (service, f"{service}.log", f"{service}/{service}.log") if f in files), None)
        out += _text(entries[found]) if found else f"\nlog not found for {service}\n"
    return out.encode()


def _journal_output(nlq: NodeLogQuery, texts: list[str], now: datetime) -> str:
    year = (nlq.since or nlq.until or now).year
    lines = [tl for text in texts for tl in _timed_lines(text, datetime(year, 1, 1, tzinfo=UTC))]
    if nlq.since:
        lines = [(t, line) for t, line in lines if t >= nlq.since]
    if nlq.until:
        lines = [(t, line) for t, line in lines if t <= nlq.until]
    if nlq.pattern:
        # journalctl --grep is case-insensitive when the pattern has no upper-case letter.
        rx = re.compile(nlq.pattern, 0 if any(c.isupper() for c in nlq.pattern) else re.IGNORECASE)
        lines = [(t, line) for t, line in lines if rx.search(line)]
    if nlq.tail_lines is not None:
        lines = lines[max(0, len(lines) - nlq.tail_lines):]
    if not lines:
        return "-- No entries --\n"
    return "".join(line for _, line in lines)
