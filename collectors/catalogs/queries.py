"""What live triage asks Prometheus, read from the query files beside the playbooks (playbooks/queries/<id>.yaml).

Each file holds the PromQL its playbook needs: `queries` (instant queries, or a range query whose trend is the
evidence, each naming the facts its answer gives) and `series` (the range queries its hypotheses chart, keyed by
the `chart.metric` they declare). The PromQL is a template: collectors/live/prom_plan.py replaces the markers
(MARKERS) with label matchers for the triage's target, built and escaped by collectors/live/promql.py, so no label
value is ever written into a template, and skips an entry when the target has nothing a marker can name.

This module is the data model, the reader and the checks; `playbooks lint` reports the checks' problems with file
and line (playbooks/query_files.py). The files are data, not code: adding a metric touches one of them.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from collectors.catalogs.validated import validated
from collectors.lazy_regex import LazyPattern
from collectors.vocabulary import VOCABULARY
from collectors.yaml_safe import load_file

# The bundled query files sit beside the playbooks (the top-level playbooks package), found by path: collectors
# never import playbooks.
QUERY_DIR = Path(__file__).resolve().parents[2] / "playbooks" / "queries"

Unit = Literal["ratio", "percent", "bytes", "bytes-per-second", "seconds", "count", "per-second", "per-hour",
               "celsius"]
UNITS: tuple[str, ...] = ("ratio", "percent", "bytes", "bytes-per-second", "seconds", "count", "per-second",
                          "per-hour", "celsius")
# A metric name, optionally with one label matcher: DCGM_FI_DEV_GPU_UTIL, node_cpu_seconds_total{mode="steal"}.
SERIES_KEY = r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*(=|!=|=~|!~)"[^"{}]*"\})?$'
_KEY = LazyPattern(SERIES_KEY)
_METRIC = LazyPattern(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_NAME = LazyPattern(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MARKER = LazyPattern(r"<([a-z_]+)>")

# The markers (docs/playbooks.md, "Queries", says what each becomes), with what each becomes for a target that has
# everything: the sample values the checks fill in.
MARKERS: dict[str, str] = {
    "pods": 'namespace="ns",pod=~"a|b"', "containers": 'namespace="ns",pod=~"a|b",container!="",container!="POD"',
    "namespace": 'namespace="ns"', "service": 'namespace="ns",service="s"', "endpoint": 'namespace="ns",endpoint="s"',
    "deployment": 'namespace="ns",deployment="d"', "scaled": 'namespace="ns",scaletargetref_name="d"',
    "instance": 'instance=~"(n1|10\\\\.0\\\\.0\\\\.1)(:[0-9]+)?"', "node": 'node=~"n1|n2"', "gpus": 'Hostname="n1"',
    "window": "5m", "span": "1h", "histogram": "http_request_duration_seconds_bucket",
    "counter": "http_requests_total",
}
_FIELDS_QUERY = {"name", "promql", "facts", "value", "range", "when_exported", "subject"}
_FIELDS_SERIES = {"query", "promql", "unit", "counter", "always"}


@dataclass(frozen=True)
class ValueFact:
    """Read the answer's value as this fact: the extreme over its series (as the vocabulary merges), times scale."""

    fact: str
    scale: float = 1.0


@dataclass(frozen=True)
class PromQuery:
    """One query of the first wave: `name` names its artifact (prom-<name>.json) and its entry in `missing`."""

    name: str
    promql: str
    facts: tuple[str, ...] = ()  # what the Prometheus parser reads from the answer, by its PromQL
    value: ValueFact | None = None  # what the generic reader (collectors/query_facts.py) reads, for other metrics
    range: bool = False  # over the window, at the range step: its trend is the evidence
    when_exported: str | None = None  # only when discovery found this metric among the pods'
    subject: str | None = None  # the artifact's subject, when the markers name none (cluster-wide queries)
    file: str = ""


@dataclass(frozen=True)
class RangeSeries:
    """One chart series: `query` names its artifact (prom-<query>.json) and its entry in a `missing` list."""

    query: str
    promql: str
    unit: Unit
    counter: bool = False  # the metric only ever grows: the template must take its rate
    always: bool = False  # fetched on every triage whose target fits: its trend is evidence, not only a picture
    file: str = ""


@dataclass(frozen=True)
class QueryCatalog:
    queries: tuple[PromQuery, ...] = ()
    series: dict[str, RangeSeries] = field(default_factory=dict)

    def query(self, name: str) -> PromQuery | None:
        return next((q for q in self.queries if q.name == name), None)


@dataclass(frozen=True)
class QueryProblem:
    """A problem in a query file; `path` is the keys and indexes to the entry (for the line), as in pydantic."""

    file: str
    path: tuple[str | int, ...]
    message: str


