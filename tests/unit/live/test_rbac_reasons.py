"""A 403 is evidence the bot was not allowed to read something: said as the permission and what grants it
(issue #13, point 10). The messages are the API server's own shapes (k8s.io/apiserver forbidden.go)."""

from __future__ import annotations

import pytest

from bot.render.common import missing_lines
from bot.render.terminal import render_text
from collectors.rbac import forbidden_reason
from playbooks.report import Missing, Report, Target

NODES_PROXY = ('User "system:serviceaccount:triagebot:triagebot" cannot get resource "nodes/proxy" in API group "" '
               "at the cluster scope")


@pytest.mark.parametrize(("message", "said"), [
    (NODES_PROXY, "not granted: get nodes/proxy (the kubelet-logs component grants it, or set kubelet_logs: false)"),
    ('403 Forbidden: events is forbidden: User "system:serviceaccount:t:t" cannot list resource "events" in API '
     'group "" in the namespace "shop"',
     'not granted: list events in namespace shop (a Role rule {apiGroups: [""], resources: ["events"], '
     'verbs: ["list"]} grants it)'),
    ('podgroups.scheduling.volcano.sh is forbidden: User "u" cannot list resource "podgroups" in API group '
     '"scheduling.volcano.sh" at the cluster scope',
     'not granted: list podgroups (a ClusterRole rule {apiGroups: ["scheduling.volcano.sh"], '
     'resources: ["podgroups"], verbs: ["list"]} grants it)'),
    ('configmaps "x" is forbidden: User "u" cannot get resource "configmaps" in API group "" in the namespace '
     '"kube-system"', "not granted: get configmaps in namespace kube-system (triagebot's RBAC never reads configmaps)"),
    ("timeout after 5s", None),
])
def test_forbidden_messages_become_the_missing_permission(message: str, said: str | None) -> None:
    assert forbidden_reason(message) == said


def test_the_same_forbidden_on_several_nodes_is_one_line_in_missing_evidence() -> None:
    raw = f"403 Forbidden: {NODES_PROXY}"
    report = Report(target=Target(service="s", namespace="n"), symptoms=[], findings=[], facts={"pod.phase": "x"},
                    artifacts=[], missing=[Missing(source="kubelet-log:node/a", reason=raw),
                                           Missing(source="kubelet-log:node/b", reason=raw),
                                           Missing(source="prometheus", reason="timeout after 5s")])
    assert missing_lines(report) == [
        "kubelet-log:node/a, kubelet-log:node/b: not granted: get nodes/proxy (the kubelet-logs component grants "
        "it, or set kubelet_logs: false)",
        "prometheus: timeout after 5s"]
    text = render_text(report, width=200)
    assert "403" not in text and "system:serviceaccount" not in text
