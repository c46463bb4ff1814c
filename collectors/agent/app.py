"""The node agent's HTTP API: read-only, token-authenticated, bounded answers.

    GET /healthz                                         no auth; liveness
    GET /v1/kernel-log?since=30m&max_bytes=              /dev/kmsg records since a time (text)
    GET /v1/conntrack?max_bytes=                         nf_conntrack count, max and per-CPU stats (text)
    GET /v1/cpu-stat?pod_uid=&container=|container_id=   a pod's or container's cgroup cpu.stat (text)
    GET /v1/nvml?since=1h&max_bytes=                     NVML snapshot and mapped Xid events (JSON)
    GET /v1/net-links?max_bytes=                         network interfaces and their MTUs, from sysfs (JSON)

Text answers carry what a person would see and `X-Triagebot-*` headers saying where it came from. Every
error is JSON: {"error": what went wrong, "expected": what would work}.
"""

from __future__ import annotations

import hmac
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

# Submodules: the package imports nothing.
from collectors.agent import cgroup, kmsg, netif, pci, pod_resources, shm, xid_map
from collectors.agent.bounded import bounded_json, truncate_text
from collectors.agent.config import AgentSettings
from collectors.agent.conntrack import conntrack_text
from collectors.agent.errors import AgentError
from collectors.agent.nvml import XidWatcher, load_nvml, snapshot
from collectors.agent.params import check_known, parse_max_bytes, parse_since
from collectors.http.body_limit import BodyLimit

log = logging.getLogger("triagebot.agent")

ENDPOINTS = "GET /healthz, /v1/kernel-log, /v1/conntrack, /v1/cpu-stat, /v1/nvml, /v1/net-links"
_OPEN_PATHS = frozenset({"/healthz"})


