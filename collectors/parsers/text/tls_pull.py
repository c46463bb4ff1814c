"""An image pull's TLS failure said as Go's bare x509 error, in a paste about pulling an image.

The kubelet's pull error carries the x509 text inside "Failed to pull image" and is read there; a person who saw
it from the runtime, or quotes only its end, pastes the x509 sentence alone. It is a pull's when the same paste
says an image is being pulled and the line is not kubectl's, a webhook's or a scrape's
(collectors/catalogs/tls_pull.yaml).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink
from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "tls_pull.yaml"
_MAX_LINE = 4096


@cache
def _catalog() -> tuple[tuple[Any, ...], Any, tuple[str, ...]]:
    raw = load_file(_CATALOG)
    errors = tuple(re2.compile(e["pattern"]) for e in raw["errors"])
    return errors, re2.compile(raw["pull_context"]), tuple(str(u) for u in raw["unless"])


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    if "x509: " not in artifact.content:
        return sink.done()
    errors, context, unless = _catalog()
    if not any(len(line) <= _MAX_LINE and context.search(line) for line in lines):
        return sink.done()
    for index, line in enumerate(lines):
        if "x509: " not in line or len(line) > _MAX_LINE or any(u in line for u in unless):
            continue
        if any(rx.search(line) for rx in errors):
            sink.add("image.pull_error", "tls", index + 1)
            break
    return sink.done()
