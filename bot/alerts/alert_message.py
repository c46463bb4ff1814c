"""The root message of an alert group: its data (links, target, verdict) from a webhook payload and a report.

A shared service: the webhook builds the root from the payload, and the Slack app's Silence button reads the
matchers back. The triage's verdict is put on it by bot/delivery/roots.py; rendering is bot/render/alert_root.py's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from sqlalchemy import select
from sqlalchemy.orm import Session

from bot.config import Settings
from bot.delivery.roots import text_with_verdict, verdict_text
from bot.render.alert_root import AlertRoot, Link, root_blocks, root_text, target_words
from bot.render.common import no_verdict_reason, verdict_line
from bot.render.links import fill_link, link_values
from bot.store.models import TriageRun
from collectors.alert_target import target_for
from playbooks.report import Report

# A button's value is at most 2,000 characters (Slack); matchers beyond that get no button, only the form link.
BUTTON_VALUE_LIMIT = 2000
# Labels Prometheus or Alertmanager add that identify the sender rather than the alert; a silence on them would
# miss the same alert from a second Prometheus replica.
_NOT_MATCHERS = frozenset({"prometheus", "prometheus_replica", "receive", "tenant_id"})


@dataclass(frozen=True)
class AlertLinks:
    """Where the links on an alert message point, from the settings."""

    alertmanager_url: str | None = None  # default: the externalURL in the webhook
    dashboard_template: str | None = None  # e.g. https://grafana/d/x?var-namespace={namespace}&var-pod={pod}
    node_dashboard_template: str | None = None  # for node alerts, e.g. https://grafana/d/n?var-node={node}
    silence_button: bool = False


def matchers(labels: Mapping[str, str]) -> dict[str, str]:
    """The labels a silence of this group matches on: the group's common labels, minus the sender's."""
    return {k: v for k, v in sorted(labels.items()) if k not in _NOT_MATCHERS}


def silence_form_url(base: str, labels: Mapping[str, str]) -> str:
    """Alertmanager's "new silence" form with the matchers filled in (its UI reads them from `filter`)."""
    text = "{" + ",".join(f'{k}="{_quote_value(v)}"' for k, v in matchers(labels).items()) + "}"
    return f"{base.rstrip('/')}/#/silences/new?filter={quote(text, safe='')}"


def _quote_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def dashboard_url(template: str, labels: Mapping[str, str], target: Mapping[str, Any]) -> str | None:
    """The dashboard template filled in for this alert (bot/render/links.py); None when it cannot be."""
    return fill_link(template, link_values(labels, target))


def alert_root(raw: Mapping[str, Any], links: AlertLinks, *, verdict: str | None = None,
               allowed: bool = True, refusal: str = "") -> AlertRoot:
    """The root message's data from a (redacted) webhook payload. `refusal`: why the permissions refused the triage
    (bot.policy.Permissions.alert_refusal), shown when `allowed` is False."""
    alerts: list[Mapping[str, Any]] = list(raw.get("alerts") or [])
    first: Mapping[str, Any] = alerts[0] if alerts else {}
    labels: dict[str, str] = dict(raw.get("commonLabels") or first.get("labels") or {})
    annotations: Mapping[str, str] = raw.get("commonAnnotations") or first.get("annotations") or {}
    found = target_for(labels)
    target = found.target.model_dump()
    names = sorted({str((a.get("labels") or {}).get("alertname", "")) for a in alerts} - {""})
    shown: list[Link] = []
    graph = str(first.get("generatorURL") or "")
    if graph.startswith(("http://", "https://")):
        shown.append(Link(label="Graph", url=graph))
    runbook = str(annotations.get("runbook_url") or "")
    if runbook.startswith(("http://", "https://")):
        shown.append(Link(label="Runbook", url=runbook))
    # A node's alert has no namespace or pod: its own dashboard, when one is set, shows the node.
    template = (links.node_dashboard_template if found.scope == "node" else None) or links.dashboard_template
    if template and (dashboard := dashboard_url(template, labels, target)):
        shown.append(Link(label="Dashboard", url=dashboard))
    base = links.alertmanager_url or str(raw.get("externalURL") or "")
    if base.startswith(("http://", "https://")):
        shown.append(Link(label="Silence…", url=silence_form_url(base, labels)))
    value = json.dumps(matchers(labels), separators=(",", ":"), sort_keys=True)
    button = links.silence_button and links.alertmanager_url and len(value) <= BUTTON_VALUE_LIMIT
    triaged = found.triageable and allowed
    if not allowed and found.triageable:
        note = f"Not triaged: {refusal}." if refusal else _refused_note(found.target.namespace, found.target.node)
    else:
        note = "" if triaged and found.symptoms else _untriaged_note(found.alertname or "this alert",
                                                                      found.target.service)
    return AlertRoot(status=str(raw.get("status", "firing")), count=len(alerts), alertnames=names,
                     severity=str(labels.get("severity", "")), target=target_words(target),
                     summary=str(annotations.get("summary") or annotations.get("description") or ""),
                     links=shown, verdict=verdict, triaged=triaged, note=note,
                     silence_value=value if button else None)


