"""The access-log format catalog (access_logs.yaml): each proxy's default request line, as data."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "access_logs.yaml"
Family = Literal["nginx", "envoy", "haproxy", "haproxy-tcp", "aws-lb", "gcp-lb", "traefik", "app"]


class AccessLogFormat(BaseModel):
    """One format: where it comes from, how it is written upstream, and the pattern that reads its lines."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    family: Family
    source: str = Field(min_length=1)
    versions: str = Field(min_length=1)
    syntax: Literal["nginx", "envoy", "haproxy", "fields", "json", "python"]
    format: str
    pattern: str = ""  # text formats: the RE2 pattern that reads a line
    fields: dict[str, str] = Field(default_factory=dict)  # JSON formats: reader field -> dotted path
    sample: dict[str, str]
    expect: dict[str, Any]


class CompiledFormat:
    def __init__(self, spec: AccessLogFormat) -> None:
        self.spec = spec
        # Compiled for bytes: google-re2 converts str offsets on every call, which costs more than the match.
        self.regex: Any = re2.compile(spec.pattern.encode() or b"$^")  # google-re2 ships no type hints
        # Group names by position: reading m.groups() is cheaper than the wrapper's groupdict().
        by_index = {i: n.decode() if isinstance(n, bytes) else n for n, i in self.regex.groupindex.items()}
        self.names: tuple[str, ...] = tuple(by_index.get(i, "") for i in range(1, self.regex.groups + 1))


@cache
def formats() -> tuple[CompiledFormat, ...]:
    """Every format, compiled once per process, in the catalog's order (richest first)."""
    return tuple(CompiledFormat(spec) for spec in validated((_CATALOG,), _validate))


def _validate(raw: Any) -> tuple[AccessLogFormat, ...]:
    if not isinstance(raw, list):
        raise ValueError(f"{_CATALOG}: expected a list of formats")
    return tuple(AccessLogFormat.model_validate(entry) for entry in raw)


@cache
def text_formats() -> tuple[CompiledFormat, ...]:
    return tuple(f for f in formats() if f.spec.syntax != "json")


@cache
def json_formats() -> tuple[CompiledFormat, ...]:
    return tuple(f for f in formats() if f.spec.syntax == "json")
