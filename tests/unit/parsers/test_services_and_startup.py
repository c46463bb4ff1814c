"""Service, Endpoints, EndpointSlice and PVC objects; start-up failures in events; node readiness causes."""

from __future__ import annotations

from pathlib import Path

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.registry import parse_artifact

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "startup"


def run(kind: ArtifactKind, text: str) -> ParseResult:
    return parse_artifact(Artifact(id="a", kind=kind, source="kubernetes", content=text))


def facts(result: ParseResult) -> dict[str, tuple[object, str, int]]:
    return {f.name: (f.value, f.subject, f.citation.start) for f in result.facts}


ENDPOINTS = """\
apiVersion: v1
kind: Endpoints
metadata:
  name: checkout
  namespace: shop
subsets:
- notReadyAddresses:
  - ip: 10.244.1.5
  - ip: 10.244.2.7
  ports:
  - port: 8080
"""


def test_endpoints_count_ready_and_not_ready_addresses() -> None:
    got = facts(run(ArtifactKind.K8S_OBJECT, ENDPOINTS))
    assert got["endpoints.ready"] == (0, "endpoints/shop/checkout", 6)
    assert got["endpoints.not_ready"] == (2, "endpoints/shop/checkout", 6)


def test_endpoints_without_subsets_have_nothing_behind_them() -> None:
    got = facts(run(ArtifactKind.K8S_OBJECT, "kind: Endpoints\nmetadata:\n  name: a\n  namespace: b\n"))
    assert got["endpoints.ready"][0] == 0 and got["endpoints.not_ready"][0] == 0


def test_endpoint_slice_counts_missing_ready_as_ready() -> None:
    text = ('{"kind": "EndpointSlice", "metadata": {"name": "s-1", "namespace": "n"}, "endpoints": ['
            '{"addresses": ["1"], "conditions": {"ready": true}}, {"addresses": ["2"], "conditions": {}},'
            '{"addresses": ["3"], "conditions": {"ready": false}}]}')
    got = facts(run(ArtifactKind.K8S_OBJECT, text))
    assert (got["endpoints.ready"][0], got["endpoints.not_ready"][0]) == (2, 1)


def test_service_selector_and_external_name() -> None:
    svc = "kind: Service\nmetadata:\n  name: a\n  namespace: b\nspec:\n  selector:\n    tier: web\n    app: a\n"
    got = facts(run(ArtifactKind.K8S_OBJECT, svc))
    assert got["service.selector"] == ("app=a,tier=web", "service/b/a", 6)
    assert got["service.has_selector"][0] is True
    external = "kind: Service\nmetadata:\n  name: a\nspec:\n  type: ExternalName\n  externalName: db.example.com\n"
    assert run(ArtifactKind.K8S_OBJECT, external).facts == []


def test_pvc_terminating_only_with_a_deletion_timestamp() -> None:
    base = "kind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: ml\n"
    assert facts(run(ArtifactKind.K8S_OBJECT, base))["pvc.terminating"][0] is False
    deleting = base + '  deletionTimestamp: "2026-03-18T10:00:00Z"\n'
    assert facts(run(ArtifactKind.K8S_OBJECT, deleting))["pvc.terminating"] == (
        True, "persistentvolumeclaim/ml/data", 5)


EVENTS = (FIXTURES / "events.txt").read_text(encoding="utf-8")


def test_start_up_failures_in_events() -> None:
    result = run(ArtifactKind.EVENTS, EVENTS)
    by = {(f.name, f.subject): f.value for f in result.facts}
    assert by[("volume.errors", "pod/db-0")] == ["multi-attach"]
    assert by[("volume.mount_failed", "pod/api-1")] is True
    assert by[("pod.missing_refs", "pod/api-1")] == ["secret/db-credentials"]
    assert by[("sandbox.errors", "pod/web-2")] == ["ip-exhausted"]
    assert by[("image.pull_seconds", "pod/web-2")] == 272.5
    assert by[("image.pulling", "pod/vllm-0")] is True
    assert by[("pvc.terminating", "pod/train-1")] is True
    assert by[("pod.missing_refs", "pod/vllm-1")] == ["configmap/vllm-config"]
    assert result.problems == []


def test_finished_pulls_say_nothing_is_pulling() -> None:
    text = EVENTS.splitlines()[0] + "\n" + "\n".join(
        line for line in EVENTS.splitlines() if "Pulled" in line or "Pulling" in line).replace("vllm-0", "web-2 ")
    got = facts(run(ArtifactKind.EVENTS, text))
    assert got["image.pulling"][0] is False


DESCRIBE_NODE = (FIXTURES / "describe-node-unknown.txt").read_text(encoding="utf-8")


def test_describe_node_names_why_it_is_not_ready() -> None:
    got = facts(run(ArtifactKind.DESCRIBE_NODE, DESCRIBE_NODE))
    assert got["node.not_ready_reasons"] == (["kubelet-stopped-posting"], "node/gpu-node-7", 8)


def test_node_object_ready_condition_message() -> None:
    text = ("kind: Node\nmetadata:\n  name: n1\nstatus:\n  conditions:\n  - type: Ready\n    status: \"False\"\n"
            "    reason: KubeletNotReady\n    message: container runtime is down\n")
    got = facts(run(ArtifactKind.NODE, text))
    assert got["node.not_ready_reasons"] == (["runtime-down"], "node/n1", 6)
    healthy = text.replace('"False"', '"True"')
    assert "node.not_ready_reasons" not in facts(run(ArtifactKind.NODE, healthy))


KUBELET = (FIXTURES / "kubelet.log").read_text(encoding="utf-8")


def test_kubelet_log_readiness_hairpin_and_volumes() -> None:
    by = {(f.name, f.subject): (f.value, f.citation.start) for f in run(ArtifactKind.KUBELET_LOG, KUBELET).facts}
    assert by[("kubelet.hairpin_mode", "node/gpu-node-7")] == ("none", 1)
    assert by[("node.not_ready_reasons", "node/gpu-node-7")] == (["pleg-unhealthy"], 2)
    assert ("volume.errors", "pod/ml/db-0") not in by  # "Error syncing pod" alone names no attach/mount failure