def _refused_note(namespace: str | None, node: str | None) -> str:
    if namespace is None:  # bot.policy.Permissions.allowed_scope
        return (f"Not triaged: node {node} is cluster-scoped; its triage reads every namespace on it, which needs "
                '"*" granted to this channel (permissions).')
    return f"Not triaged: namespace {namespace} is not granted to this channel (permissions)."


def _untriaged_note(alertname: str, service: str | None) -> str:
    if service is None:
        return f"Not triaged: the labels of {alertname} name no pod, workload or node."
    return f"No playbook for {alertname} yet; the triage runs every playbook on its target."


def root_payload(root: AlertRoot) -> dict[str, Any]:
    """What the outbox posts for the root (chat.postMessage or chat.update): text, blocks, and the data."""
    return {"text": root_text(root), "blocks": root_blocks(root), "root": root.model_dump(mode="json")}


def latest_verdict(session: Session, incident_id: int) -> str | None:
    """The verdict of the incident's latest triage, so a status change keeps it on the root."""
    report = session.scalars(select(TriageRun.report).where(TriageRun.incident_id == incident_id)
                             .order_by(TriageRun.id.desc()).limit(1)).first()
    if not report:
        return None
    shown = Report.model_validate(report)
    return None if no_verdict_reason(shown) else verdict_line(shown)  # its root keeps the outcome instead


def root_fields(session: Session, raw: Mapping[str, Any], links: AlertLinks, *, allowed: bool,
                incident_id: int | None, text: str, outcome: str = "", refusal: str = "") -> dict[str, Any]:
    """The root's text, blocks and data for the webhook flow, with the incident's latest verdict if it has one.

    `text` is the notification text the flow wrote (bot.delivery.words.alert_summary, fitted); the verdict goes under it
    exactly as the blocks show it, so a status change never drops it from one of the two. `outcome`: why the
    episode's triage ended without a verdict (`root_outcome`), kept through later notifications."""
    verdict = latest_verdict(session, incident_id) if incident_id is not None else None
    root = alert_root(raw, links, verdict=verdict, allowed=allowed, refusal=refusal).model_copy(
        update={"outcome": "" if verdict else outcome, "incident_id": incident_id})
    return {"text": text_with_verdict(text, verdict_text(verdict, outcome)), "base_text": text,
            "blocks": root_blocks(root),
            "root": root.model_dump(mode="json")}


def alert_links(settings: Settings) -> AlertLinks:
    """The link settings from the bot's settings (bot/config.py)."""
    return AlertLinks(alertmanager_url=settings.alertmanager_url, dashboard_template=settings.grafana_url_template,
                      node_dashboard_template=settings.grafana_node_url_template,
                      silence_button=settings.silence_button)
