"""A 5xx that Envoy answered itself, read from the response headers curl printed (-v after "< ", or -i).

Envoy's router adds `x-envoy-upstream-service-time` to every response an upstream gave it (envoyproxy/envoy
source/common/router/router.cc, 1.0-1.32, unless suppress_envoy_headers is set); its local replies (no route, no
healthy upstream, a failed connect) carry none. A 5xx with `server: envoy` or `server: istio-envoy` and no such
header is therefore the proxy's own answer: no backend behind it was reached (service-unreachable), whereas with
the header the backend itself answered the 5xx (the error-rate symptom the status line already gives).
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 4096
_MAX_HEADERS = 40
# curl's status line under -v ("< HTTP/1.1 503 ...") or -i; the status may be bolded by a markdown paste
_STATUS: Any = re2.compile(r"^\s*(?:< )?HTTP/(?:1\.[01]|2(?:\.0)?|3) \**(5\d\d)\b")
_HEADER: Any = re2.compile(r"^\s*(?:< )?([A-Za-z][A-Za-z0-9-]*):\s*(.*?)\s*$")
_ENVOY_SERVERS = ("envoy", "istio-envoy")


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    for index, line in enumerate(lines):
        if "HTTP/" not in line or len(line) > _MAX_LINE:
            continue
        status = _STATUS.search(line)
        if status is None:
            continue
        headers = _headers(lines, index + 1)
        if headers.get("server", "").lower() in _ENVOY_SERVERS and "x-envoy-upstream-service-time" not in headers:
            sink.add("evidence.symptoms", ["service-unreachable"], index + 1,
                     text=f"{status.group(1)} answered by Envoy itself (no x-envoy-upstream-service-time)")
            break
    return sink.done()


def _headers(lines: list[str], start: int) -> dict[str, str]:
    """The header block after a status line, up to its blank line (or "<" alone under -v)."""
    out: dict[str, str] = {}
    for line in lines[start:start + _MAX_HEADERS]:
        if len(line) > _MAX_LINE:
            break
        m = _HEADER.search(line)
        if m is None:
            break
        out[m.group(1).lower()] = m.group(2)
    return out
