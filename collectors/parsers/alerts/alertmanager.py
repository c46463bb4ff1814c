"""Alertmanager webhook payloads (version 4) to facts: alert names, status, severity, symptoms, target.

Also reads the receiver's JSON-lines log (one payload per line), a `{"payload": ...}` wrapper and the
`/api/v2/alerts` list, since those are what people paste when a webhook was recorded.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from dataclasses import dataclass
from typing import Any

from collectors.catalogs.alert_map import symptom_for
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.alerts.alert_facts import (
    SEVERITY_RANK,
    TARGET_LABELS,
    Labelled,
    emit_labels,
    node_from,
    target_value,
)
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.sniffers.alertmanager import CURL_POST, sniff
from collectors.text import normalise

_STATUSES = ("firing", "resolved")
_API_STATES = {"active": "firing", "suppressed": "firing", "unprocessed": "firing"}


@dataclass(frozen=True)
class _Alert:
    name: str
    status: str
    labels: dict[str, str]
    pos: int  # offset of its alertname in the text, to cite lines near it
    labels_at: int  # offset of its `"labels"` key: other labels may come before the alertname
    annotations: dict[str, str]


class _Locator:
    """Offsets in the text to 1-based lines, finding `"key": "value"` pairs in order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line(self, pos: int) -> int:
        return bisect_right(self.starts, pos) if pos >= 0 else 0

    def find(self, key: str, value: str, start: int = 0) -> int:
        pattern = re.compile(r'"' + re.escape(key) + r'"\s*:\s*' + re.escape(json.dumps(value)))
        match = pattern.search(self.text, start) or pattern.search(self.text)
        return match.start() if match else -1


def _load(text: str) -> list[Any]:
    """JSON documents in the text: one body, or one per line, or the body a curl command posts."""
    if (posted := CURL_POST.match(text.lstrip())) is not None:
        body = text.lstrip()
        try:
            return [json.JSONDecoder().raw_decode(body, posted.end() - 1)[0]]
        except (ValueError, RecursionError):
            pass
    try:
        return [json.loads(text)]
    except (ValueError, RecursionError):
        pass
    docs: list[Any] = []
    for line in text.split("\n"):
        if line.lstrip().startswith("{"):
            try:
                docs.append(json.loads(line))
            except (ValueError, RecursionError):
                continue
    return docs or _cut_payload(text)


_ALERTS_KEY = re.compile(r'"alerts"\s*:\s*\[')
_GROUP_STATUS = re.compile(r'"status"\s*:\s*"(firing|resolved)"')


def _cut_payload(text: str) -> list[Any]:
    """A payload cut off after its alerts (a paste stops at the screen's end, inside `groupLabels` or
    `commonLabels`): the complete alert objects of its `alerts` list, with the group's status when it came first.
    An alert cut in the middle is left out: its labels may be missing."""
    start = _ALERTS_KEY.search(text)
    if start is None:
        return []
    decoder = json.JSONDecoder()
    alerts: list[Any] = []
    pos = start.end()
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text) or text[pos] != "{":
            break
        try:
            alert, pos = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError):
            break
        alerts.append(alert)
    status = _GROUP_STATUS.search(text, 0, start.start())
    if not alerts and status is None:
        return []
    # With every alert cut off, the envelope's own status (firing while any of its alerts fires) still stands.
    return [{"alerts": alerts, **({"status": status.group(1)} if status else {})}]


