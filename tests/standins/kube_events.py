"""core/v1 Event <-> events.k8s.io/v1 Event: two views of the same stored events, as in the real API server.

Fields without a counterpart keep Go's zero values on the way out: an event recorded through core/v1 without
`eventTime` reads back from events.k8s.io/v1 with `"eventTime": null`, exactly as a real cluster answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# (core/v1 name, events.k8s.io/v1 name), in the order events.k8s.io/v1 serialises its fields.
_RENAMES = (
    ("eventTime", "eventTime"),
    ("series", "series"),
    ("reportingComponent", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("action", "action"),
    ("reason", "reason"),
    ("involvedObject", "regarding"),
    ("related", "related"),
    ("message", "note"),
    ("type", "type"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
)

# Go's zero values for the fields the events.k8s.io/v1 struct never omits.
_ALWAYS: dict[str, Any] = {"eventTime": None, "regarding": {}, "deprecatedSource": {}, "deprecatedFirstTimestamp": None,
           "deprecatedLastTimestamp": None}


def to_events_v1(core: Mapping[str, Any], with_type: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Event", "apiVersion": "events.k8s.io/v1"} if with_type else {}
    out["metadata"] = core.get("metadata", {})
    for old, new in _RENAMES:
        if old in core and core[old] not in ("", None):
            out[new] = core[old]
        elif new in _ALWAYS:
            out[new] = _ALWAYS[new]
    return out


def to_core(event: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": "Event", "apiVersion": "v1", "metadata": event.get("metadata", {})}
    for old, new in _RENAMES:
        if new in event and event[new] is not None:
            out[old] = event[new]
    return out