def split_key(key: str) -> tuple[str, str | None]:
    """(metric name, its matcher or None) of a series key; raises ValueError for a malformed key."""
    if not _KEY.match(key):
        raise ValueError(f"not a series key: {key!r}")
    name, _, rest = key.partition("{")
    return name, (rest[:-1] if rest else None)


def markers_of(promql: str) -> set[str]:
    return set(MARKER.findall(promql))


def with_samples(promql: str) -> str:
    """The template with every known marker replaced by its sample value (for the checks)."""
    return MARKER.sub(lambda m: MARKERS.get(m.group(1), m.group(0)), promql)


# ---- checking the PromQL ------------------------------------------------------------------------------------

_PAIRS = {"(": ")", "[": "]", "{": "}"}


def promql_problems(promql: str) -> list[str]:
    """What makes the text no PromQL: unknown markers, unclosed strings, unbalanced brackets, empty selectors.

    A structural check, so lint needs no Prometheus; tests/unit/live/test_query_files.py runs promtool on every
    entry for the full grammar."""
    problems = [f"unknown marker <{m}> (known: {', '.join(sorted(MARKERS))})" for m in sorted(markers_of(promql))
                if m not in MARKERS]
    text = with_samples(promql)
    stack: list[str] = []
    quote: str | None = None
    escaped = False
    for char in text:
        if quote is not None:
            escaped = not escaped and char == "\\"
            if char == quote and not escaped:
                quote = None
            continue
        if char in "\"'`":
            quote = char
        elif char in _PAIRS:
            stack.append(_PAIRS[char])
        elif char in ")]}" and (not stack or stack.pop() != char):
            return [*problems, f"unbalanced {char!r}"]
    if quote is not None:
        problems.append("a string is not closed")
    if stack:
        problems.append(f"unclosed bracket: expected {stack[-1]!r}")
    if re.search(r"\{\s*,|,\s*\}|,\s*,", text):
        problems.append("an empty label matcher (a stray comma in a selector)")
    if not text.strip():
        problems.append("empty PromQL")
    return problems


# ---- reading the files ----------------------------------------------------------------------------------------


def _query(raw: dict[str, Any], file: str) -> PromQuery:
    value = raw.get("value")
    return PromQuery(
        name=str(raw.get("name", "")), promql=str(raw.get("promql", "")),
        facts=tuple(str(f) for f in raw.get("facts") or ()),
        value=ValueFact(str(value.get("fact", "")), float(value.get("scale", 1.0))) if isinstance(value, dict)
        else None,
        range=bool(raw.get("range", False)),
        when_exported=str(raw["when_exported"]) if raw.get("when_exported") else None,
        subject=str(raw["subject"]) if raw.get("subject") else None, file=file)


def _series(raw: dict[str, Any], file: str) -> RangeSeries:
    unit = str(raw.get("unit", ""))
    return RangeSeries(query=str(raw.get("query", "")), promql=str(raw.get("promql", "")),
                       unit=unit if unit in UNITS else "count",  # type: ignore[arg-type]  # checked: file_problems
                       counter=bool(raw.get("counter", False)), always=bool(raw.get("always", False)), file=file)


def _entries(data: Any) -> Iterator[tuple[str, str | int, Any]]:
    """(section, index or key, entry) of a loaded file; shapes are checked by file_problems."""
    if not isinstance(data, dict):
        return
    queries = data.get("queries")
    for index, raw in enumerate(queries if isinstance(queries, list) else []):
        yield "queries", index, raw
    series = data.get("series")
    for key, raw in (series if isinstance(series, dict) else {}).items():
        yield "series", str(key), raw


