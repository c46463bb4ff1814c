"""A loopback stand-in for the Kubernetes API server, for tests that cannot run a real one (docs/architecture.md).

It serves recorded objects over plain HTTP on 127.0.0.1 to the official `kubernetes` client and to `kubectl`, and
answers the way a real API server does for everything triagebot reads: discovery, get and list with label and field
selectors, pagination with continue tokens, watches (chunked event streams with bookmarks, timeouts and 410
Gone for a compacted resourceVersion: kube_watch), pod logs, the node log API behind the kubelet proxy, and error
`Status` objects (401, 403, 404, 405, 410, 422, 429 with Retry-After, 500, 503, 504). It never accepts a write.

    with KubeStandIn([pod, node], pod_logs={("ml", "trainer-0", "trainer"): "..."}) as kube:
        api = kubernetes.client.CoreV1Api(kube.api_client())
        kube.kubeconfig(tmp_path / "kubeconfig")     # for kubernetes.config.load_kube_config or kubectl
        assert not any(r.path == "/api/v1/pods" for r in kube.requests)
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import re
import socket
import ssl
import sys
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from types import TracebackType
from typing import Any, NamedTuple
from urllib.parse import parse_qs, unquote, urlsplit

import kubernetes
import yaml

from tests.standins import kube_catalog as catalog
from tests.standins import kube_errors as errors
from tests.standins.kube_catalog import Resource, dumps
from tests.standins.kube_errors import ApiError, Attributes
from tests.standins.kube_events import to_events_v1
from tests.standins.kube_logs import node_log, parse_pod_log_options, pod_log
from tests.standins.kube_select import (
    FieldRequirement,
    LabelRequirement,
    SelectorError,
    field_matcher,
    parse_fields,
    parse_labels,
    pinned_field,
)
from tests.standins.kube_store import (
    BUILTIN_NAMESPACES,
    INDEXED,
    MATCH_ALL,
    ContinueError,
    ObjectStore,
    Page,
    Stored,
    loads,
)
from tests.standins.kube_tables import table_for, wants_table
from tests.standins.kube_tls import tls_material
from tests.standins.kube_watch import DEFAULT_TIMEOUT, WatchRequest
from tests.standins.kube_watch import stream as watch_stream

DEFAULT_USER = "system:serviceaccount:triagebot:triagebot"
_GZIP_MIN = 128 * 1024  # the API server compresses responses above 128 KiB when the client accepts gzip
_WRITE_VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


@dataclass(frozen=True)
class Fault:
    """An injected failure for matching requests.

    `path` is a regular expression matched (re.match, so anchored at the start) against the decoded request path.
    `status` 0 means "only slow": sleep `delay`, then answer normally.
    """

    path: str
    status: int
    delay: float = 0.0
    retry_after: int | None = None
    times: int | None = None  # how many matching requests fail; None = all
    method: str = "GET"
    message: str | None = None  # overrides the cause text of 500/503 faults


class RequestLog(NamedTuple):
    method: str
    path: str  # percent-decoded, as the server routes it
    query: dict[str, str]  # first value of each parameter
    status: int


@dataclass
class _Response:
    body: bytes
    content_type: str = "application/json"
    code: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    stream: Iterator[bytes] | None = None  # a watch: sent chunk by chunk instead of `body`


@dataclass(frozen=True)
class _Target:
    """A parsed resource path: /api/v1/namespaces/{ns}/{plural}/{name}/{sub}/{subpath}."""

    resource: Resource
    namespace: str = ""
    name: str = ""
    sub: str = ""
    subpath: str = ""


class KubeStandIn:
    """The stand-in server. Objects are dicts as `kubectl get -o json` prints them (missing uid, resourceVersion
    and creationTimestamp are filled; namespaces appear with their first object).

    pod_logs: (namespace, pod, container) -> text; container "" is any container without its own entry;
        previous logs under container + ":previous". Lines may start with an RFC 3339 timestamp (used for
        sinceSeconds/sinceTime/timestamps); other lines take the previous line's time, or the container start.
    node_logs: (node, name) -> text (or bytes for a binary file); a name with "." or "/" is a file under /var/log
        ("kern.log"), else a
        journald unit ("kubelet").
    node_log_query: False answers the node log API like a kubelet with the NodeLogQuery gate off.
    now: a fixed server clock (Age columns, sinceSeconds, default creationTimestamp); wall time otherwise.
    """

    def __init__(self, objects: Iterable[Mapping[str, Any]] = (), *,
                 pod_logs: Mapping[tuple[str, str, str], str] | None = None,
                 node_logs: Mapping[tuple[str, str], str | bytes] | None = None,
                 node_log_query: bool = True, latency: float = 0.0, faults: Iterable[Fault] = (),
                 page_limit_max: int = 500, token: str = "t0ken", user: str = DEFAULT_USER,
                 now: datetime | None = None, max_inflight: int | None = None,
                 bookmark_interval: float = 60.0) -> None:
        self._clock: Callable[[], datetime] = (lambda: now) if now is not None else (lambda: datetime.now(UTC))
        self._store = ObjectStore(self._clock)
        for ns in BUILTIN_NAMESPACES:
            self._store.ensure_namespace(ns)
        for obj in objects:
            self._store.add(obj)
        self.pod_logs: dict[tuple[str, str, str], str] = dict(pod_logs or {})
        self.node_logs: dict[tuple[str, str], str | bytes] = dict(node_logs or {})
        self.node_log_query = node_log_query
        self.latency = latency
        self.page_limit_max = page_limit_max
        self.bookmark_interval = bookmark_interval  # the real server sends one about every minute
        self._stopping = threading.Event()  # ends open watches when the server stops
        self.token = token
        self.user = user
        self.requests: list[RequestLog] = []
        # --max-requests-inflight: requests beyond it are rejected with 429 and Retry-After: 1, as the API server's
        # in-flight limit (and priority-and-fairness when its queues are full) does. `peak_inflight` is the most
        # requests ever served at once.
        self.max_inflight = max_inflight
        self.inflight = 0
        self.peak_inflight = 0
        self._lock = threading.Lock()
        self._faults: list[Fault] = []
        self._fault_left: list[int | None] = []
        self.set_faults(list(faults))
        self._events_v1: dict[int, tuple[Stored, bytes]] = {}
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle -------------------------------------------------------------------------------------------------

    def __enter__(self) -> KubeStandIn:
        self._stopping.clear()
        server = _Server(("127.0.0.1", 0), _Handler)
        server.app = self
        tls = tls_material()
        server.tls_context = tls.server_context() if tls else None
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="kube-standin", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.close_connections()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        """Plain http, for clients configured in-process (api_client)."""
        return f"http://127.0.0.1:{self._port()}"

    @property
    def https_url(self) -> str | None:
        """The same server over TLS (what kubeconfig() points at), or None without openssl."""
        return f"https://127.0.0.1:{self._port()}" if tls_material() else None

    def _port(self) -> int:
        if self._server is None:
            raise RuntimeError("KubeStandIn is not running; use it as a context manager")
        return int(self._server.server_address[1])

    # --- client configuration ---------------------------------------------------------------------------------------

    def kubeconfig(self, path: Path, context: str = "standin", namespace: str = "default",
                   token: str = "t0ken") -> Path:
        """A kubeconfig for kubernetes.config.load_kube_config and `kubectl --kubeconfig`.

        It points at the TLS side, with the stand-in's certificate as the cluster CA: kubectl (client-go) sends no
        bearer token over plain http. Without openssl it falls back to http, where kubectl gets 401.
        """
        tls = tls_material()
        cluster: dict[str, str] = {"server": self.url}
        if tls is not None:
            cluster = {"server": self.https_url or self.url,
                       "certificate-authority-data": base64.b64encode(tls.cert_pem).decode()}
        doc = {
            "apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": context, "cluster": cluster}],
            "users": [{"name": context, "user": {"token": token}}],
            "contexts": [{"name": context, "context": {"cluster": context, "user": context, "namespace": namespace}}],
            "current-context": context,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(doc, sort_keys=False))
        return path

    def api_client(self) -> kubernetes.client.ApiClient:
        cfg = kubernetes.client.Configuration(host=self.url)
        cfg.api_key = {"authorization": f"Bearer {self.token}"}
        return kubernetes.client.ApiClient(cfg)

    # --- test controls ----------------------------------------------------------------------------------------------

    def add(self, obj: Mapping[str, Any]) -> None:
        self._store.add(obj)

    def set_faults(self, faults: list[Fault]) -> None:
        with self._lock:
            self._faults = list(faults)
            self._fault_left = [f.times for f in faults]

    def delete(self, api_version: str, kind: str, namespace: str, name: str) -> bool:
        """Remove an object; open watches see DELETED. False when there was no such object."""
        return self._store.delete(api_version, kind, namespace, name)

    def compact(self) -> None:
        """An etcd compaction: watches from any resourceVersion handed out so far get 410 Gone and must relist."""
        self._store.compact()

    def end_watches(self) -> None:
        """Close every open watch stream, as an API server restart does; clients resume from their resourceVersion."""
        self._store.end_watches()

    @property
    def resource_version(self) -> str:
        """The store's current revision (what a list made now would carry)."""
        return self._store.resource_version

    def expire_continue_tokens(self) -> None:
        """Every continue token handed out so far answers 410 Expired from now on (an etcd compaction)."""
        self._store.expire_continue_tokens()

    # --- request handling --------------------------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: Mapping[str, str]) -> _Response:
        split = urlsplit(raw_path)
        path = unquote(split.path)  # Go's URL.Path is decoded: the client's "logs%2F" is "logs/"
        query = parse_qs(split.query, keep_blank_values=True)
        flat = {k: v[0] for k, v in query.items()}
        try:
            with self._admitted():
                response = self._respond(method, path, query, flat, headers)
        except ApiError as err:
            response = _Response(err.body, err.content_type, err.code, err.headers)
        except Exception as exc:  # a stand-in bug must still answer like a server, and be visible
            traceback.print_exc(file=sys.stderr)
            failure = errors.internal(f"stand-in failure: {exc!r}")
            response = _Response(failure.body, code=failure.code)
        with self._lock:
            self.requests.append(RequestLog(method, path, flat, response.code))
        return response

    @contextlib.contextmanager
    def _admitted(self) -> Iterator[None]:
        with self._lock:
            if self.max_inflight is not None and self.inflight >= self.max_inflight:
                raise errors.too_many_requests(1)
            self.inflight += 1
            self.peak_inflight = max(self.peak_inflight, self.inflight)
        try:
            yield
        finally:
            with self._lock:
                self.inflight -= 1

    def _respond(self, method: str, path: str, query: dict[str, list[str]], flat: dict[str, str],
                 headers: Mapping[str, str]) -> _Response:
        if self.latency:
            time.sleep(self.latency)
        if headers.get("authorization", "") != f"Bearer {self.token}":
            raise errors.unauthorized()
        unknown: ApiError | None = None
        try:
            target = _parse_target(path)
        except ApiError as err:  # an unknown resource; an injected fault still takes precedence
            target, unknown = None, err
        self._inject_fault(method, path, flat, target)
        if unknown is not None:
            raise unknown
        if method not in ("GET", "HEAD"):
            raise errors.method_not_supported(_WRITE_VERBS.get(method, method.lower()),
                                              target.resource if target else None)
        if target is None:
            return self._non_resource(path)
        if target.resource.forbidden:
            raise errors.forbidden(_attributes("GET", path, target, flat), self.user)
        if flat.get("watch", "") in ("1", "true", "True"):
            if target.sub or target.name:
                raise errors.method_not_supported("watch", target.resource)
            return self._watch(target, flat)
        if target.sub:
            return self._subresource(target, query, flat)
        if target.name:
            return self._get(target)
        return self._list(target, flat, headers.get("accept", ""))

    def _inject_fault(self, method: str, path: str, flat: dict[str, str], target: _Target | None) -> None:
        fault = self._take_fault(method, path)
        if fault is None:
            return
        if fault.delay:
            time.sleep(fault.delay)
        if fault.status:
            raise _fault_error(fault, _attributes(method, path, target, flat), self.user, bool(flat.get("continue")))

    def _take_fault(self, method: str, path: str) -> Fault | None:
        with self._lock:
            for i, fault in enumerate(self._faults):
                left = self._fault_left[i]
                if fault.method.upper() != method or (left is not None and left <= 0):
                    continue
                if re.match(fault.path, path):
                    if left is not None:
                        self._fault_left[i] = left - 1
                    return fault
        return None

    def _non_resource(self, path: str) -> _Response:
        path = path.rstrip("/") or "/"  # the client asks for "/version/" and "/apis/"
        if path in ("/healthz", "/livez", "/readyz"):
            return _Response(b"ok", "text/plain; charset=utf-8")
        if path == "/version":
            return _Response(dumps(catalog.SERVER_VERSION))
        if path == "/api":
            return _Response(dumps(catalog.api_versions(self.url.removeprefix("http://"))))
        if path == "/apis":
            return _Response(dumps(catalog.group_list()))
        parts = path.strip("/").split("/")
        doc: dict[str, Any] | None = None
        if parts[0] == "api" and len(parts) == 2:
            doc = catalog.resource_list("", parts[1])
        elif parts[0] == "apis" and len(parts) == 2:
            doc = catalog.api_group(parts[1])
        elif parts[0] == "apis" and len(parts) == 3:
            doc = catalog.resource_list(parts[1], parts[2])
        if doc is None:
            raise errors.no_such_resource()
        return _Response(dumps(doc))

    def _get(self, target: _Target) -> _Response:
        res = target.resource
        stored = self._store.get(res, target.namespace, target.name)
        if stored is None:
            raise errors.not_found(res, target.name)
        return _Response(self._full(res, stored))

    def _list(self, target: _Target, flat: dict[str, str], accept: str) -> _Response:
        res = target.resource
        labels, fields = _selectors(flat, res)
        token = flat.get("continue", "")
        if token and flat.get("resourceVersion"):
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        limit = _limit(flat.get("limit", ""))
        if limit is not None:
            limit = min(limit, self.page_limit_max)
        try:
            page = self._store.list_page(res, target.namespace or None, labels,
                                         field_matcher(fields, res) if fields else MATCH_ALL, limit, token,
                                         pinned_field(fields, res, INDEXED))
        except ContinueError as exc:
            if exc.expired:
                raise errors.expired(str(exc), exc.fresh_token) from None
            raise errors.bad_request(str(exc)) from None
        if wants_table(accept):
            table = table_for(res, [loads(self._full(res, s)) for s in page.items], page, self._clock(),
                              flat.get("includeObject", "Metadata"))
            if table is not None:
                return _Response(dumps(table))
        return _Response(self._list_body(res, page))

    def _watch(self, target: _Target, flat: dict[str, str]) -> _Response:
        res = target.resource
        labels, fields = _selectors(flat, res)
        raw_rv = flat.get("resourceVersion", "")
        if raw_rv and not raw_rv.isdigit():
            raise errors.bad_request(f'resourceVersion: Invalid value: "{raw_rv}": must be a non-negative integer')
        raw_timeout = flat.get("timeoutSeconds", "")
        timeout = float(_limit(raw_timeout) or 0) if raw_timeout else DEFAULT_TIMEOUT
        request = WatchRequest(res, target.namespace or None, labels,
                               field_matcher(fields, res) if fields else MATCH_ALL,
                               int(raw_rv) if raw_rv and raw_rv != "0" else None,
                               flat.get("allowWatchBookmarks", "") in ("1", "true", "True"), max(timeout, 0.0))
        lines = watch_stream(self._store, request, lambda stored: self._full(res, stored), self._stopping,
                             self.bookmark_interval)
        return _Response(b"", headers={"Transfer-Encoding": "chunked"}, stream=lines)

    def _list_body(self, res: Resource, page: Page) -> bytes:
        meta: dict[str, Any] = {"resourceVersion": page.resource_version}
        if page.continue_token:
            meta["continue"] = page.continue_token
        if page.remaining is not None:
            meta["remainingItemCount"] = page.remaining
        head = dumps({"kind": f"{res.kind}List", "apiVersion": res.api_version, "metadata": meta})
        items = b",".join(self._item(res, s) for s in page.items)
        return head[:-1] + b',"items":[' + items + b"]}"

    def _item(self, res: Resource, stored: Stored) -> bytes:
        if res.store is None:
            return stored.item
        return self._as_events_v1(stored, with_type=False)

    def _full(self, res: Resource, stored: Stored) -> bytes:
        if res.store is None:
            return stored.full
        return dumps(to_events_v1(loads(stored.full)))

    def _as_events_v1(self, stored: Stored, with_type: bool) -> bytes:
        # Cached per stored object: a 50,000-event list through events.k8s.io must not re-convert every time.
        cached = self._events_v1.get(id(stored))
        if cached is not None and cached[0] is stored:
            return cached[1]
        body = dumps(to_events_v1(loads(stored.full), with_type))
        self._events_v1[id(stored)] = (stored, body)
        return body

    def _subresource(self, target: _Target, query: dict[str, list[str]], flat: dict[str, str]) -> _Response:
        res = target.resource
        if (res.plural, target.sub) == ("pods", "log"):
            opts = parse_pod_log_options(flat, target.name)
            pod = self._object(target)
            return _Response(pod_log(pod, opts, self.pod_logs, self._clock()), "text/plain")
        if (res.plural, target.sub) == ("nodes", "proxy"):
            self._object(target)
            out = node_log(target.name, target.subpath, query, self.node_logs, self.node_log_query, self._clock())
            return _Response(out.body, out.content_type)
        if target.sub == "status" and not target.subpath:
            return self._get(target)
        raise errors.no_such_resource()

    def _object(self, target: _Target) -> dict[str, Any]:
        stored = self._store.get(target.resource, target.namespace, target.name)
        if stored is None:
            raise errors.not_found(target.resource, target.name)
        return loads(stored.full)


