"""Access logs of ingress-nginx, Envoy, Istio, Higress, Traefik, HAProxy, cloud load balancers, nginx: who failed, how.

Each line is read with the formats in collectors/catalogs/access_logs.yaml into a status, the upstream (the
service-level target: an ingress upstream, an Envoy cluster, a HAProxy backend, a target group; the route or
path when the format names none), the backend address that answered, and what the proxy says about the failure.
From those: the share of requests answered 5xx, per upstream too; which 5xx statuses; and how the failures
failed, in one vocabulary across proxies:

  no-upstream         the proxy had nowhere to send the request: no ready endpoint or healthy host (ingress-nginx
                      5xx with no upstream address, Envoy UH/NC, HAProxy <NOSRV>, a load balancer with no target)
  connection-failure  it reached for a backend but could not connect, or lost the connection before the answer
                      (Envoy UF/URX/UC/UR/LR, HAProxy S-C/S-H/S-D, a 502 nginx made itself, an ALB 502 with no
                      target status)
  timeout             the backend did not answer in time (Envoy UT, HAProxy server-side timeouts, 504s)
  overflow            the proxy shed the request: a circuit breaker or a full queue (Envoy UO, HAProxy sQ)
  app-error           the backend itself answered 5xx
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Any

import re2

from collectors.catalogs.access_log_formats import CompiledFormat, json_formats, text_formats
from collectors.catalogs.status_fields import catalog as status_catalog
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.metrics.metric_http import CLEAN_SHARE, FAILING_SHARE
from collectors.parsers.sink import FactSink
from collectors.text import normalise

_MAX_LINE = 4096  # longer lines are never handed to a pattern (docs/evidence.md, "Bounded time")
_SNIFF_LINES = 200
_MAX_JSON_LINE = 65_536
# Google Cloud's statusDetails: who answered and why (the load balancer's logging reference).
_GCP_DETAILS = {
    "failed_to_pick_backend": "no-upstream", "failed_to_connect_to_backend": "connection-failure",
    "backend_connection_closed_before_data_sent_to_client": "connection-failure",
    "backend_connection_closed_after_partial_response_sent": "connection-failure",
    "backend_timeout": "timeout", "response_sent_by_backend": "app-error",
}
# At most this many lines are read per artifact; a longer log is read as an even sample across it (every k-th
# line), so the shares stay fair and `analyze` of any input stays within its time budget.
MAX_READ = 5_000
_NO_BACKEND = {"", "-", "<NOSRV>"}
def _envoy_kinds(flags: str) -> list[str]:
    """How Envoy's RESPONSE_FLAGS ("UF,URX") say the proxy failed, by the one map both readers use
    (collectors/catalogs/status_fields.yaml `envoy_flags`)."""
    known = status_catalog().envoy_flags
    return [known[f].kind for f in flags.split(",") if f in known and known[f].kind]


@dataclass(frozen=True)
class Request:
    line: int
    status: int
    upstream: str
    backend: str
    kind: str  # "" when the line does not say how a 5xx failed
    tcp: bool = False  # a TCP proxy's session: no HTTP status, only how it ended


def sniff(text: str) -> int:
    """0-100: the share of the first lines that read as requests of a catalogued format."""
    lines = [ln for ln in normalise(text[:100_000]).split("\n")[:_SNIFF_LINES] if ln.strip()]
    if not lines:
        return 0
    reader = _Reader()
    read, n = 0, 1
    while n <= len(lines):
        request, used = _read_wrapped(reader, lines, n)
        read += used if request is not None else 0
        n += used
    if not read and text.lstrip()[:1] in ("{", "["):
        return 90 if _from_document(text[:2_000_000]) else 0
    return min(round(95 * read / len(lines)), 95) if read else 0


def read_line(line: str, n: int) -> Request | None:
    return _Reader().read(line, n)


class _Reader:
    """Reads lines one by one, trying first the format that read the line before (a log keeps one format)."""

    def __init__(self) -> None:
        self.last = 0

    def read(self, line: str, n: int) -> Request | None:
        if '"' not in line and "] " not in line and "'http_status:" not in line and not line.rstrip().endswith("ms"):
            # every catalogued format quotes the request line, but HAProxy's TCP log (its date), timing-asgi's tags
            # and Tornado's line (its time in ms last)
            return None
        if line.lstrip().startswith("{"):
            return _from_json_line(line, n)
        if len(line) > _MAX_LINE:
            return None
        found = self._read(line, n)
        if found is None and (retyped := _retyped(line)) != line:
            found = self._read(retyped, n)
        return found

    def _read(self, line: str, n: int) -> Request | None:
        data = line.encode("utf-8", "replace")
        specs = text_formats()
        for i in (self.last, *(j for j in range(len(specs)) if j != self.last)):
            m = specs[i].regex.search(data)
            if m is None:
                continue
            self.last = i
            return _request(specs[i], m, n)
        return None


def _request(spec: CompiledFormat, m: Any, n: int) -> Request | None:
    groups = {k: v.decode("utf-8", "replace") for k, v in zip(spec.names, m.groups(), strict=True)
              if k and v is not None}
    family = spec.spec.family
    status = groups.get("status", "0" if family == "haproxy-tcp" else "")
    if not status.isdigit():
        return None
    # Envoy prints "-" for a cluster it never chose (no route): the route or path names the target then.
    upstream = groups["upstream"] if groups.get("upstream", "-") != "-" else _route(groups)
    # Envoy logs a TCP proxy's session ("- - -") and a request it never answered with status 0: only its
    # response flags say whether the proxy failed it (UH, UF, ...), as HAProxy's termination state does.
    tcp = family == "haproxy-tcp" or (family == "envoy" and status == "0")
    return Request(n, int(status), upstream, groups.get("backend", ""), _kind(family, int(status), groups), tcp=tcp)


def read_app_server_lines(sink: FactSink, lines: list[str]) -> None:
    """The request lines an application server writes into its own log (uvicorn's, in a vLLM, SGLang or FastAPI
    log), read among the log's other lines as an access log's are: the application answered, so each 5xx is its
    own error. The proxies' formats are not tried here: their lines in an application's log are not its requests.
    A handful of lines that all failed is an excerpt of the failures: one line is evidence of an error, not of a
    rate, so no share is given for it."""
    specs = [f for f in text_formats() if f.spec.family == "app"]
    requests: list[Request] = []
    for n, line in enumerate(lines, 1):
        if len(line) > _MAX_LINE or (" HTTP/" not in line and "'http_status:" not in line
                                     and not line.rstrip().endswith("ms")):
            continue  # uvicorn's and Werkzeug's request line, timing-asgi's tags, Tornado's time last
        data = line.encode("utf-8", "replace")
        found = next((r for f in specs if (m := f.regex.search(data)) is not None
                      and (r := _request(f, m, n)) is not None), None)
        if found is not None:
            requests.append(found)
            if len(requests) >= MAX_READ:
                break
    if requests:
        _facts(sink, requests, sample=True)


# Typographic quotes a web page or an editor put in place of the log's own, and runs of spaces a paste widened: a
# line no format reads is tried once more with them undone (a line that reads as printed is never changed).
_TYPOGRAPHIC = str.maketrans({"\u201c": '"', "\u201d": '"', "\u201e": '"', "\u2033": '"'})
_SPACES = re2.compile(r" {2,}")


def _retyped(line: str) -> str:
    return str(_SPACES.sub(" ", line.translate(_TYPOGRAPHIC)))


# The start of a request line in the text formats: nginx's and ingress-nginx's "$remote_addr - $remote_user
# [$time_local]", HAProxy's syslog header, Envoy's "[%START_TIME%] \"". A line that starts so but does not read was
# cut by the terminal or the page it was copied from; its continuation follows on the next lines, joined back.
_ENTRY_START = re2.compile(r'^(?:\S+ - \S+ \[\d|.*\bhaproxy\[\d+\]: |\[\d{4}-\d\d-\d\dT)')
_MAX_PIECES = 4


def _read_wrapped(reader: _Reader, lines: list[str], n: int) -> tuple[Request | None, int]:
    """The request on line n, or on line n joined with the next lines when a terminal wrapped it, with the
    number of lines it took."""
    line = lines[n - 1]
    if (request := reader.read(line, n)) is not None or _ENTRY_START.search(line[:_MAX_LINE]) is None:
        return request, 1
    joined = line
    for pieces, nxt in enumerate(lines[n:n + _MAX_PIECES - 1], 2):
        if not nxt.strip() or _ENTRY_START.search(nxt[:_MAX_LINE]) is not None:
            break  # a blank line or the next entry: this one was not wrapped
        if len(joined) + len(nxt) >= _MAX_LINE:
            break
        # A terminal breaks at its width and loses nothing; but a space it broke at ends the line and is trimmed
        # with the trailing blanks of the paste, so the join is tried both ways.
        for candidate in (joined + nxt, f"{joined} {nxt}"):
            if (request := reader.read(candidate, n)) is not None:
                return request, pieces
        joined += nxt
    return None, 1


def _from_json_line(line: str, n: int) -> Request | None:
    if len(line) > _MAX_JSON_LINE:
        return None
    with contextlib.suppress(ValueError, RecursionError):
        return _from_json(json.loads(line), n)
    return None


def _from_document(text: str) -> list[Request]:
    """A whole JSON document: one entry or a list of them (a log viewer's export, one pretty-printed entry)."""
    for candidate in (text, _closed(text)):
        with contextlib.suppress(ValueError, RecursionError):
            doc = json.loads(candidate)
            entries = doc if isinstance(doc, list) else [doc]
            return [r for e in entries if (r := _from_json(e, 1)) is not None]
    return []


def _closed(text: str) -> str:
    """A pretty-printed entry cut off before its end (a paste trimmed mid-object), closed after its last whole
    member: the keys it still shows are read; a cut inside a nested value stays unreadable."""
    body = text.rstrip()
    if not body.startswith("{") or body.endswith("}"):
        return ""
    cut = body.rfind(",\n")
    return body[:cut] + "\n}" if cut > 0 else ""


def _path(obj: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        obj = _key(obj, key) if isinstance(obj, dict) else None
    return obj


_KEY_SEPARATORS = ("_", "-", ".", ":")


def _key(obj: dict[str, Any], key: str) -> Any:
    """obj[key], else the one key that is `key` behind a prefix of the operator's own.

    A custom access-log format keeps the upstream operator but often names its keys with a prefix (an Istio
    accessLogFormat of "iproxy_response_code": "%RESPONSE_CODE%"); only a single such key counts.
    """
    if key in obj:
        return obj[key]
    found = [k for k in obj if isinstance(k, str) and len(k) > len(key) + 1 and k.endswith(key)
             and k[-len(key) - 1] in _KEY_SEPARATORS]
    return obj[found[0]] if len(found) == 1 else None


def _from_json(obj: Any, n: int) -> Request | None:
    if not isinstance(obj, dict):
        return None
    # The format whose keys the entry shows most of: formats share key names (a status key alone says little).
    best: tuple[int, Any, dict[str, str]] | None = None
    for fmt in json_formats():
        fields = {k: _path(obj, p) for k, p in fmt.spec.fields.items()}
        said = str(fields.get("status") if fields.get("status") is not None else "")
        if not said.isdigit():
            continue
        found = {k: str(v) for k, v in fields.items() if v is not None and not isinstance(v, dict | list)}
        if best is None or len(found) > best[0]:
            best = (len(found), fmt, found)
    if best is None:
        return None
    _, fmt, groups = best
    status, family = int(groups["status"]), fmt.spec.family
    upstream = groups.get("upstream") or _route(groups)
    kind = (_GCP_DETAILS.get(groups.get("flags", ""), "") if 500 <= status <= 599 else "") \
        if family == "gcp-lb" else _kind(family, status, groups)
    return Request(n, status, upstream, groups.get("backend", ""), kind)


def _route(groups: dict[str, str]) -> str:
    """The route, or the request's path without its query, for formats that name no upstream."""
    route = groups.get("route", "")
    if route and route not in ("-", "default"):
        return route
    if path := groups.get("path", ""):
        return path.split("?", 1)[0]
    parts = groups.get("request", "").split()
    return parts[1].split("?", 1)[0] if len(parts) >= 2 else ""


def _last(value: str) -> str:
    """The last of nginx's retried values ("10.0.0.1:80, 10.0.0.2:80 : 10.0.0.3:80"): the one that answered."""
    return value.replace(" : ", ", ").split(", ")[-1].strip()


def _kind(family: str, status: int, g: dict[str, str]) -> str:
    if family == "haproxy-tcp":
        return _tcp_kind(g)
    if family == "envoy" and (status == 0 or (status < 500 and "NR" in g.get("flags", "-").split(","))):
        # Envoy answers a request it has no route for with 404 (NR) by default: the proxy failed it, whatever the
        # status, as it failed a TCP session it logged with status 0.
        return next(iter(_envoy_kinds(g.get("flags", "-"))), "")
    if not 500 <= status <= 599:
        return ""
    if family == "app":
        return "app-error"  # the application server's own line: nobody stood between it and the client
    backend, answered = _last(g.get("backend", "")), _last(g.get("upstream_status", ""))
    if family == "envoy":
        known = _envoy_kinds(g.get("flags", "-"))
        if known:
            return known[0]
        return "app-error" if backend not in _NO_BACKEND else ""
    if family == "haproxy":
        flags = g.get("flags", "----")
        if backend == "<NOSRV>":
            return "no-upstream"
        if flags[:2] == "sQ":
            return "overflow"
        if flags[:1] == "s":
            return "timeout"
        if flags[:1] == "S":
            return "connection-failure"
        return "app-error" if flags[:1] in ("-", "C") else ""
    if "backend" not in g:  # nginx "combined": no upstream fields at all
        return ""
    if answered.isdigit() and answered not in ("0", "502", "504") and family in ("nginx", "traefik"):
        return "app-error"
    if answered.isdigit() and family == "aws-lb":
        return "app-error"  # the target's own 5xx, passed through
    if backend in _NO_BACKEND:
        return "no-upstream" if status in (502, 503) else ""
    if status == 504 or answered == "504":
        return "timeout"
    return "connection-failure" if status == 502 or answered == "502" else ""


def _tcp_kind(g: dict[str, str]) -> str:
    """How HAProxy's proxy side failed a TCP session, by its termination state (no status to judge by): no server
    to send it to, a refused or failed connect, a timeout, a full queue; "" for a session that ended normally or
    that the client ended."""
    flags = g.get("flags", "--")
    if g.get("backend") == "<NOSRV>" and flags[:1] != "C":
        return "no-upstream"
    if flags[:2] == "sQ":
        return "overflow"
    if flags[:1] == "s":
        return "timeout"
    return "connection-failure" if flags[:1] == "S" else ""


def parse(artifact: Artifact) -> ParseResult:
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    candidates = [n for n, line in enumerate(lines, 1) if '"' in line or "[" in line]
    step = -(-len(candidates) // MAX_READ) if candidates else 1
    if step > 1:
        sink.problem(f"access log: {len(candidates)} lines; read every {step}th ({len(candidates[::step])})")
    reader = _Reader()
    requests = [r for n in candidates[::step] if (r := _read_wrapped(reader, lines, n)[0]) is not None]
    if not requests and artifact.content.lstrip()[:1] in ("{", "["):
        requests = _from_document(artifact.content)
    if requests:
        _facts(sink, requests)
    return sink.done()


# Fewer request lines than this, every one of them failed, among an application's other log lines: what was pasted
# is the failures, not the traffic, so no share is given (the 5xx and how they failed still are).
_MIN_SAMPLE = 10


def _facts(sink: FactSink, requests: list[Request], sample: bool = False) -> None:
    # TCP sessions have no status: only how the proxy failed them says anything (the 5xx shares are HTTP's).
    sessions = [r for r in requests if r.tcp]
    if sessions and (kinds := Counter(r.kind for r in sessions if r.kind)):
        failed_at = [r.line for r in sessions if r.kind]
        sink.add("http.failure_kinds", [k for k, _ in kinds.most_common()], failed_at[0], failed_at[-1],
                 text="TCP sessions: " + ", ".join(f"{k} x{c}" for k, c in kinds.most_common()))
    requests = [r for r in requests if not r.tcp]
    if not requests:
        return
    first, last = requests[0].line, requests[-1].line
    failed = [r for r in requests if 500 <= r.status <= 599]
    share = len(failed) / len(requests)
    summary = f"access log: {len(failed)} of {len(requests)} requests answered 5xx ({share:.1%})"
    sink.add("http.requests", len(requests), first, last, text=summary)
    if not (sample and share == 1.0 and len(requests) < _MIN_SAMPLE):
        sink.add("http.error_ratio", round(share, 4), first, last, text=summary)
    flagged = [r for r in requests if r.kind and r.status < 500]
    if not failed and not flagged:
        return
    if not failed:
        sink.add("http.failure_kinds", sorted({r.kind for r in flagged}), flagged[0].line, flagged[-1].line,
                 text=", ".join(f"{r.status} {r.kind}" for r in flagged[:3]))
        return
    at = (failed[0].line, failed[-1].line)
    statuses = Counter(r.status for r in failed)
    sink.add("http.error_statuses", [s for s, _ in statuses.most_common()], *at,
             text=", ".join(f"{s} x{c}" for s, c in statuses.most_common()))
    # a request the proxy itself failed below 5xx (Envoy's 404 NR) says how it failed, though it is no 5xx
    kinds = Counter(r.kind for r in requests if r.kind)
    if kinds:
        sink.add("http.failure_kinds", [k for k, _ in kinds.most_common()], *at,
                 text=", ".join(f"{k} x{c}" for k, c in kinds.most_common()))
    _per_upstream(sink, requests, at)


def _per_upstream(sink: FactSink, requests: list[Request], at: tuple[int, int]) -> None:
    groups: dict[str, list[Request]] = defaultdict(list)
    for r in requests:
        groups[r.upstream].append(r)
    shares = {u: sum(1 for r in rs if r.status >= 500) / len(rs) for u, rs in groups.items() if u}
    failing = sorted((u for u, s in shares.items() if s >= FAILING_SHARE), key=lambda u: -shares[u])
    if failing:
        text = "; ".join(f"{u}: {sum(1 for r in groups[u] if r.status >= 500)}/{len(groups[u])} 5xx" for u in failing)
        sink.add("http.failing_upstreams", failing, *at, text=text)
    for upstream in failing:
        if backend := _failing_backend(groups[upstream]):
            lines = [r.line for r in groups[upstream] if _last(r.backend) == backend and r.status >= 500]
            sink.add("http.failing_backend", backend, lines[0], lines[-1],
                     text=f"{upstream}: the 5xx come from {backend} while its other backends answer")
            return


def _failing_backend(requests: list[Request]) -> str:
    """One backend that fails while the others of its upstream stay clean (at least two of each to compare)."""
    per: dict[str, list[int]] = defaultdict(list)
    for r in requests:
        if (b := _last(r.backend)) not in _NO_BACKEND:
            per[b].append(r.status)
    if len(per) < 2:
        return ""
    share = {b: sum(1 for s in st if s >= 500) / len(st) for b, st in per.items()}
    bad = [b for b, s in share.items() if s >= FAILING_SHARE and sum(1 for x in per[b] if x >= 500) >= 2]
    clean = [b for b, s in share.items() if s < CLEAN_SHARE]
    return bad[0] if len(bad) == 1 and len(clean) == len(per) - 1 else ""


PARSER = Parser(kinds=(ArtifactKind.ACCESS_LOG,), parse=parse, sniff=sniff)
