"""Link templates filled in for one alert: a dashboard URL with the target's names as its variables.

A variable the alert has no value for is left out rather than sent empty: Grafana reads `var-pod=` as "the
pod named nothing" and shows empty panels, where a missing variable keeps the dashboard's own default.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

_PLACEHOLDER = re.compile(r"\{([a-z]+)\}")


def link_values(labels: Mapping[str, str], target: Mapping[str, Any]) -> dict[str, str]:
    """What a link template's {names} stand for: the alert's name and cluster, the triage target's names."""
    return {"alertname": labels.get("alertname", ""), "namespace": target.get("namespace") or "",
            "service": (target.get("service") or "").split("/")[-1], "pod": target.get("pod") or "",
            "node": target.get("node") or "", "cluster": labels.get("cluster", "")}


def fill_link(template: str, values: Mapping[str, str]) -> str | None:
    """The template with each {name} URL-encoded. A query parameter (or fragment parameter) whose {name} has no
    value is dropped; a {name} without value anywhere else (the path) leaves no usable link: None."""
    def fill(text: str) -> str:
        return _PLACEHOLDER.sub(lambda m: quote(values.get(m.group(1), m.group(0)) or "", safe="")
                                if m.group(1) in values else m.group(0), text)

    def empty(text: str) -> bool:
        return any(name in values and not values[name] for name in _PLACEHOLDER.findall(text))

    def params(text: str) -> str:
        return "&".join(fill(part) for part in text.split("&") if not empty(part))

    rest, _, fragment = template.partition("#")
    base, _, query = rest.partition("?")
    if empty(base) or ("=" not in fragment and empty(fragment)):
        return None
    query, fragment = params(query), params(fragment) if "=" in fragment else fill(fragment)
    return fill(base) + (f"?{query}" if query else "") + (f"#{fragment}" if fragment else "")
