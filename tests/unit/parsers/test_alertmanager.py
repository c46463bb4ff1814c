"""Alertmanager webhook payloads -> alert.* facts and the target named by their labels."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from collectors.catalogs.alert_map import load_rules, symptom_for
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.alerts import alertmanager
from playbooks.model import SYMPTOMS
from tests.unit.parsers.cited_fixtures import Row, row_set

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "alertmanager"


def read(text: str) -> tuple[set[Row], list[str]]:
    result = alertmanager.parse(Artifact(id="w1", kind=ArtifactKind.ALERTMANAGER, content=text))
    # Every label and annotation is also listed (alert.labels, alert.annotations): tested below on their own.
    return row_set(result, without=("alert.labels", "alert.annotations")), result.problems


FIXTURE_CASES: list[tuple[str, set[Row]]] = [
    # The payload a real Alertmanager 0.25 posted (components.md §3).
    ("firing_gpu_xid.json", {
        ("alert.names", ("GPUXidError",), 7, 7),
        ("alert.symptoms", ("gpu-xid",), 7, 7),
        ("alert.status", "firing", 3, 3),
        ("alert.severity", "critical", 9, 9),
        ("node.name", "local-node", 7, 7),  # from Hostname; instance 127.0.0.1:19400 names no node
    }),
    # Resolved: the alert is named, but it shows no symptom any more.
    ("resolved_gpu_xid.json", {
        ("alert.names", ("GPUXidError",), 1, 1),
        ("alert.status", "resolved", 1, 1),
        ("alert.severity", "critical", 1, 1),
        ("node.name", "local-node", 1, 1),
    }),
    ("shop_group.json", {
        ("alert.names", ("KubePodNotReady",), 8, 8),  # resolved: named, no symptom
        ("alert.names", ("KubePodCrashLooping",), 21, 21),
        ("alert.symptoms", ("crash-loop",), 21, 21),
        ("alert.names", ("KubeContainerWaiting",), 39, 39),
        ("alert.symptoms", ("image-pull",), 39, 39),  # by its reason label
        ("alert.status", "firing", 3, 3),
        ("alert.severity", "critical", 44, 44),
        # the first firing alert names the target; the resolved KubePodNotReady comes last
        ("pod.name", "checkout-7d9f-x2", 27, 27),
        ("pod.namespace", "shop", 25, 25),
        ("container.name", "checkout", 22, 22),
        ("node.name", "gpu-node-4", 26, 26),
        # kube-state-metrics' waiting reason, on both alerts' own labels (alert_labels.yaml)
        ("container.waiting.reason", "CrashLoopBackOff", 28, 28),
        ("container.waiting.reason", "ImagePullBackOff", 43, 43),
    }),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_payloads(name: str, expected: set[Row]) -> None:
    facts, problems = read((FIXTURES / name).read_text(encoding="utf-8"))
    assert facts == expected
    assert problems == []


def test_receiver_log_with_one_payload_per_line() -> None:
    firing = json.loads((FIXTURES / "firing_gpu_xid.json").read_text(encoding="utf-8"))
    resolved = json.loads((FIXTURES / "resolved_gpu_xid.json").read_text(encoding="utf-8"))
    text = "\n".join(json.dumps({"recv_ts": 1.0, "path": "/alertmanager", "payload": p}) for p in (firing, resolved))
    facts, problems = read(text)
    assert {(n, v) for n, v, _, _ in facts if n.startswith("alert.")} == {
        ("alert.names", ("GPUXidError",)), ("alert.symptoms", ("gpu-xid",)), ("alert.status", "firing"),
        ("alert.severity", "critical")}
    assert problems == []


def test_api_v2_alert_list() -> None:
    text = json.dumps([{"labels": {"alertname": "KubePodOOMKilled", "namespace": "ml", "pod": "trainer-1",
                                   "Hostname": "gpu-node-2", "severity": "warning"},
                        "annotations": {"summary": "trainer-1 OOMKilled"}, "status": {"state": "active"}}])
    facts, _ = read(text)
    assert {(n, v) for n, v, _, _ in facts} == {
        ("alert.names", ("KubePodOOMKilled",)), ("alert.symptoms", ("oom-killed",)), ("alert.status", "firing"),
        ("alert.severity", "warning"), ("pod.name", "trainer-1"), ("pod.namespace", "ml"),
        ("node.name", "gpu-node-2")}


def test_exported_labels_name_the_workload_not_the_exporter() -> None:
    text = json.dumps({"status": "firing", "alerts": [{"status": "firing", "labels": {
        "alertname": "DCGMXidErrors", "pod": "dcgm-exporter-7x2", "exported_pod": "trainer-3",
        "namespace": "gpu-operator", "exported_namespace": "ml", "instance": "gpu-node-5.cluster.local:9400"}}]})
    facts, _ = read(text)
    assert {(n, v) for n, v, _, _ in facts if not n.startswith("alert.")} == {
        ("pod.name", "trainer-3"), ("pod.namespace", "ml"), ("node.name", "gpu-node-5.cluster.local")}


@pytest.mark.parametrize(("alertname", "labels", "symptom"), [
    ("KubePodCrashLooping", {}, "crash-loop"),
    ("KubeContainerWaiting", {"reason": "ImagePullBackOff"}, "image-pull"),
    ("KubeContainerWaiting", {"reason": "ErrImagePull"}, "image-pull"),
    ("KubeContainerWaiting", {"reason": "CreateContainerConfigError"}, "container-creating"),
    ("KubeContainerWaiting", {"reason": "ContainerCreating"}, "container-creating"),
    ("KubeContainerWaiting", {"reason": "CrashLoopBackOff"}, "crash-loop"),
    ("KubeNodeNotReady", {}, "node-not-ready"),
    ("KubeletDown", {}, "node-not-ready"),
    ("HighErrorRate", {}, "error-rate"),
    ("NginxIngressHighErrorRate", {}, "error-rate"),
    ("GPUUnderutilized", {}, "gpu-underutilized"),
    ("BlackboxProbeFailed", {}, "service-unreachable"),
    ("TargetDown", {"job": "pi-hole"}, "service-unreachable"),  # Prometheus cannot reach an app's endpoints
    ("TargetDown", {"job": "kube-proxy"}, None),  # a localhost-bound component's metrics: a monitoring gap
    ("KubeControllerManagerDown", {}, None),  # absent from discovery, no reachability said
    ("KubePodNotReady", {}, "pending"),
    ("KubeContainerWaiting", {}, "crash-loop"),
    ("KubePodNotReady", {}, "pending"),
    ("KubeDeploymentReplicasMismatch", {}, "pending"),
    ("KubeJobFailed", {}, "crash-loop"),
    ("CPUThrottlingHigh", {}, "latency"),
    ("KubeMemoryOvercommit", {}, "pending"),
    ("KubePodOOMKilled", {}, "oom-killed"),
    ("ContainerOOMKilled", {}, "oom-killed"),
    ("OOMKilled", {}, "oom-killed"),
    ("GPUXidError", {}, "gpu-xid"),
    ("DCGMXidErrors", {}, "gpu-xid"),
    ("DCGM_XID_ERRORS", {}, "gpu-xid"),
    ("GPUTemperatureHigh", {}, "gpu-xid"),
    ("HighLatency", {}, "latency"),
    ("TritonP99LatencyHigh", {}, "latency"),
    ("NCCLTimeout", {}, "nccl-hang"),
    ("TrainingStalled", {}, "nccl-hang"),
    ("KubePodEvicted", {}, "evicted"),
    # A node's own disk fills: DiskPressure evicts. A NAS share a host mounts is no kubelet filesystem.
    ("NodeFilesystemSpaceFillingUp", {"fstype": "ext4", "mountpoint": "/"}, "evicted"),
    ("NodeFilesystemSpaceFillingUp", {"fstype": "cifs", "mountpoint": "/mnt/nas"}, None),
    ("NodeFilesystemAlmostOutOfSpace", {"fstype": "nfs4"}, None),
    ("NodeFilesystemAlmostOutOfFiles", {"fstype": "fuse.sshfs"}, None),
    ("ImagePullBackOff", {}, "image-pull"),
    ("KubeAPILatencyHigh", {}, None),
    ("Watchdog", {}, None),
    ("SomethingElse", {}, None),
])
def test_alert_map(alertname: str, labels: dict[str, str], symptom: str | None) -> None:
    assert symptom_for(alertname, labels) == symptom


def test_catalog_loads_in_order() -> None:
    rules = load_rules()
    assert rules[0].symptom is None  # housekeeping exclusions come first
    assert {r.symptom for r in rules} == {None, *SYMPTOMS}  # every playbook has an alert, every alert a playbook


@pytest.mark.parametrize("text", [
    "", "garbage", "{", "[]", "{}", '{"alerts": "x"}', '{"alerts": [1, null, {"labels": []}]}',
    '{"alerts": [{"labels": {"alertname": 5}}]}', '{"status": 3, "alerts": [{"labels": {"alertname": "X"}, '
    '"status": {"state": 1}}]}', "[" * 5000 + "]" * 5000,
])
def test_garbage_never_raises(text: str) -> None:
    facts, problems = read(text)
    assert {n for n, *_ in facts} <= {"alert.names"}
    assert not [p for p in problems if p.startswith("internal:")]


def test_sniff() -> None:
    assert alertmanager.sniff((FIXTURES / "firing_gpu_xid.json").read_text(encoding="utf-8")) == 95
    assert alertmanager.sniff('{"status":"success","data":{"resultType":"vector","result":[]}}') == 0
    assert alertmanager.sniff("[FIRING:1] KubePodCrashLooping") == 0


def test_a_payload_cut_after_its_alerts_is_still_read() -> None:
    # Pasted from a terminal or a log, the body often stops inside groupLabels or commonLabels, whole lines kept.
    whole = json.dumps(json.loads((FIXTURES / "resolved_gpu_xid.json").read_text(encoding="utf-8")), indent=4)
    lines = whole.split("\n")
    cut = "```json\n" + "\n".join(lines[:next(i for i, line in enumerate(lines) if '"groupLabels"' in line) + 2])
    assert alertmanager.sniff(cut) == 95
    facts, _ = read(cut)
    got = {(n, v) for n, v, _, _ in facts}
    assert {("alert.names", ("GPUXidError",)), ("alert.status", "resolved")} <= got
    # An alert cut in the middle of its labels is left out rather than read without them; the envelope's status
    # before it still stands.
    half = whole[:whole.index('"alertname"') + 5]
    assert {(n, v) for n, v, _, _ in read(half)[0]} == {("alert.status", "resolved")}


# The webhook envelope's shape (Alertmanager's notify/webhook Message, Grafana's unified alerting webhook, which
# adds orgId and a rendered title) rendered with sample values, then cut as a paste stops inside the first alert.
CUT_INSIDE_THE_ALERT = """{
  "receiver": "echo hook",
  "status": "firing",
  "alerts": [
    {
      "status": "firing",
      "labels": {
        "app": "checkout",
      },
      "annotations": {
        "message": "upstream <no value> has 1 bad node",
      },
      "startsAt": "2023-03-24T15:59:30+08:00","""


def test_an_envelope_whose_alerts_are_cut_still_gives_its_status() -> None:
    facts, problems = read(CUT_INSIDE_THE_ALERT)
    assert facts == {("alert.status", "firing", 3, 3)}
    assert problems == ["the Alertmanager payload holds no alert with an alertname label"]


def test_a_cut_envelope_with_no_status_gives_nothing() -> None:
    facts, _ = read(CUT_INSIDE_THE_ALERT.replace('  "status": "firing",\n', "", 1).replace(
        '      "status": "firing",\n', ""))
    assert facts == set()
