"""Alerts as people see them in Slack or mail: names, status, severity, symptoms and target labels.

Reads the shapes Alertmanager's default and common templates render: a `[FIRING:2] Name ...` title,
`Alert: Name - severity` lines, and label lists (`alertname = X`, `- pod: y`, `• *namespace:* `z``).
"""

from __future__ import annotations

import re

from collectors.catalogs.alert_map import symptom_for
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.alertmanager import SEVERITY_RANK, TARGET_LABELS, node_from, target_value
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

_TITLE = re.compile(r"\[(FIRING|RESOLVED)(?::\d+)?\]\s*([A-Za-z_][\w:]*)?", re.IGNORECASE)
_ALERT_LINE = re.compile(r"\b(?:Alert|ALERT|Alertname|AlertName)\*?\s*:\*?\s*`?([A-Z_][\w:]*)`?"
                         r"(?:\s+[-\u2013]\s+`?\[?([A-Za-z]+)\]?`?)?")
_LABELS_OF_INTEREST = ("alertname", "severity", "status", "reason",
                       *{label for labels in TARGET_LABELS.values() for label in labels})
# `key = value`, `key: value`, `key="value"`, with the bullets, bold and backticks chat templates add.
_PAIR = re.compile(r"(?<![\w.])(" + "|".join(sorted(_LABELS_OF_INTEREST, key=len, reverse=True)) +
                   r")\*?\s*(?:=|:)\*?\s*[`\"']?([\w.\-:\[\]]+)")
_NAME = re.compile(r"[A-Za-z_][\w:]*$")


class _Reading:
    """What the text says, with the 1-based line each thing was first read from."""

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.status: tuple[str, int] | None = None
        self.severity: tuple[str, int] | None = None
        self.labels: dict[str, tuple[str, int]] = {}

    def name(self, name: str, line: int) -> None:
        if _NAME.match(name) and name.lower() not in ("firing", "resolved", "alert"):
            self.names.setdefault(name, line)

    def set_status(self, status: str, line: int) -> None:
        status = status.lower()
        if status not in ("firing", "resolved"):
            return
        # One firing alert in a grouped message makes the message a firing one.
        if self.status is None or (status == "firing" and self.status[0] != "firing"):
            self.status = (status, line)

    def set_severity(self, severity: str, line: int) -> None:
        rank = SEVERITY_RANK.get(severity.lower())
        if rank is None:
            return
        if self.severity is None or rank > SEVERITY_RANK.get(self.severity[0].lower(), 0):
            self.severity = (severity, line)


def _read_line(reading: _Reading, line: str, number: int) -> None:
    for title in _TITLE.finditer(line):
        reading.set_status(title.group(1), number)
        if title.group(2):
            reading.name(title.group(2), number)
    for alert in _ALERT_LINE.finditer(line):
        reading.name(alert.group(1), number)
        if alert.group(2):
            reading.set_severity(alert.group(2), number)
    for pair in _PAIR.finditer(line):
        key, value = pair.group(1), pair.group(2)
        if key == "alertname":
            reading.name(value, number)
        elif key == "severity":
            reading.set_severity(value, number)
        elif key == "status":
            reading.set_status(value, number)
        else:
            reading.labels.setdefault(key, (value, number))


def _emit(sink: FactSink, reading: _Reading) -> None:
    labels = {key: value for key, (value, _) in reading.labels.items()}
    symptoms: set[str] = set()
    for name, line in reading.names.items():
        sink.add("alert.names", [name], line)
        symptom = symptom_for(name, labels)
        if symptom and symptom not in symptoms:
            symptoms.add(symptom)
            sink.add("alert.symptoms", [symptom], line)
    if reading.status:
        sink.add("alert.status", reading.status[0], reading.status[1])
    if reading.severity:
        sink.add("alert.severity", reading.severity[0], reading.severity[1])
    for fact in TARGET_LABELS:
        found = target_value(fact, labels)
        if found:
            label = found[0]
            sink.add(fact, node_from(label, found[1]), reading.labels[label][1])


def parse(artifact: Artifact) -> ParseResult:
    """Facts from an alert rendered as chat or mail text."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    try:
        reading = _Reading()
        for number, line in enumerate(lines, 1):
            _read_line(reading, line, number)
        if reading.names:
            _emit(sink, reading)
        elif any(line.strip() for line in lines):
            sink.problem("no alert name found in the alert text")
    except Exception as exc:  # a parser must never take the triage down with it
        sink.problem(f"internal: alert text parser failed: {type(exc).__name__}: {exc}")
    return sink.done()


def sniff(text: str) -> int:
    """0-100 confidence that the text is a rendered alert."""
    head = text[:8000]
    if head.lstrip().startswith(("{", "[{")):
        return 0  # JSON is the Alertmanager payload's, not ours
    if _TITLE.search(head):
        return 90
    if re.search(r"(?<![\w\"])alertname\*?\s*(?:=|:)", head):
        return 80
    if _ALERT_LINE.search(head):
        return 50
    return 0


PARSER = Parser(kinds=(ArtifactKind.ALERT_TEXT,), parse=parse, sniff=sniff, reads_many=True)
