"""An HTTP response's status in any structured or semi-structured log line, whatever program printed it.

A JSON object (after whatever prefix: a timestamp, a pod name, a log viewer's column) or logfmt/key=value pairs
are split into keys, and the key families of collectors/catalogs/status_fields.yaml say which key holds the status
(Envoy's response_code, Traefik's DownstreamStatus, Linkerd tap's :status, OpenTelemetry's
http.response.status_code, a Go server's status= beside its method=) and which holds Envoy's response flags. One
line is evidence of an error, not a rate: a 5xx gives `http.error_statuses` and the error-rate symptom, the flags
`http.failure_kinds`; no share is given (collectors/parsers/logs/access_log.py gives that for a whole log).
"""

from __future__ import annotations

import json
from typing import Any

import re2

from collectors.catalogs.status_fields import StatusFamily, catalog
from collectors.models import Artifact, ParseResult
from collectors.parsers.kubernetes.k8s_common import DedupSink

_MAX_LINE = 16_384  # a longer line is not a log record anyone pasted to be read
_MAX_LINES = 20_000  # work per artifact is bounded whatever the input
_MAX_DEPTH = 4
# key=value or key="quoted value"; keys as logfmt, zap, logrus and Linkerd tap write them (":status" included).
_PAIR = re2.compile(r'(?:^|[\s,{(])([A-Za-z_:@][\w.:@-]*)=("(?:[^"\\]|\\.)*"|[^\s,]+)')
_DECODER = json.JSONDecoder()


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")
    sink = DedupSink(artifact, lines)
    for number, line in enumerate(lines[:_MAX_LINES], 1):
        if len(line) > _MAX_LINE or not _may_hold_status(line):
            continue
        fields = fields_of(line)
        if fields:
            _read_fields(sink, fields, number)
    return sink.done()


def _may_hold_status(line: str) -> bool:
    low = line.lower()
    if "=" in line and ("status" in low or "code" in low):
        return True
    return "{" in line and ('status"' in low or 'code"' in low)


def fields_of(line: str) -> dict[str, str]:
    """The line's keys and values: a JSON object's leaves by dotted path, else its key=value pairs."""
    start = line.find("{")
    if start >= 0:
        try:
            obj, _ = _DECODER.raw_decode(line, start)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            out: dict[str, str] = {}
            _flatten(obj, "", out, 0)
            return out
    if line.rstrip().endswith("?"):
        return {}  # a question about a status quotes it; no program printed the line
    out = {}
    for m in _PAIR.finditer(line):
        key, value = m.group(1), m.group(2)
        out.setdefault(key, value[1:-1] if value.startswith('"') and len(value) > 1 else value)
    # A log record writes several pairs; a sentence that mentions one ("we saw status=503") is not a record.
    return out if len(out) >= 2 else {}


def _flatten(obj: dict[str, Any], prefix: str, out: dict[str, str], depth: int) -> None:
    for key, value in obj.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and depth < _MAX_DEPTH:
            _flatten(value, f"{path}.", out, depth + 1)
        elif isinstance(value, str | int) and not isinstance(value, bool):
            out[path] = str(value)


def _status(family: StatusFamily, fields: dict[str, str]) -> int | None:
    if family.requires and not any(k in fields for k in family.requires):
        return None
    raw = next((fields[k] for k in family.status if k in fields), None)
    if raw is None or not (raw.isdigit() and len(raw) == 3):
        return None
    code = int(raw)
    return code if 100 <= code <= 599 else None


def _read_fields(sink: DedupSink, fields: dict[str, str], number: int) -> None:
    spec = catalog()
    for family in spec.families:
        code = _status(family, fields)
        if code is None:
            continue
        if code >= 500:
            sink.add("http.error_statuses", [code], number)
            sink.add("evidence.symptoms", ["error-rate"], number)
            for key in family.flags:
                for flag in fields.get(key, "").split(","):
                    meaning = spec.envoy_flags.get(flag.strip())
                    if meaning is None:
                        continue
                    if meaning.kind:
                        sink.add("http.failure_kinds", [meaning.kind], number)
                    if meaning.symptom:
                        sink.add("evidence.symptoms", [meaning.symptom], number)
        return  # the first family that reads a status has read the line
