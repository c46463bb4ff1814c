"""The load generator summary catalog (load_reports.yaml): the lines hey, vegeta, ab, wrk and k6 print about a run."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "load_reports.yaml"

Role = Literal["status_count", "status_counts", "requests", "non_2xx", "failed_share", "check_result"]


class ReportLine(BaseModel):
    """One summary line a load generator prints, and what its numbers are."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    tool: str = Field(min_length=1)
    role: Role
    pattern: str = Field(min_length=1)
    opens: str | None = None
    # check_result only: the line before the result, the check's name, naming the status it expects (group 1)
    after: str | None = None
    source: str = Field(min_length=1)
    versions: str = Field(min_length=1)
    render: tuple[str, ...] = Field(min_length=1)

    @model_validator(mode="after")
    def _compiles(self) -> ReportLine:
        re2.compile(self.pattern)  # a bad pattern fails the catalog's load, not a triage
        if self.opens is not None:
            re2.compile(self.opens)
        if (self.role == "status_count") != (self.opens is not None):
            raise ValueError(f"load_reports catalog: {self.tool} {self.role}: opens goes with status_count only")
        if (self.role == "check_result") != (self.after is not None):
            raise ValueError(f"load_reports catalog: {self.tool} {self.role}: after goes with check_result only")
        if self.after is not None:
            re2.compile(self.after)
        return self


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entries: tuple[ReportLine, ...] = Field(min_length=1)


@cache
def catalog() -> Catalog:
    return validated((_CATALOG,), Catalog.model_validate)


@cache
def compiled() -> tuple[tuple[ReportLine, Any, Any], ...]:
    """Each entry with its compiled pattern and heading (None when it has none)."""
    return tuple((e, re2.compile(e.pattern), re2.compile(e.opens) if e.opens else None) for e in catalog().entries)


@cache
def any_entry() -> Any:
    """One RE2 set of every entry's pattern and heading, anchored at the start of a line as `match` is: a line that
    none of them matches (nearly every line of a log) costs one call instead of two per entry."""
    found = re2.Set.MatchSet()
    for entry in catalog().entries:
        found.Add(entry.pattern)
        if entry.opens is not None:
            found.Add(entry.opens)
    found.Compile()
    return found


@cache
def after_pattern(pattern: str) -> Any:
    """A check_result entry's pattern for the line before it, compiled once."""
    return re2.compile(pattern)