def _query_problems(raw: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    if not _NAME.match(str(raw.get("name", ""))):
        out.append(((), f"a query needs a kebab-case name, got {raw.get('name')!r}"))
    facts = raw.get("facts", [])
    for fact in facts if isinstance(facts, list) else []:
        if fact not in VOCABULARY:
            out.append((("facts",), f"unknown fact {fact!r}"))
    if not isinstance(facts, list):
        out.append((("facts",), "facts is a list of fact names"))
    value = raw.get("value")
    if value is not None:
        fact = value.get("fact") if isinstance(value, dict) else None
        if fact not in VOCABULARY:
            out.append((("value",), f"value needs `fact:` naming a known fact, got {fact!r}"))
        elif VOCABULARY[fact].type not in ("int", "float"):
            out.append((("value",), f"{fact} is a {VOCABULARY[fact].type}: a query's value can only give a number"))
        if isinstance(value, dict) and not isinstance(value.get("scale", 1.0), int | float):
            out.append((("value",), "scale is a number"))
    exported = raw.get("when_exported")
    if exported is not None and not _METRIC.match(str(exported)):
        out.append((("when_exported",), f"when_exported names a metric, got {exported!r}"))
    return out


def _series_problems(key: str, raw: dict[str, Any]) -> list[tuple[tuple[str, ...], str]]:
    out: list[tuple[tuple[str, ...], str]] = []
    if not _KEY.match(key):
        out.append(((), f"not a series key (a metric name with at most one matcher): {key!r}"))
    if not _NAME.match(str(raw.get("query", ""))):
        out.append((("query",), f"a series needs a kebab-case query name, got {raw.get('query')!r}"))
    if raw.get("unit") not in UNITS:
        out.append((("unit",), f"unit {raw.get('unit')!r}; expected one of {', '.join(UNITS)}"))
    if raw.get("counter") and "<window>" not in str(raw.get("promql", "")):
        out.append((("promql",), "a counter is charted as a rate over <window>"))
    return out


def file_problems(data: Any, file: str) -> list[QueryProblem]:
    """What is wrong with one loaded query file, entry by entry."""
    if not isinstance(data, dict) or not set(data) <= {"queries", "series"}:
        return [QueryProblem(file, (), "a query file is a mapping of `queries` (a list) and `series` (a mapping)")]
    problems: list[QueryProblem] = []
    for section, at, raw in _entries(data):
        where = (section, at)
        if not isinstance(raw, dict):
            problems.append(QueryProblem(file, where, "an entry is a mapping"))
            continue
        allowed = _FIELDS_QUERY if section == "queries" else _FIELDS_SERIES
        problems += [QueryProblem(file, (*where, str(k)), f"unknown field {k!r}; expected one of {sorted(allowed)}")
                     for k in raw if k not in allowed]
        checks = _query_problems(raw) if section == "queries" else _series_problems(str(at), raw)
        problems += [QueryProblem(file, (*where, *sub), message) for sub, message in checks]
        problems += [QueryProblem(file, (*where, "promql"), message)
                     for message in promql_problems(str(raw.get("promql", "")))]
    return problems


def duplicate_problems(catalog: QueryCatalog, places: dict[str, list[tuple[str, str | int]]]) -> list[QueryProblem]:
    """Names used twice across the files (each names one artifact): `places` gives each query's and each series'
    (file, index or key), in reading order."""
    problems: list[QueryProblem] = []
    for name, where in places.items():
        problems += [QueryProblem(file, ("queries" if isinstance(at, int) else "series", at),
                                  f"{name} is also declared in {where[0][0]}") for file, at in where[1:]]
    for key, s in catalog.series.items():
        if s.query in {q.name for q in catalog.queries}:
            problems.append(QueryProblem(s.file, ("series", key, "query"), f"{s.query} is also a query's name"))
    return problems


def read_catalog(files: list[tuple[str, Any]]) -> tuple[QueryCatalog, list[QueryProblem]]:
    """The catalog of loaded files (name, data), and every problem found in them."""
    problems: list[QueryProblem] = []
    queries: list[PromQuery] = []
    series: dict[str, RangeSeries] = {}
    places: dict[str, list[tuple[str, str | int]]] = {}
    for file, data in files:
        found = file_problems(data, file)
        problems += found
        for section, at, raw in _entries(data) if not found or isinstance(data, dict) else ():
            if not isinstance(raw, dict):
                continue
            if section == "queries":
                queries.append(_query(raw, file))
                places.setdefault(f"query {queries[-1].name}", []).append((file, at))
            else:
                places.setdefault(f"series {at}", []).append((file, at))
                series.setdefault(str(at), _series(raw, file))
    catalog = QueryCatalog(tuple(queries), series)
    return catalog, problems + duplicate_problems(catalog, places)


def query_files(directory: Path = QUERY_DIR) -> list[Path]:
    return sorted(p for p in directory.glob("*.yaml") if not p.name.startswith("_"))


def load_catalog(directory: Path = QUERY_DIR) -> QueryCatalog:
    """Every query file of a folder as one catalog; raises ValueError listing the problems of a broken one."""
    return _checked([(p.name, load_file(p)) for p in query_files(directory)])


def _checked(files: list[tuple[str, Any]]) -> QueryCatalog:
    catalog, problems = read_catalog(files)
    if problems:
        raise ValueError("; ".join(f"{p.file}: {'.'.join(map(str, p.path))}: {p.message}" for p in problems))
    return catalog


@functools.cache
def bundled() -> QueryCatalog:
    """The catalog of the bundled query files (playbooks/queries/), read once, and checked only when their text
    (or this code) changed (collectors/catalogs/validated.py)."""
    paths = tuple(query_files(QUERY_DIR))
    return validated(paths, lambda *data: _checked([(p.name, d) for p, d in zip(paths, data, strict=True)]))


# The bundled chart series by key: what `chart.metric` may name.
RANGE_METRICS: dict[str, RangeSeries] = bundled().series
