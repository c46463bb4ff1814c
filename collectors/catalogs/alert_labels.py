"""What an alert's labels say as facts, from the catalog in alert_labels.yaml."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.catalogs.validated import validated
from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "alert_labels.yaml"
_INT = re.compile(r"^\s*(\d{1,4})\s*$")


class TargetLabels(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    labels: tuple[str, ...] = Field(min_length=1)
    source: str = Field(min_length=1)


class LabelRule(BaseModel):
    """One label (optionally of some alerts, or with some values) read as one fact."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    label: str = Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    fact: str
    read: Literal["str", "ints", "list"]
    alerts: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    source: str = Field(min_length=1)

    @model_validator(mode="after")
    def _known_fact(self) -> LabelRule:
        if self.fact not in VOCABULARY:
            raise ValueError(f"label {self.label}: unknown fact {self.fact}")
        return self

    def applies(self, alertname: str, value: str) -> bool:
        return ((not self.alerts or any(fnmatchcase(alertname, p) for p in self.alerts))
                and (not self.values or any(fnmatchcase(value, p) for p in self.values)))


class Subject(BaseModel):
    """The labels an alert family's rule keeps from its own series: the only scrape labels that name its subject."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    alerts: tuple[str, ...] = Field(min_length=1)
    carries: tuple[str, ...]
    source: str = Field(min_length=1)


class LabelCatalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    targets: dict[str, TargetLabels]
    labels: tuple[LabelRule, ...]
    scrape: frozenset[str]
    subjects: tuple[Subject, ...]

    @model_validator(mode="after")
    def _one_entry_per_alert(self) -> LabelCatalog:
        names = [name for entry in self.subjects for name in entry.alerts]
        if len(names) != len(set(names)):
            raise ValueError("an alert is listed under more than one subject entry")
        return self

    def targets_flat(self) -> tuple[str, ...]:
        return tuple(label for entry in self.targets.values() for label in entry.labels)


@cache
def catalog() -> LabelCatalog:
    return validated((_CATALOG,), LabelCatalog.model_validate)


@cache
def _carried() -> dict[str, frozenset[str]]:
    return {name: frozenset(entry.carries) for entry in catalog().subjects for name in entry.alerts}


def subject_labels(labels: Mapping[str, str]) -> dict[str, str]:
    """The alert's labels without the scrape's own (the exporter's pod, namespace, instance...) where its rule is
    known to keep no such label of its series; an unknown alert keeps them all. `exported_X` is X's own value
    renamed by the scrape, so it stays when X is carried."""
    carried = _carried().get(labels.get("alertname", ""))
    if carried is None:
        return dict(labels)
    scrape = catalog().scrape
    return {k: v for k, v in labels.items()
            if (base := k.removeprefix("exported_")) not in scrape or base in carried}


def target_labels() -> dict[str, tuple[str, ...]]:
    """Target fact -> the labels that carry it, best first."""
    return {fact: entry.labels for fact, entry in catalog().targets.items()}


@dataclass(frozen=True)
class LabelFact:
    fact: str
    value: str | int | list[str] | list[int]
    label: str  # the label it was read from, to cite its line


def label_facts(alertname: str, labels: Mapping[str, str]) -> list[LabelFact]:
    """Facts an alert's labels give beyond its target; a value that cannot be read as the fact's type gives none."""
    out: list[LabelFact] = []
    for rule in catalog().labels:
        raw = labels.get(rule.label, "").strip()
        if not raw or not rule.applies(alertname, raw):
            continue
        value = _read(rule.read, raw)
        if value is not None:
            out.append(LabelFact(rule.fact, value, rule.label))
    return out


def _read(how: str, raw: str) -> str | int | list[str] | list[int] | None:
    if how == "str":
        return raw
    if how == "list":
        return [raw]
    codes = [int(m.group(1)) for part in raw.split(",") if (m := _INT.match(part))]
    # err_code="0" is dcgm-exporter's "no Xid yet" value: no code at all.
    codes = [c for c in codes if c > 0]
    return codes or None
