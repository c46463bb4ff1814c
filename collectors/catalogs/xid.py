"""The NVIDIA Xid catalog: what each code means and whether it is usually an after-effect."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "xid.yaml"

Severity = Literal["info", "warning", "critical"]
# Where the fault usually lies; "driver" covers the GPU's firmware (GSP, micro-controllers).
XidClass = Literal["application", "driver", "hardware", "after-effect"]


class XidEntry(BaseModel):
    """One Xid code, described in our own words with its sources."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True, populate_by_name=True)

    code: int = Field(ge=0)
    name: str = Field(min_length=1)
    meaning: str = Field(min_length=1)
    likely_cause: str = Field(min_length=1)
    action: str = Field(min_length=1)
    secondary: bool = False  # usually an after-effect of another error: not a root cause on its own
    severity: Severity
    cause_class: XidClass = Field(alias="class")
    sources: tuple[str, ...] = Field(min_length=1)
    uncertain: bool = False  # public description thin or generation-dependent: verify before relying on it


@cache
def _entries() -> dict[int, XidEntry]:
    return validated((_CATALOG,), _validate)


def _validate(raw: Any) -> dict[int, XidEntry]:
    if not isinstance(raw, dict):
        raise ValueError(f"{_CATALOG}: expected a mapping of Xid code to entry")
    return {int(code): XidEntry(code=int(code), **fields) for code, fields in raw.items()}


def load_catalog() -> dict[int, XidEntry]:
    """Every catalogued Xid by code (read once; each call returns a fresh dict over the shared entries)."""
    return dict(_entries())


def lookup(code: int) -> XidEntry | None:
    return _entries().get(code)


@cache
def secondary_codes() -> frozenset[int]:
    """Codes usually logged as an after-effect of another error (e.g. 45)."""
    return frozenset(code for code, entry in _entries().items() if entry.secondary)


def pages(entry: XidEntry) -> bool:
    """Whether a new occurrence should page someone: a critical fault of the GPU, its driver or firmware.

    Application faults and after-effects warn instead: one user's bad kernel must not page the on-call
    (issue 28; the shipped rule GPUXidError follows this, deploy/prometheus/rules.yml).
    """
    return entry.severity == "critical" and entry.cause_class in ("hardware", "driver")


@cache
def paging_codes() -> frozenset[int]:
    """The catalogued codes whose new occurrence pages (see pages())."""
    return frozenset(code for code, entry in _entries().items() if pages(entry))
