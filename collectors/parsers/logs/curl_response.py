"""A 5xx that Envoy answered itself, read from the response headers curl printed (-v after "< ", or -i).

Envoy's router adds `x-envoy-upstream-service-time` to every response an upstream gave it (envoyproxy/envoy
source/common/router/router.cc, 1.0-1.32, unless suppress_envoy_headers is set); its local replies (no route, no
healthy upstream, a failed connect) carry none. A 5xx with `server: envoy` or `server: istio-envoy` and no such
header is therefore the proxy's own answer: no backend behind it was reached (service-unreachable), whereas with
the header the backend itself answered the 5xx (the error-rate symptom the status line already gives).

The same holds for a client command (curl, wget -O-) whose printed body is Envoy's "no healthy upstream" local
reply (sendNoHealthyHosts, response flag UH; the signal envoy-local-reply-no-healthy-upstream in
collectors/catalogs/signals.yaml): the proxy had no healthy host behind the name the client called, so the
Service behind it is what cannot be reached, whatever error rate that makes at the proxy.
"""

from __future__ import annotations

from typing import Any

import re2

from collectors.catalogs.signals import signal_pattern
from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 4096
_MAX_HEADERS = 40
# curl's status line under -v ("< HTTP/1.1 503 ...") or -i; the status may be bolded by a markdown paste
_STATUS: Any = re2.compile(r"^\s*(?:< )?HTTP/(?:1\.[01]|2(?:\.0)?|3) \**(5\d\d)\b")
_HEADER: Any = re2.compile(r"^\s*(?:< )?([A-Za-z][A-Za-z0-9-]*):\s*(.*?)\s*$")
_ENVOY_SERVERS = ("envoy", "istio-envoy")
# A client command as a shell line shows it: curl or wget after a prompt, `--` of kubectl exec, or at the start.
_CLIENT: Any = re2.compile(r"(?:^|[\s$#>`'\"(;|&])(?:curl|wget)\s+\S")
_PROMPT: Any = re2.compile(r"^(?:\S.*?)?[$#>] \S")
_BODY_WINDOW = 3  # non-empty lines after the command where its body is looked for (no -v: the body comes first)


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
    _no_healthy_body(sink, lines)
    return sink.done()


def _no_healthy_body(sink: FactSink, lines: list[str]) -> None:
    """service-unreachable when a client command printed Envoy's "no healthy upstream" as its body."""
    body = signal_pattern("envoy-local-reply-no-healthy-upstream")
    for index, line in enumerate(lines):
        if ("curl" not in line and "wget" not in line) or len(line) > _MAX_LINE or not _CLIENT.search(line):
            continue
        after = [(n, lines[n]) for n in range(index + 1, min(len(lines), index + 1 + 2 * _BODY_WINDOW))
                 if lines[n].strip() and len(lines[n]) <= _MAX_LINE][:_BODY_WINDOW]
        for n, text in after:
            if _PROMPT.match(text) or _CLIENT.search(text):
                break  # the next command: this one printed no such body
            if body is not None and body.search(text):
                sink.add("evidence.symptoms", ["service-unreachable"], index + 1, n + 1,
                         text=f"{line.strip()} answered by Envoy itself: {text.strip()}")
                return


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
