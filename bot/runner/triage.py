"""Live triage and recording: settings -> live sources -> the same pipeline replays use."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.config import Settings
from collectors.alert_target import ALERT_SOURCE
from collectors.live.base import NodeRef, Window
from collectors.live.collect import Collected, LiveAccess, collect_live
from collectors.models import Artifact, ArtifactKind, Target
from collectors.redact import redact
from playbooks.charts import declared_series
from playbooks.pipeline import analyse, triggered_by
from playbooks.report import CacheState, Report


def kube_client(settings: Settings) -> Any:
    """An ApiClient from the kubeconfig list (merged as kubectl merges it) or the in-cluster service account."""
    from bot.runner.kubeconfig import kube_client as from_kubeconfig

    return from_kubeconfig(settings)


def agent_url(template: str) -> Any:
    def url(node: NodeRef) -> str | None:
        if "{node_ip}" in template and not node.internal_ip:
            return None
        return template.format(node=node.name, node_ip=node.internal_ip or "")

    return url


def access_from(settings: Settings, kube: Any) -> LiveAccess:
    headers = ({"Authorization": f"Bearer {settings.prometheus_token.get_secret_value()}"}
               if settings.prometheus_token else None)
    return LiveAccess(
        kube=kube,
        prometheus_url=settings.prometheus_url,
        prometheus_headers=headers,
        agent_url=agent_url(settings.agent_url_template),
        agent_token=settings.agent_token.get_secret_value() if settings.agent_token else None,
        call_timeout=settings.call_timeout,
        deadline=settings.deadline,
        flight_recorder_dir=settings.flight_recorder_dir,
        kubelet_logs=settings.kubelet_logs,
    )


def chart_picker(symptoms: list[str] | None) -> Callable[[list[Artifact]], list[str]]:
    """Which chart series live triage fetches: those the playbooks the evidence so far triggers declare. Only
    triggers are read here; the one analysis runs once all the evidence is in."""
    def pick(artifacts: list[Artifact]) -> list[str]:
        return declared_series(triggered_by(artifacts, symptoms))

    return pick


@dataclass
class Triage:
    report: Report
    collected: Collected
    target: Target
    captured_at: datetime


def named_node(target: Target, collected: Collected) -> Target:
    """A node an alert named by its scrape address, under the name the cluster gives it (when one was found)."""
    if not target.instance or not collected.scope.nodes or target.service != f"node/{target.node}":
        return target
    node = collected.scope.nodes[0].name
    return target.model_copy(update={"node": node, "service": f"node/{node}"})


def alert_artifact(alert: dict[str, Any], captured_at: datetime) -> Artifact:
    """The alerts that started a triage, as the evidence they are: their labels (an Xid code, a waiting reason, a
    node) are read like any other artifact's lines."""
    return Artifact(id="alert", kind=ArtifactKind.ALERTMANAGER, source=ALERT_SOURCE,
                    content=json.dumps(alert, indent=2, sort_keys=True), captured_at=captured_at,
                    command="the Alertmanager notification that started this triage")


def run_triage(target: Target, since: timedelta, access: LiveAccess, now: datetime | None = None,
               symptoms: list[str] | None = None, alert: dict[str, Any] | None = None) -> Triage:
    """Collect live evidence for the target and analyse it; raises TargetNotFound.

    `symptoms` (e.g. from an alert's name) run those playbooks even when their triggers do not fire. `alert` (the
    webhook's alerts) makes the triage an alert's: its labels are facts and its symptoms lead the report.
    """
    now = now or datetime.now(UTC)
    collected = collect_live(target, Window.last(since, now), access, charts=chart_picker(symptoms))
    target = named_node(target, collected)
    if alert:
        # Last: for facts that keep their first value (a pod's name), what the cluster says comes first.
        collected.result.artifacts.append(redact(alert_artifact(alert, now)))
    report = analyse(collected.result.artifacts, target, missing=collected.result.missing, symptoms=symptoms,
                     leads=symptoms if alert else None)
    if collected.result.cache_age is not None and access.cache is not None:
        report.cache = CacheState(age_seconds=round(collected.result.cache_age, 1),
                                  namespaces=access.cache.namespaces or [])
    return Triage(report=report, collected=collected, target=target, captured_at=now)
