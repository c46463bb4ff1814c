"""Alerts rendered for chat or mail -> alert.* facts and target labels."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.alerts import alert_text
from tests.unit.parsers.cited_fixtures import Row, row_set

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "alertmanager"


def read(text: str) -> tuple[set[Row], list[str]]:
    result = alert_text.parse(Artifact(id="t1", kind=ArtifactKind.ALERT_TEXT, content=text))
    # Every label and annotation is also listed (alert.labels, alert.annotations): test_alert_forms.py checks those.
    return row_set(result, without=("alert.labels", "alert.annotations")), result.problems


FIXTURE_CASES: list[tuple[str, set[Row]]] = [
    ("slack_default.txt", {
        ("alert.names", ("KubePodCrashLooping",), 1, 1),
        ("alert.symptoms", ("crash-loop",), 1, 1),
        ("alert.status", "firing", 1, 1),
        ("alert.severity", "critical", 10, 10),  # the most severe of the grouped alerts
        ("container.name", "checkout", 6, 6),
        ("pod.namespace", "shop", 7, 7),
        ("pod.name", "checkout-7d9f-x2", 8, 8),
    }),
    ("email.txt", {
        ("alert.names", ("GPUXidError",), 1, 1),
        ("alert.symptoms", ("gpu-xid",), 1, 1),
        ("alert.status", "resolved", 1, 1),
        ("alert.severity", "critical", 10, 10),
        ("node.name", "gpu-node-2", 3, 3),
    }),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_messages(name: str, expected: set[Row]) -> None:
    facts, problems = read((FIXTURES / name).read_text(encoding="utf-8"))
    assert facts == expected
    assert problems == []


LINE_CASES: list[tuple[str, set[tuple[str, object]]]] = [
    ("[FIRING:1] KubePodCrashLooping (shop/checkout)",
     {("alert.names", ("KubePodCrashLooping",)), ("alert.symptoms", ("crash-loop",)), ("alert.status", "firing")}),
    ("Alert: GPUXidError - critical",
     {("alert.names", ("GPUXidError",)), ("alert.symptoms", ("gpu-xid",)), ("alert.severity", "critical")}),
    ("alertname = KubePodOOMKilled", {("alert.names", ("KubePodOOMKilled",)), ("alert.symptoms", ("oom-killed",))}),
    ('alertname="CPUThrottlingHigh", namespace="shop", pod="checkout-1"',
     {("alert.names", ("CPUThrottlingHigh",)), ("alert.symptoms", ("latency",)), ("pod.namespace", "shop"),
      ("pod.name", "checkout-1")}),
    ("alertname: KubeContainerWaiting\nreason: ErrImagePull",
     {("alert.names", ("KubeContainerWaiting",)), ("alert.symptoms", ("image-pull",)),
      ("container.waiting.reason", "ErrImagePull")}),  # kube-state-metrics' waiting-reason label
    ("alertname: MyTeamCustomAlert\ninstance: 10.0.0.7:9100", {("alert.names", ("MyTeamCustomAlert",))}),
    ("[RESOLVED] KubePodEvicted",
     {("alert.names", ("KubePodEvicted",)), ("alert.symptoms", ("evicted",)), ("alert.status", "resolved")}),
]


@pytest.mark.parametrize(("text", "expected"), LINE_CASES)
def test_shapes(text: str, expected: set[tuple[str, object]]) -> None:
    facts, _ = read(text)
    assert {(n, v) for n, v, _, _ in facts} == expected


def test_sniff() -> None:
    assert alert_text.sniff((FIXTURES / "slack_default.txt").read_text(encoding="utf-8")) == 90
    assert alert_text.sniff("alertname = KubePodOOMKilled") == 80
    assert alert_text.sniff((FIXTURES / "firing_gpu_xid.json").read_text(encoding="utf-8")) == 0
    assert alert_text.sniff("hello") == 0


def test_an_email_heading_glued_to_its_first_label() -> None:
    # helm/charts#18593: two alerts of Alertmanager's default e-mail, copied from the mail client with the break
    # after each bold "Labels" heading lost.
    text = (Path(__file__).resolve().parents[2] / "realworld" / "service-unreachable"
            / "helm-charts-18593-email-kubecontrollermanagerdown-not-monitored" / "evidence.txt").read_text("utf-8")
    assert alert_text.sniff(text) == 80
    result = alert_text.parse(Artifact(id="a", kind=ArtifactKind.ALERT_TEXT, content=text))
    names = [name for f in result.facts if f.name == "alert.names" for name in f.value]  # type: ignore[union-attr]
    assert names == ["KubeControllerManagerDown", "KubeSchedulerDown"]
    assert {f.value for f in result.facts if f.name == "alert.severity"} == {"critical"}