# --- request parsing ------------------------------------------------------------------------------------------------


def _parse_target(path: str) -> _Target | None:
    """The resource a path addresses, or None for discovery and other non-resource paths."""
    parts = path[1:].split("/")
    if parts[0] == "api" and len(parts) > 2:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[0] == "apis" and len(parts) > 3:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if rest == [""]:
        return None  # "/api/v1/": discovery, like "/api/v1"
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    res = catalog.resource_at(group, version, rest[0])
    if res is None or (namespace and not res.namespaced):
        raise errors.no_such_resource()
    if res.namespaced and not namespace and len(rest) > 1 and rest[1]:
        raise errors.no_such_resource()  # "/api/v1/pods/x": namespaced objects only exist under a namespace
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    return _Target(res, namespace, name, sub, "/".join(rest[3:]))


def _attributes(method: str, path: str, target: _Target | None, flat: Mapping[str, str]) -> Attributes:
    if target is None:
        return Attributes(verb=_WRITE_VERBS.get(method, "get"), path=path)
    if method in _WRITE_VERBS:
        verb = _WRITE_VERBS[method]
    elif flat.get("watch") in ("1", "true", "True"):
        verb = "watch"
    else:
        verb = "get" if target.name else "list"
    return Attributes(verb, path, target.resource, target.sub, target.name, target.namespace)


