"""The status-field catalog (status_fields.yaml): where programs write an HTTP response's status in a log line."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "status_fields.yaml"


class EnvoyFlag(BaseModel):
    """What one Envoy response flag says about a failed request."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    kind: str = ""  # http.failure_kinds; "" when the flag says nothing of how the proxy failed
    symptom: str | None = None


class StatusFamily(BaseModel):
    """A family of keys one program (or one convention) writes the status under, with its source."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    source: str = Field(min_length=1)
    versions: str = Field(min_length=1)
    status: tuple[str, ...] = Field(min_length=1)
    flags: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()  # one of these keys must sit beside the status (an ambiguous key's guard)
    render: str = Field(min_length=1)
    sample: dict[str, str]
    expect: dict[str, object]


class StatusCatalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    envoy_flags: dict[str, EnvoyFlag]
    families: tuple[StatusFamily, ...] = Field(min_length=1)


@cache
def catalog() -> StatusCatalog:
    return validated((_CATALOG,), StatusCatalog.model_validate)


@cache
def status_keys() -> frozenset[str]:
    """Every key any family reads a status from: a line holding none of them is not looked at further."""
    return frozenset(k for f in catalog().families for k in f.status)
