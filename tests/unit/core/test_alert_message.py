"""The root message of an alert group: severity, alert, target, links with the matchers filled in, the verdict,
and the Silence button only when configured (issue #13, point 5). End to end: tests/e2e/test_alert_message_e2e.py."""

from __future__ import annotations

import json
import urllib.parse
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.alerts.alert_message import AlertLinks, alert_root, dashboard_url, root_payload, silence_form_url
from bot.alerts.alertmanager_api import silence_body
from bot.render.alert_root import AlertRoot, root_blocks, silence_confirm
from bot.render.common import verdict_line
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay


def raw(labels: dict[str, str] | None = None, **annotations: str) -> dict[str, Any]:
    common = {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-0", "severity": "warning",
              "prometheus": "monitoring/k8s", **(labels or {})}
    alert = {"status": "firing", "labels": common, "annotations": {"summary": "crash looping", **annotations},
             "generatorURL": "http://prom:9090/graph?g0.expr=up", "fingerprint": "f1"}
    return {"version": "4", "status": "firing", "groupKey": "{}:{}", "alerts": [alert], "commonLabels": common,
            "commonAnnotations": alert["annotations"], "externalURL": "http://am:9093"}


def texts(blocks: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for block in blocks:
        if isinstance(block.get("text"), dict):
            out.append(block["text"]["text"])
        out += [e["text"] for e in block.get("elements", []) if isinstance(e.get("text"), str)]
    return out


def test_root_shows_severity_alert_target_summary_and_links() -> None:
    root = alert_root(raw(runbook_url="https://runbooks/kpcl"), AlertLinks(
        dashboard_template="https://grafana/d/x?var-ns={namespace}&var-pod={pod}"))
    first, pending, links = texts(root_blocks(root))
    assert first == (":rotating_light: *[FIRING:1 WARNING] KubePodCrashLooping* on pod checkout-0 in namespace "
                     "shop  :large_orange_circle:\ncrash looping")
    assert pending == "_Triage running; the verdict lands here._"
    labels = [part.split("|")[1].rstrip(">") for part in links.split("  ·  ")]
    assert labels == ["Graph", "Runbook", "Dashboard", "Silence…"]
    assert "<https://grafana/d/x?var-ns=shop&var-pod=checkout-0|Dashboard>" in links
    # No button unless configured.
    assert all(b["type"] != "actions" for b in root_blocks(root))


def test_silence_form_has_the_matchers_and_leaves_out_the_sender() -> None:
    url = silence_form_url("http://am:9093/", raw()["commonLabels"])
    base, fragment = url.split("#", 1)
    assert base == "http://am:9093/" and fragment.startswith("/silences/new?filter=")
    assert urllib.parse.unquote(fragment.split("=", 1)[1]) == \
        '{alertname="KubePodCrashLooping",namespace="shop",pod="checkout-0",severity="warning"}'
    # Quotes in a label value stay inside the matcher.
    tricky = urllib.parse.unquote(silence_form_url("http://am", {"a": 'x"y'}).split("filter=")[1])
    assert tricky == '{a="x\\"y"}'


def test_dashboard_values_are_url_encoded() -> None:
    url = dashboard_url("https://g/d?ns={namespace}&s={service}&a={alertname}", {"alertname": "A&B"},
                        {"namespace": "shop", "service": "deployment/web app"})
    assert url == "https://g/d?ns=shop&s=web%20app&a=A%26B"


def test_a_link_never_carries_an_empty_variable() -> None:
    """Issue 31, point 6: a node's alert has no namespace or pod; `var-namespace=&var-pod=` would show Grafana's
    dashboard for "nothing" instead of its defaults, so those variables are left out."""
    template = "https://g/d/pods?orgId=1&var-namespace={namespace}&var-pod={pod}&var-node={node}#view={pod}"
    node = {"service": "node/gpu-node-2", "node": "gpu-node-2"}
    assert dashboard_url(template, {"alertname": "NodeFilesystemSpaceFillingUp"}, node) == \
        "https://g/d/pods?orgId=1&var-node=gpu-node-2"
    # A name in the path cannot be left out: no link rather than a broken one.
    assert dashboard_url("https://g/d/{namespace}/pods", {}, node) is None
    labels = {"alertname": "NodeFilesystemSpaceFillingUp", "instance": "gpu-node-2:9100", "job": "node-exporter"}
    raw_node = {"status": "firing", "alerts": [{"labels": labels}], "commonLabels": labels}
    links = AlertLinks(dashboard_template="https://g/d/pods?var-namespace={namespace}&var-pod={pod}",
                       node_dashboard_template="https://g/d/node?var-node={node}")
    (shown,) = [link.url for link in alert_root(raw_node, links).links if link.label == "Dashboard"]
    assert shown == "https://g/d/node?var-node=gpu-node-2"  # the node's own dashboard
    (pods,) = [link.url for link in alert_root(raw_node, AlertLinks(dashboard_template=links.dashboard_template))
               .links if link.label == "Dashboard"]
    assert pods == "https://g/d/pods"
    # A pod's alert keeps the general dashboard with both variables.
    (pod,) = [link.url for link in alert_root(raw(), links).links if link.label == "Dashboard"]
    assert pod == "https://g/d/pods?var-namespace=shop&var-pod=checkout-0"


def test_button_only_when_configured_and_links_cannot_break_out() -> None:
    links = AlertLinks(alertmanager_url="http://am:9093", silence_button=True)
    blocks = root_blocks(alert_root(raw(), links))
    (button,) = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    assert (button["action_id"], button["text"]["text"]) == ("alert_silence_1h", "Silence 1h")
    assert button["value"] == ('{"alertname":"KubePodCrashLooping","namespace":"shop","pod":"checkout-0",'
                               '"severity":"warning"}')
    # Slack asks before it acts: the dialog names every matcher and the duration.
    confirm = button["confirm"]
    assert (confirm["title"]["text"], confirm["confirm"]["text"], confirm["deny"]["text"]) == \
        ("Silence this alert?", "Silence", "Cancel")
    assert confirm["text"]["text"] == (
        "Alertmanager will silence, for 1 hour, every alert matching `alertname=KubePodCrashLooping`, "
        "`namespace=shop`, `pod=checkout-0`, `severity=warning`. The silence is made in your name and said in "
        "the alert's thread.")
    # A runbook URL with Slack's link syntax in it is escaped, not a second link; a non-http one is dropped.
    hostile = alert_root(raw(runbook_url="https://x/|<!channel>"), AlertLinks())
    assert "<https://x/%7C%3C!channel%3E|Runbook>" in texts(root_blocks(hostile))[-1]
    assert all(link.label != "Runbook" for link in alert_root(raw(runbook_url="javascript:x"), AlertLinks()).links)
    # Resolved: no button, no "triage running".
    resolved = root_blocks(alert_root({**raw(), "status": "resolved"}, links))
    assert all(b["type"] != "actions" for b in resolved)
    assert texts(resolved)[0].startswith(":white_check_mark: *[RESOLVED:1 WARNING] KubePodCrashLooping*")


def test_the_verdict_replaces_the_pending_line_and_survives_a_round_trip() -> None:
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    line = verdict_line(report)
    assert line.startswith("✔ confirmed: oom-killed \u203a host-memory-underestimated: The GPUs have room to spare")
    assert len(line) <= 200 and "\n" not in line
    payload = root_payload(alert_root(raw(), AlertLinks(), verdict=line))
    again = AlertRoot.model_validate(payload["root"])
    assert again.verdict == line
    assert f"*Verdict:* {line}" in texts(payload["blocks"])
    assert f"Verdict: {line}" in payload["text"]


def test_alerts_without_a_playbook_or_a_target_say_so_in_one_line() -> None:
    no_playbook = alert_root(raw({"alertname": "KubeDaemonSetMisScheduled"}), AlertLinks())
    assert no_playbook.note == ("No playbook for KubeDaemonSetMisScheduled yet; the triage runs every playbook on "
                                "its target.")
    no_target = alert_root({**raw(), "commonLabels": {"alertname": "Watchdog", "severity": "none"},
                            "alerts": [{"labels": {"alertname": "Watchdog"}}]}, AlertLinks())
    assert no_target.note == "Not triaged: the labels of Watchdog name no pod, workload or node."
    assert f"_{no_target.note}_" in texts(root_blocks(no_target))


def test_the_confirm_dialog_stays_within_slacks_300_characters_and_counts_what_it_leaves_out() -> None:
    many = json.dumps({f"label_{i:02d}": "v" * 20 for i in range(12)}, sort_keys=True)
    text = silence_confirm(many).to_dict()["text"]["text"]
    assert len(text) <= 300 and "`label_00=" in text
    shown = text.count("`label_")
    assert 0 < shown < 12 and f"and {12 - shown} more labels." in text
    one_huge = silence_confirm(json.dumps({"description": "d" * 400}))
    assert "its 1 labels (too long to show here)" in one_huge.to_dict()["text"]["text"]


def test_silence_body_for_alertmanager_v2() -> None:
    start = datetime(2026, 11, 25, 21, 0, tzinfo=UTC)
    body = silence_body({"pod": "p", "alertname": "A"}, created_by="alice (Slack U1)", comment="c", starts=start,
                        duration=timedelta(hours=1))
    assert body == {"matchers": [{"name": "alertname", "value": "A", "isRegex": False, "isEqual": True},
                                 {"name": "pod", "value": "p", "isRegex": False, "isEqual": True}],
                    "startsAt": "2026-11-25T21:00:00Z", "endsAt": "2026-11-25T22:00:00Z",
                    "createdBy": "alice (Slack U1)", "comment": "c"}


def test_node_alerts_need_every_namespace_granted() -> None:
    """A node's triage reads every namespace on the node: a channel granted only some namespaces gets the root with
    a note instead of a triage."""
    labels = {"alertname": "NodeFilesystemAlmostOutOfSpace", "instance": "10.0.0.2:9100", "job": "node-exporter",
              "namespace": "monitoring", "pod": "node-exporter-a1b2c", "severity": "warning"}
    root = alert_root({"status": "firing", "commonLabels": labels, "alerts": [{"labels": labels}]}, AlertLinks(),
                      allowed=False)
    assert root.note == ("Not triaged: node 10.0.0.2 is cluster-scoped; its triage reads every namespace on it, "
                         'which needs "*" granted to this channel (permissions).')
    assert root.target == "node 10.0.0.2 (instance 10.0.0.2:9100)"


def test_a_quota_alert_root_names_its_namespace() -> None:
    labels = {"alertname": "KubeQuotaFullyUsed", "namespace": "ml", "resource": "requests.nvidia.com/gpu",
              "resourcequota": "gpu-quota", "job": "kube-state-metrics"}
    root = alert_root({"status": "firing", "commonLabels": labels, "alerts": [{"labels": labels}]}, AlertLinks())
    assert (root.target, root.triaged, root.note) == ("namespace ml", True, "")