def _limit(raw: str) -> int | None:
    if not raw:
        return None
    try:
        return int(raw)
    except ValueError:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None


def _fault_error(fault: Fault, attrs: Attributes, user: str, continuing: bool) -> ApiError:
    res = attrs.resource
    code = fault.status
    if code == 401:
        return errors.unauthorized()
    if code == 403:
        return errors.forbidden(attrs, user)
    if code == 404:
        if res is not None and attrs.name:
            return errors.not_found(res, attrs.name)
        return errors.no_such_resource()
    if code == 410:
        if continuing:
            return errors.expired("The provided continue parameter is too old to display a consistent list result. "
                                  "You can start a new list without the continue parameter.")
        return errors.expired()
    if code == 429:
        return errors.too_many_requests(fault.retry_after if fault.retry_after is not None else 1)
    if code == 500:
        return errors.internal(fault.message or "etcdserver: request timed out")
    if code == 503:
        default = "the server is currently unable to handle the request"
        if attrs.subresource == "proxy":
            default = "error trying to reach service: dial tcp 10.0.0.1:10250: connect: connection refused"
        return errors.unavailable(fault.message or default)
    if code == 504:
        return errors.timeout()
    if code == 400:
        return errors.bad_request(fault.message or "the server rejected our request for an unknown reason")
    reason = _REASONS.get(code, "")
    return errors.status_error(code, reason, fault.message or f"the server responded with the status code {code}")


