"""Alerts as people paste them: notification text (Slack, e-mail, Teams...), its HTML, and amtool's output.

The shapes are data (collectors/catalogs/alert_forms.yaml, each with the program and versions that print it). The
text is read into alerts, each with its name and the line of each label and annotation; the alert's name gives its
symptom (alerts.yaml) and its labels give facts (alert_labels.yaml), as a webhook payload's do.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from collectors.catalogs.alert_forms import CompiledForm, forms
from collectors.catalogs.alert_labels import catalog as label_catalog
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.alerts.alert_facts import SEVERITY_RANK, Labelled, emit_alerts
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.sniffers.alert_text import sniff
from collectors.text import normalise

# An e-mail's HTML source: each <br /> ends a pair; other tags are only markup. Bounded, so linear on any line.
_BREAK = re.compile(r"<br\s{0,5}/?>|\t", re.IGNORECASE)
_TAG = re.compile(r"<[^<>\n]{0,400}>")
# Alertmanager's email.html puts "<strong>Labels</strong><br />" before the first "name = value"; copied out of a
# mail client the break can vanish, gluing the heading to the pair: "Labelsalertname = KubeSchedulerDown".
_GLUED_HEADING = re.compile(r"^(\s*(?:Labels|Annotations))([a-z_][A-Za-z0-9_]* = )")
_NAME = re.compile(r"[A-Za-z_][\w:]*$")
_LABELLED_NAME = re.compile(r"[^\s{}](?:[^\n{}]{0,198}[^\s{}])?$")
_AMTOOL_STATES = {"active": "firing", "suppressed": "firing", "unprocessed": "firing"}
_MAX_LINE = 4096


@dataclass
class _Reading:
    """What the text says, with the 1-based line each thing was first read from."""

    alerts: list[Labelled] = field(default_factory=list)
    titles: dict[str, int] = field(default_factory=dict)  # names read from titles, not from any alert's labels
    status: tuple[str, int] | None = None
    severity: tuple[str, int] | None = None
    section: str = "labels"  # where the current alert's pairs go
    open: bool = False  # an alert is open: loose pair forms may be read
    # An HTML table written one cell a line: the <th> names waiting for their <td>, the current row's names, and
    # the header row's names, which each later row of <td> cells fills in again.
    keys: list[str] = field(default_factory=list)
    row: list[str] = field(default_factory=list)
    header: list[str] = field(default_factory=list)

    def current(self) -> Labelled:
        if not self.alerts:
            self.alerts.append(Labelled())
        return self.alerts[-1]

    def start(self, number: int) -> Labelled:
        self.alerts.append(Labelled(line=number))
        self.section, self.open = "labels", True
        return self.alerts[-1]

    def set_status(self, status: str, line: int) -> None:
        status = _AMTOOL_STATES.get(status.lower(), status.lower())
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

    def name(self, name: str, number: int, alert: Labelled, labelled: bool = False) -> None:
        # A word taken from a title must look like an alert name; the alertname label's own value is one whatever
        # it holds (label values are any UTF-8: a hand-made "test DiskRunningFull2" is still the alert's name).
        fits = _LABELLED_NAME.match(name) if labelled else _NAME.match(name)
        if fits and name.lower() not in ("firing", "resolved", "alert"):
            alert.name = alert.name or name
            alert.line = alert.line or number

    def pair(self, key: str, value: str, number: int) -> None:
        if key == "alertname":
            alert = self.current()
            if "alertname" in alert.labels or (alert.name and alert.name != value):
                alert = self.start(number)
            self.open = True
            alert.labels.setdefault(key, (value, number))
            self.name(value, number, alert, labelled=True)
            return
        alert = self.current()
        if self.section == "annotations":
            alert.annotations.setdefault(key, (value, number))
            return
        alert.labels.setdefault(key, (value, number))
        if key == "severity":
            self.set_severity(value, number)


def _known_labels() -> frozenset[str]:
    cat = label_catalog()
    return frozenset({"alertname", "severity", *cat.targets_flat(), *(r.label for r in cat.labels)})


def _cells(line: str) -> list[str]:
    if (glued := _GLUED_HEADING.match(line)) is not None:
        return [glued.group(1), line[glued.end(1):]]
    if "<" not in line and "\t" not in line:
        return [line]
    return [_TAG.sub(" ", cell) for cell in _BREAK.split(line)]


def _read_cell(reading: _Reading, cell: str, number: int, known: frozenset[str]) -> None:
    for form in forms():
        how = form.spec.how
        if form.spec.raw:
            continue
        if how == "pairs":
            if _pairs(reading, form, cell, number):
                return
            continue
        match = form.regex.search(cell)
        if match is None:
            continue
        groups: dict[str, Any] = match.groupdict()
        if how == "title":
            reading.set_status(groups["status"], number)
            if groups.get("name"):
                reading.titles.setdefault(groups["name"], number)
            continue  # a title can share its line with a pair ("Subject: [FIRING:1] X" is not one)
        if how == "section":
            _section(reading, groups["section"].lower(), number)
            if groups.get("rest"):
                _read_cell(reading, groups["rest"], number, known)
        elif how == "status":
            reading.set_status(groups["status"], number)
        elif how == "severity":
            reading.set_severity(groups["severity"], number)
        elif how == "group":
            for word in groups["pairs"].split():
                key, _, value = word.partition("=" if "=" in word else ":")
                if key and value and _NAME.match(key):
                    reading.pair(key, value, number)
        elif how == "row":
            alert = reading.start(number)
            reading.open = False  # a table row is a whole alert
            reading.name(groups["name"], number, alert)
            if groups.get("state"):
                reading.set_status(groups["state"], number)
            if groups.get("summary"):
                alert.annotations.setdefault("summary", (groups["summary"].strip(), number))
        elif how == "alert":
            alert = reading.current()
            if alert.name:
                alert = reading.start(number)
            # Its Description and other prose lines are no labels: loose pairs wait for a Details/Labels heading.
            reading.open = False
            reading.name(groups["name"], number, alert)
            if groups.get("severity"):
                reading.set_severity(groups["severity"], number)
        elif how == "pair":
            key, value = groups["name"], groups["value"]
            if form.spec.in_labels and not (reading.open or key in known):
                continue
            reading.pair(key, value, number)
        return


def _section(reading: _Reading, section: str, number: int) -> None:
    if section in ("labels", "details"):
        alert = reading.current()
        if alert.labels and "alertname" in alert.labels:
            reading.start(number)
        reading.section, reading.open = "labels", True
    elif section == "annotations":
        reading.section = "annotations"
    else:  # Source, Silence, Value...: the alert's lists are over
        reading.section = "labels"


def _pairs(reading: _Reading, form: CompiledForm, cell: str, number: int) -> bool:
    """A run of name="value" pairs (amtool -o extended, a PromQL-style label set): one alert."""
    if '="' not in cell:
        return False
    cut = form.split.search(cell) if form.split is not None else None
    head, tail = (cell[:cut.start() + 1], cell[cut.start() + 1:]) if cut is not None else (cell, "")
    labels = [(m.group(1), m.group(2)) for m in form.regex.finditer(head)]
    if not any(key == "alertname" for key, _ in labels):
        return False
    alert = reading.start(number)
    reading.open = False
    for key, value in labels:
        alert.labels.setdefault(key, (value, number))
        if key == "alertname":
            reading.name(value, number, alert)
        elif key == "severity":
            reading.set_severity(value, number)
    for m in form.regex.finditer(tail):
        alert.annotations.setdefault(m.group(1), (m.group(2), number))
    state = tail.rstrip().rsplit(None, 1)[-1] if tail.strip() else ""
    if state in _AMTOOL_STATES:
        reading.set_status(state, number)
    return True


def _table(reading: _Reading, line: str, number: int) -> bool:
    """A line of a one-cell-a-line HTML table (an issue a GitHub receiver opened); True when it was one."""
    for form in forms():
        if not form.spec.raw:
            continue
        match = form.regex.search(line)
        if match is None:
            continue
        groups: dict[str, Any] = match.groupdict()
        how = form.spec.how
        if how == "tr" and not groups["edge"]:
            reading.row, reading.keys = [], list(reading.header)
        elif how == "tr":
            if len(reading.row) > 1 and len(reading.keys) == len(reading.row):
                reading.header = reading.row  # a row of names only: the header of the rows below
            reading.keys = []
        elif how == "key":
            reading.row.append(groups["name"])
            reading.keys.append(groups["name"])
        elif how == "value" and reading.keys:
            value = _TAG.sub("", groups["value"]).strip()
            key = reading.keys.pop(0)
            if value and key not in ("StartsAt", "Links"):
                reading.pair(key, value, number)
        return True
    return False


def read(lines: list[str]) -> _Reading:
    """The alerts the lines hold."""
    reading = _Reading()
    known = _known_labels()
    for number, line in enumerate(lines, 1):
        if len(line) > _MAX_LINE or not line.strip():
            continue
        if "<t" in line and _table(reading, line, number):
            continue
        for cell in _cells(line):
            if cell.strip():
                _read_cell(reading, cell, number, known)
    reading.alerts = [a for a in reading.alerts if a.name]
    return reading


def parse(artifact: Artifact) -> ParseResult:
    """Facts from alerts as pasted: rendered notifications and amtool output."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    reading = read(lines)
    if reading.alerts or reading.titles:
        emit_alerts(sink, reading.alerts, reading.titles)
    elif any(line.strip() for line in lines):
        sink.problem("no alert name found in the alert text")
    # A body that names no alert ("**Status:** firing" / "**Severity:** warning") still says these.
    if reading.status:
        sink.add("alert.status", reading.status[0], reading.status[1])
    if reading.severity:
        sink.add("alert.severity", reading.severity[0], reading.severity[1])
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.ALERT_TEXT,), parse=parse, sniff=sniff, reads_many=True)
