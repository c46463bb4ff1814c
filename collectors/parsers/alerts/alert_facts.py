"""One alert's name, labels and annotations as facts, whatever form it came in (payload, text, amtool, HTML)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from collectors.catalogs.alert_labels import label_facts, subject_labels, target_labels
from collectors.catalogs.alert_map import rule_for, symptom_for
from collectors.parsers.sink import FactSink

# Target facts and the labels that carry them, best first (alert_labels.yaml says which program sets each).
TARGET_LABELS: dict[str, tuple[str, ...]] = target_labels()
SEVERITY_RANK = {"critical": 4, "page": 4, "error": 3, "high": 3, "warning": 2, "warn": 2, "medium": 2,
                 "info": 1, "low": 1, "none": 0}


def target_value(fact: str, labels: Mapping[str, str]) -> tuple[str, str] | None:
    """(label, value) for a target fact, skipping values that name no workload or node."""
    for label in TARGET_LABELS[fact]:
        value = labels.get(label, "").strip()
        if label == "instance":
            value = _instance_host(value)
        if value and value != "POD":
            return label, labels.get(label, "")
    return None


def _instance_host(instance: str) -> str:
    """The host part of `instance` when it names a node; an IP or localhost names a scrape target only."""
    host = instance.rsplit(":", 1)[0] if instance.count(":") == 1 else instance
    host = host.strip("[]")
    if host in ("", "localhost"):
        return ""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return host
    return ""


def node_from(label: str, value: str) -> str:
    return _instance_host(value) if label == "instance" else value


_MAX_PAIRS = 200  # alert.labels / alert.annotations entries per artifact: a storm's paste need not list them all


@dataclass
class Labelled:
    """An alert as read: its name and, for each label and annotation, the value and the 1-based line it is on."""

    name: str = ""
    line: int = 0
    labels: dict[str, tuple[str, int]] = field(default_factory=dict)
    annotations: dict[str, tuple[str, int]] = field(default_factory=dict)

    def plain(self) -> dict[str, str]:
        return {key: value for key, (value, _) in self.labels.items()}


def emit_alerts(sink: FactSink, alerts: list[Labelled], titles: dict[str, int]) -> None:
    """Names and symptoms, the target, label facts and the labels themselves, for alerts read from text."""
    merged: dict[str, str] = {}
    for alert in alerts:
        for key, value in alert.plain().items():
            merged.setdefault(key, value)
    symptoms: set[str] = set()
    # A title's first word is the first group label's value: an alert name when the catalog knows it, or when no
    # alert's own labels say otherwise.
    names = {n: line for n, line in titles.items() if not alerts or rule_for(n) is not None}
    by_name: dict[str, dict[str, str]] = {}
    for alert in alerts:
        names.setdefault(alert.name, alert.line)
        by_name.setdefault(alert.name, alert.plain())
    for name, line in sorted(names.items(), key=lambda item: item[1]):
        sink.add("alert.names", [name], line)
        symptom = symptom_for(name, by_name.get(name, merged))
        if symptom and symptom not in symptoms:
            symptoms.add(symptom)
            sink.add("alert.symptoms", [symptom], line)
    _emit_targets(sink, alerts)
    emit_labels(sink, alerts)


def _emit_targets(sink: FactSink, alerts: list[Labelled]) -> None:
    for fact in target_labels():
        for alert in alerts:
            found = target_value(fact, subject_labels({"alertname": alert.name, **alert.plain()}))
            if found:
                label = found[0]
                sink.add(fact, node_from(label, found[1]), alert.labels[label][1])
                break


def emit_labels(sink: FactSink, alerts: list[Labelled]) -> None:
    """The facts the labels carry (alert_labels.yaml), and every label and annotation as `name=value`."""
    pairs = 0
    for alert in alerts:
        for got in label_facts(alert.name, alert.plain()):
            sink.add(got.fact, got.value, alert.labels[got.label][1])
        for fact, entries in (("alert.labels", alert.labels), ("alert.annotations", alert.annotations)):
            for key, (value, line) in entries.items():
                if pairs < _MAX_PAIRS:
                    pairs += 1
                    sink.add(fact, [f"{key}={value}"], line)