_REASONS = {405: "MethodNotAllowed", 406: "NotAcceptable", 409: "Conflict", 413: "RequestEntityTooLarge",
            415: "UnsupportedMediaType", 422: "Invalid", 502: "InternalError"}


# --- HTTP plumbing --------------------------------------------------------------------------------------------------


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # A real API server listens with the kernel's backlog (somaxconn); socketserver's default of 5 would make a
    # burst of new connections wait out SYN retries, a limit the real server does not have.
    request_queue_size = 512
    app: KubeStandIn
    tls_context: ssl.SSLContext | None = None

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        self._connections: set[socket.socket] = set()
        self._conn_lock = threading.Lock()
        super().__init__(address, handler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind resolves the host name (getfqdn), which can stall on a machine without DNS.
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(self.server_address)
        self.server_address = self.socket.getsockname()
        self.server_name, self.server_port = "127.0.0.1", int(self.server_address[1])

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Clients that hang up mid-response (a bounded read closing early) are normal, not server errors.
        if isinstance(sys.exc_info()[1], (OSError, ssl.SSLError)):
            return
        super().handle_error(request, client_address)

    def track(self, conn: socket.socket, alive: bool) -> None:
        with self._conn_lock:
            (self._connections.add if alive else self._connections.discard)(conn)

    def close_connections(self) -> None:
        """Idle keep-alive connections would keep handler threads waiting; close them on stop."""
        with self._conn_lock:
            conns = list(self._connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
    disable_nagle_algorithm = True  # headers and body go out in separate writes; Nagle would stall each call ~40 ms
    timeout = 60
    server: _Server

    def setup(self) -> None:
        # http and https share the port: a TLS ClientHello starts with byte 0x16, a request line never does.
        ctx = self.server.tls_context
        if ctx is not None:
            self.request.settimeout(self.timeout)
            if self.request.recv(1, socket.MSG_PEEK) == b"\x16":
                self.request = ctx.wrap_socket(self.request, server_side=True)
        super().setup()
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)  # a refused write still has its body drained, to keep the connection usable
        headers = {k.lower(): v for k, v in self.headers.items()}
        response = self.server.app.handle(self.command, self.path, headers)
        body = response.body
        extra = dict(response.headers)
        if len(body) > _GZIP_MIN and "gzip" in headers.get("accept-encoding", ""):
            body = gzip.compress(body, compresslevel=1)
            extra["Content-Encoding"] = "gzip"
        self.send_response_only(response.code)
        self.send_header("Date", self.date_time_string())
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", response.content_type)
        for name, value in extra.items():
            self.send_header(name, value)
        if response.stream is not None:
            self.end_headers()
            self._stream(response.stream)
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _stream(self, lines: Iterator[bytes]) -> None:
        """A watch: each event line is one chunk, flushed at once; a client that hangs up ends it."""
        try:
            for line in lines:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        except OSError:
            self.close_connection = True

    do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = _serve

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the request log is `KubeStandIn.requests`


def _selectors(flat: dict[str, str], res: Resource) -> tuple[list[LabelRequirement], list[FieldRequirement]]:
    """The label and field selectors of a list or watch, or the API server's 400 for a malformed one."""
    try:
        return parse_labels(flat.get("labelSelector", "")), parse_fields(flat.get("fieldSelector", ""), res)
    except SelectorError as exc:
        raise errors.bad_request(str(exc)) from None
