"""How pasted alerts look (alert_forms.yaml): each form's pattern, what it reads and the program that prints it."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any, Literal

import re2
from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.validated import validated

_CATALOG = Path(__file__).parent / "alert_forms.yaml"

How = Literal["title", "section", "status", "severity", "group", "pair", "pairs", "row", "alert", "tr", "key", "value"]


class AlertForm(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    how: How
    pattern: str
    split: str | None = None
    in_labels: bool = False
    raw: bool = False
    source: str = Field(min_length=1)


class CompiledForm:
    def __init__(self, spec: AlertForm) -> None:
        self.spec = spec
        self.regex: Any = re2.compile(spec.pattern)  # google-re2 ships no type hints
        self.split: Any = re2.compile(spec.split) if spec.split else None


@cache
def forms() -> tuple[CompiledForm, ...]:
    """Every form, compiled once per process, in catalog order."""
    return tuple(CompiledForm(spec) for spec in validated((_CATALOG,), _validate))


def _validate(raw: Any) -> tuple[AlertForm, ...]:
    entries = raw.get("forms") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{_CATALOG}: expected a mapping with a `forms` list")
    return tuple(AlertForm.model_validate(entry) for entry in entries)
