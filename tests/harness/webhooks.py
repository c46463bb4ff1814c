"""Alertmanager webhook bodies (version 4, as Alertmanager posts them) for tests that deliver to the bot directly:
crash windows, concurrent deliveries, orders Alertmanager's own timing would not give."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

NO_TIME = "0001-01-01T00:00:00Z"  # Alertmanager's endsAt of a firing alert


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def webhook_body(labels: Mapping[str, str], *, starts: datetime, fingerprint: str, status: str = "firing",
                 ends: datetime | None = None, annotations: Mapping[str, str] | None = None,
                 group_key: str | None = None) -> dict[str, Any]:
    """One group of one alert; the group key defaults to the alert name's, as `group_by: [alertname]` makes it."""
    shown = dict(annotations or {"summary": f"{labels['alertname']} fired"})
    alert = {"status": status, "labels": dict(labels), "annotations": shown, "startsAt": iso(starts),
             "endsAt": iso(ends) if ends else NO_TIME, "generatorURL": "http://127.0.0.1:9090/graph",
             "fingerprint": fingerprint}
    return {"receiver": "bot", "status": status, "alerts": [alert], "groupLabels": {"alertname": labels["alertname"]},
            "commonLabels": dict(labels), "commonAnnotations": shown, "externalURL": "http://am:9093", "version": "4",
            "groupKey": group_key or f'{{}}:{{alertname="{labels["alertname"]}"}}', "truncatedAlerts": 0}
