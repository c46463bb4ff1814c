"""Facts a query file declares by value (`value: {fact, scale}`): the generic reader for metrics the Prometheus
parser does not know by their PromQL, so adding such a query touches its YAML file alone.

The answer is read as it was recorded (prom-<name>.json), so a replay gives the same facts as the live triage:
each series' last finite point, the extreme the vocabulary merges on (the lowest for a `min` fact, else the highest),
times the scale. A query whose answer holds no number gives no fact.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from typing import Any

from collectors.catalogs.queries import QueryCatalog, bundled
from collectors.models import Artifact, ArtifactKind, Fact, ParseResult
from collectors.parsers.registry import parse_artifact
from collectors.parsers.sink import FactSink
from collectors.text import normalise
from collectors.vocabulary import VOCABULARY

PARSER_NAME = "query_files"


def _number(raw: Any) -> float | None:
    if not (isinstance(raw, list) and len(raw) == 2) or isinstance(raw[1], bool):
        return None
    try:
        value = float(raw[1])
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def _last_points(body: Any) -> list[float]:
    """The last finite value of each series of a success body (vector, matrix or scalar)."""
    data = body.get("data") if isinstance(body, dict) else None
    result = data.get("result") if isinstance(data, dict) else None
    if isinstance(data, dict) and data.get("resultType") == "scalar":
        value = _number(result)
        return [] if value is None else [value]
    out: list[float] = []
    for item in result if isinstance(result, list) else []:
        if not isinstance(item, dict):
            continue
        values = item.get("values")
        points: list[Any] = values if isinstance(values, list) else [item.get("value")]
        finite = [v for v in map(_number, points) if v is not None]
        out += finite[-1:]
    return out


def _query_name(artifact: Artifact) -> str | None:
    name = artifact.id.removeprefix("prom-").removesuffix(".json")
    return name if artifact.id != name else None


def declared_facts(artifact: Artifact, catalog: QueryCatalog | None = None) -> list[Fact]:
    """The facts the query files declare by value for this Prometheus answer; none for any other artifact."""
    if artifact.kind != ArtifactKind.PROMETHEUS_QUERY or artifact.unavailable is not None:
        return []
    name = _query_name(artifact)
    spec = (catalog or bundled()).query(name) if name else None
    if spec is None or spec.value is None:
        return []
    text = normalise(artifact.content)
    try:
        values = _last_points(json.loads(text))
    except (ValueError, RecursionError):
        return []  # the Prometheus parser reports what it could not read
    if not values:
        return []
    fact = VOCABULARY[spec.value.fact]
    value = (min if fact.merge == "min" else max)(values) * spec.value.scale
    sink = FactSink(artifact, text.split("\n"))
    sink.add(fact.name, round(value) if fact.type == "int" else round(value, 6), 0,
             text=f"{artifact.command or spec.promql} => {value:g}")
    return [replace(f, parser=PARSER_NAME, kind=str(artifact.kind)) for f in sink.done().facts]


def parse_with_declared(artifact: Artifact) -> ParseResult:
    """The artifact's parser (collectors/parsers/registry.py), then the facts the query files declare by value."""
    result = parse_artifact(artifact)
    declared = declared_facts(artifact)
    return replace(result, facts=[*result.facts, *declared]) if declared else result
