"""Which symptom (playbook) an alert points to, from the rules in alerts.yaml."""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).parent / "alerts.yaml"

# A playbook id. collectors may not import playbooks, so the catalog only checks the shape here; a test checks
# that every symptom in alerts.yaml names a bundled playbook (tests/unit/parsers/test_alertmanager.py).
SYMPTOM_ID = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class AlertRule(BaseModel):
    """Alert-name patterns (and optional label patterns) that map to one symptom, or to none."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alerts: tuple[str, ...] = Field(min_length=1)
    labels: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    symptom: str | None = Field(pattern=SYMPTOM_ID)
    # "namespace": the alert is about a namespace as a whole (a ResourceQuota), so when its labels name no workload
    # or pod, the namespace itself is the triage target.
    scope: Literal["namespace"] | None = None

    def matches(self, alertname: str, labels: Mapping[str, str]) -> bool:
        if not any(fnmatchcase(alertname, pattern) for pattern in self.alerts):
            return False
        return all(any(fnmatchcase(labels.get(key, ""), p) for p in patterns)
                   for key, patterns in self.labels.items())


class AlertCatalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    rules: tuple[AlertRule, ...]


@cache
def load_rules() -> tuple[AlertRule, ...]:
    """The rules in file order (read once)."""
    raw = load_file(_CATALOG)
    return AlertCatalog.model_validate(raw).rules


def rule_for(alertname: str, labels: Mapping[str, str] | None = None) -> AlertRule | None:
    """The first rule matching the alert, or None when no rule names it."""
    return next((rule for rule in load_rules() if rule.matches(alertname, labels or {})), None)


def symptom_for(alertname: str, labels: Mapping[str, str] | None = None) -> str | None:
    """The symptom id of the first rule matching the alert, or None when it maps to none."""
    rule = rule_for(alertname, labels)
    return rule.symptom if rule is not None else None
