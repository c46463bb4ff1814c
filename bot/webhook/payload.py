"""The Alertmanager webhook payload (version 4), validated at the boundary."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

MAX_ALERTS = 1000
MAX_LABEL_VALUE = 1024


class Alert(BaseModel):
    """One alert; field names are Alertmanager's own (camelCase)."""

    model_config = ConfigDict(extra="allow")

    status: Literal["firing", "resolved"]
    labels: dict[str, str]
    annotations: dict[str, str] = Field(default_factory=dict)
    startsAt: datetime | None = None
    endsAt: datetime | None = None
    generatorURL: str = ""
    fingerprint: str = ""

    @field_validator("labels")
    @classmethod
    def _has_alertname(cls, labels: dict[str, str]) -> dict[str, str]:
        if not labels.get("alertname"):
            raise ValueError("every alert needs an alertname label")
        if any(len(v) > MAX_LABEL_VALUE for v in labels.values()):
            raise ValueError(f"label values are limited to {MAX_LABEL_VALUE} characters")
        return labels


class AlertmanagerPayload(BaseModel):
    """What Alertmanager POSTs to a webhook receiver."""

    model_config = ConfigDict(extra="allow")

    version: Literal["4"]
    groupKey: str = Field(min_length=1, max_length=4096)
    status: Literal["firing", "resolved"]
    receiver: str = ""
    groupLabels: dict[str, str] = Field(default_factory=dict)
    commonLabels: dict[str, str] = Field(default_factory=dict)
    commonAnnotations: dict[str, str] = Field(default_factory=dict)
    externalURL: str = ""
    truncatedAlerts: int = 0
    alerts: list[Alert] = Field(min_length=1, max_length=MAX_ALERTS)