class BearerAuth:
    """Every path but /healthz needs `Authorization: Bearer <token>`, compared in constant time."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self.token = token.encode("utf-8")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in _OPEN_PATHS or self._allowed(Headers(scope=scope)):
            await self.app(scope, receive, send)
            return
        response = JSONResponse(
            {"error": "missing or wrong bearer token", "expected": "Authorization: Bearer <agent token>"},
            status_code=401, headers={"WWW-Authenticate": 'Bearer realm="triagebot-agent"'})
        await response(scope, receive, send)

    def _allowed(self, headers: Headers) -> bool:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        # compare_digest on bytes takes time independent of where the first difference is.
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode("utf-8"), self.token)


def _text(body: str, limit: int, headers: dict[str, str]) -> Response:
    text, cut = truncate_text(body, limit)
    return PlainTextResponse(text, headers=headers | {"X-Triagebot-Truncated": "true" if cut else "false"})


def _settings(request: Request) -> AgentSettings:
    settings: AgentSettings = request.app.state.settings
    return settings


def _since(request: Request) -> tuple[AgentSettings, datetime, datetime, int]:
    """For the endpoints that look back: the settings, the start and the end of the window, and the byte limit."""
    settings = _settings(request)
    check_known(request.query_params, ("since", "max_bytes"))
    now = datetime.now(UTC)
    # `since` is read before `max_bytes`, so a request wrong in both hears about `since` first.
    start = parse_since(request.query_params.get("since"), now)
    return settings, start, now, parse_max_bytes(request.query_params.get("max_bytes"), settings.max_response_bytes)


def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok", "node": _settings(request).node_name})


def kernel_log(request: Request) -> Response:
    settings, start, now, limit = _since(request)
    result = kmsg.kernel_log(settings, start, now, limit)
    headers = {"X-Triagebot-Source": result.source, "X-Triagebot-Since": start.isoformat()}
    if result.boot_time is not None:
        headers["X-Triagebot-Boot-Time"] = result.boot_time.isoformat(timespec="seconds")
    if result.dropped_bytes:
        headers["X-Triagebot-Dropped-Bytes"] = str(result.dropped_bytes)
        return PlainTextResponse(result.text, headers=headers | {"X-Triagebot-Truncated": "true"})
    return _text(result.text, limit, headers)


def conntrack(request: Request) -> Response:
    settings = _settings(request)
    check_known(request.query_params, ("max_bytes",))
    limit = parse_max_bytes(request.query_params.get("max_bytes"), settings.max_response_bytes)
    return _text(conntrack_text(settings.proc_root), limit, {"X-Triagebot-Source": "proc"})


def cpu_stat(request: Request) -> Response:
    settings = _settings(request)
    query = request.query_params
    check_known(query, ("pod_uid", "container", "container_id", "max_bytes"))
    uid = cgroup.validate_uid(query.get("pod_uid"))
    name = cgroup.validate_container(query.get("container"))
    cid = cgroup.validate_container_id(query.get("container_id"))
    limit = parse_max_bytes(query.get("max_bytes"), settings.max_response_bytes)
    stat = cgroup.read_cpu_stat(settings.cgroup_root, uid, name, cid, settings.container_bundle_dirs)
    return _text(stat.content, limit, {"X-Triagebot-Cgroup": stat.path, "X-Triagebot-Cgroup-Version": stat.version})


def net_links(request: Request) -> Response:
    settings = _settings(request)
    check_known(request.query_params, ("max_bytes",))
    limit = parse_max_bytes(request.query_params.get("max_bytes"), settings.max_response_bytes)
    return Response(bounded_json(netif.interfaces(settings.sys_root, settings.node_name), limit, "interfaces"),
                    media_type="application/json")


def shm_usage(request: Request) -> Response:
    settings = _settings(request)
    query = request.query_params
    check_known(query, ("pod_uid", "container", "max_bytes"))
    uid = cgroup.validate_uid(query.get("pod_uid"))
    name = cgroup.validate_container(query.get("container"))
    limit = parse_max_bytes(query.get("max_bytes"), settings.max_response_bytes)
    doc = shm.shm_usage(settings.cgroup_root, uid, name, settings.container_bundle_dirs, settings.shm_roots,
                        settings.node_name)
    return Response(bounded_json(doc, limit, "containers"), media_type="application/json")


def nvml(request: Request) -> Response:
    settings, start, now, limit = _since(request)
    doc = snapshot(load_nvml(), settings.node_name)
    if doc["available"]:
        _add_xids(doc, settings, request.app.state.xid_watcher, start, now)
    else:
        # Tells a node without GPUs from a GPU node whose driver or library is broken.
        doc["nvidia_pci_devices"] = pci.nvidia_gpus(settings.sys_root)
    return Response(bounded_json(doc, limit, "xid_events"), media_type="application/json")


def _add_xids(doc: dict[str, Any], settings: AgentSettings, watcher: XidWatcher | None, start: datetime,
              now: datetime) -> None:
    events: list[dict[str, Any]] = []
    try:
        boot = kmsg.boot_time(settings.proc_root, now)
        events = xid_map.kernel_xids(kmsg.since(kmsg.iter_kmsg(settings.kmsg_path), boot, start), boot)
    except OSError as err:
        doc["errors"]["kernel_xids"] = f"cannot read {settings.kmsg_path}: {err.strerror or err}"
    except AgentError as err:
        doc["errors"]["kernel_xids"] = err.message
    if watcher is not None:
        events.extend(watcher.events(start))
    elif settings.xid_watch:
        doc["errors"]["xid_watch"] = "NVML Xid event watch is not running"
    found = pod_resources.load(settings.pod_resources_json, settings.pod_resources_socket)
    xid_map.attach(events, doc["devices"], found.by_device)
    doc["pod_resources"] = found.describe()
    doc["xid_events"] = events


async def _agent_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, AgentError)
    return JSONResponse(exc.body(), status_code=exc.status)


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    return JSONResponse({"error": str(exc.detail), "expected": ENDPOINTS}, status_code=exc.status_code,
                        headers=exc.headers)


async def _internal_error(request: Request, exc: Exception) -> Response:
    log.exception("agent request %s failed", request.url.path)
    return JSONResponse({"error": f"internal error: {type(exc).__name__}"}, status_code=500)


def create_app(settings: AgentSettings, *, watcher: XidWatcher | None = None) -> Starlette:
    """The agent as an ASGI app. An Xid watcher is started with the app when NVML works (and stopped
    with it); tests pass their own."""

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        started = watcher
        if started is None and settings.xid_watch:
            module = load_nvml()
            candidate = XidWatcher(module) if module is not None else None
            if candidate is not None and candidate.start():
                started = candidate
            elif candidate is not None:
                log.info("NVML Xid watch not started: %s", candidate.error)
        app.state.xid_watcher = started
        try:
            yield
        finally:
            if started is not None and started is not watcher:
                started.stop()

    routes = [
        Route("/healthz", healthz, methods=["GET"]),
        Route("/v1/kernel-log", kernel_log, methods=["GET"]),
        Route("/v1/conntrack", conntrack, methods=["GET"]),
        Route("/v1/cpu-stat", cpu_stat, methods=["GET"]),
        Route("/v1/nvml", nvml, methods=["GET"]),
        Route("/v1/net-links", net_links, methods=["GET"]),
        Route("/v1/shm", shm_usage, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes, lifespan=lifespan,
        # The body cap is outermost: nothing reads a body before it, the token check included. Every endpoint is
        # a GET, so any body at all is a mistake; a few KiB forgive a client that sends an empty form.
        middleware=[Middleware(BodyLimit, limits={}, default=4096),
                    Middleware(BearerAuth, token=settings.token.get_secret_value())],
        exception_handlers={AgentError: _agent_error, HTTPException: _http_error, Exception: _internal_error})
    app.state.settings = settings
    app.state.xid_watcher = watcher
    return app