def _payloads(docs: list[Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for doc in docs:
        if isinstance(doc, dict) and isinstance(doc.get("payload"), dict):
            doc = doc["payload"]
        if isinstance(doc, dict) and isinstance(doc.get("alerts"), list):
            out.append(doc)
        elif isinstance(doc, list) and any(isinstance(a, dict) and "labels" in a for a in doc):
            out.append({"alerts": doc})
    return out


def _status(raw: Any) -> str:
    if isinstance(raw, dict):
        raw = _API_STATES.get(str(raw.get("state", "")), "")
    return raw if raw in _STATUSES else ""


def _alerts(payloads: list[dict[str, Any]], where: _Locator) -> list[_Alert]:
    out: list[_Alert] = []
    pos = 0
    for payload in payloads:
        for raw in payload["alerts"]:
            labels = raw.get("labels") if isinstance(raw, dict) else None
            if not isinstance(labels, dict):
                continue
            # Rancher 2.x's notifier (pkg/controllers/user/alert) names the alert in "alert_name", in words.
            key = next((k for k in ("alertname", "alert_name") if isinstance(labels.get(k), str)), None)
            if key is None:
                continue
            labels = {str(k): str(v) for k, v in labels.items()}
            found = where.find(key, labels[key], pos)
            pos = found + 1 if found >= 0 else pos
            status = _status(raw.get("status")) or _status(payload.get("status"))
            labels_at = where.text.rfind('"labels"', 0, found) if found >= 0 else -1
            notes = raw.get("annotations")
            notes = {str(k): str(v) for k, v in notes.items()} if isinstance(notes, dict) else {}
            out.append(_Alert(labels[key], status, labels, found, max(labels_at, 0), notes))
    return out


def _emit_names(sink: FactSink, alerts: list[_Alert], where: _Locator) -> None:
    names: set[str] = set()
    symptoms: set[str] = set()
    for alert in alerts:
        line = where.line(alert.pos)
        if alert.name not in names:
            names.add(alert.name)
            sink.add("alert.names", [alert.name], line)
        # A resolved alert is the all-clear: it names the alert, not a symptom that still holds (the webhook's own
        # triage names its playbooks from the alert, whatever its status).
        symptom = symptom_for(alert.name, alert.labels) if alert.status != "resolved" else None
        if symptom and symptom not in symptoms:
            symptoms.add(symptom)
            sink.add("alert.symptoms", [symptom], line)


def _emit_status(sink: FactSink, payloads: list[dict[str, Any]], alerts: list[_Alert], where: _Locator) -> None:
    group = next((s for p in payloads if (s := _status(p.get("status")))), "")
    status = "firing" if any(a.status == "firing" for a in alerts) else group or (alerts[0].status if alerts else "")
    if status:
        pos = where.find("status", status)
        sink.add("alert.status", status, where.line(pos), text=None if pos >= 0 else f"status: {status}")


def _emit_severity(sink: FactSink, alerts: list[_Alert], where: _Locator) -> None:
    rated = [a for a in alerts if a.labels.get("severity")]
    if not rated:
        return
    # The most severe firing alert speaks for the page; resolved ones only when nothing fires.
    best = max(rated, key=lambda a: (a.status != "resolved", SEVERITY_RANK.get(a.labels["severity"].lower(), 0)))
    severity = best.labels["severity"]
    sink.add("alert.severity", severity, where.line(where.find("severity", severity, best.labels_at)))


def _emit_target(sink: FactSink, alerts: list[_Alert], where: _Locator) -> None:
    ordered = sorted(alerts, key=lambda a: a.status == "resolved")  # firing alerts name the target first
    for fact in TARGET_LABELS:
        for alert in ordered:
            found = target_value(fact, alert.labels)
            if found:
                label, raw = found
                value = node_from(label, raw)
                sink.add(fact, value, where.line(where.find(label, raw, alert.labels_at)))
                break


def _read(sink: FactSink, text: str) -> None:
    docs = _load(text)
    payloads = _payloads(docs)
    if not payloads:
        sink.problem("no Alertmanager payload (a JSON object with an `alerts` list) found")
        return
    where = _Locator(text)
    alerts = _alerts(payloads, where)
    if not alerts:
        sink.problem("the Alertmanager payload holds no alert with an alertname label")
        # The group's status is the envelope's (Alertmanager's and Grafana's webhook), whatever its alerts hold.
        _emit_status(sink, payloads, alerts, where)
        return
    _emit_names(sink, alerts, where)
    _emit_status(sink, payloads, alerts, where)
    _emit_severity(sink, alerts, where)
    _emit_target(sink, alerts, where)
    emit_labels(sink, [_labelled(alert, where) for alert in alerts])


def _labelled(alert: _Alert, where: _Locator) -> Labelled:
    """The alert with the line of each label and annotation (its own, found after its `"labels"` key)."""
    def line(key: str, value: str, start: int) -> int:
        return where.line(where.find(key, value, start))

    notes_at = where.text.find('"annotations"', alert.labels_at)
    return Labelled(name=alert.name, line=where.line(alert.pos),
                    labels={k: (v, line(k, v, alert.labels_at)) for k, v in alert.labels.items()},
                    annotations={k: (v, line(k, v, max(notes_at, 0))) for k, v in alert.annotations.items()})


def parse(artifact: Artifact) -> ParseResult:
    """Facts from an Alertmanager webhook payload."""
    text = normalise(artifact.content)
    sink = FactSink(artifact, text.split("\n"))
    _read(sink, text)
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.ALERTMANAGER,), parse=parse, sniff=sniff)
