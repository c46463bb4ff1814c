"""Object parser: Pods, Nodes, Events, quotas, jobs, NetworkPolicies and HPAs as JSON or YAML."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from collectors.k8s_values import quantity_int, quantity_milli
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes import k8s_objects
from collectors.parsers.kubernetes.k8s_object_text import load_docs
from tests.unit.parsers.cited_fixtures import cited, fixture_tests

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "k8s_objects"


def parse_text(text: str, kind: ArtifactKind = ArtifactKind.K8S_OBJECT) -> ParseResult:
    return k8s_objects.parse(Artifact(id="a1", kind=kind, content=text))


def parse(name: str) -> ParseResult:
    return parse_text((FIXTURES / name).read_text(encoding="utf-8"))


D0, D2 = "pod/default/distributed-training-0", "pod/default/distributed-training-2"
LLM = "pod/research/llm-pretrain-worker-0"
NODE = "node/gpu-node-2"

EXPECTED = [
    # `kubectl get pods -o json` of four ranks, one Pending for an untolerated taint
    ("podlist_ranks.json", "pods.names", ["distributed-training-0"], 14, 14, D0),
    ("podlist_ranks.json", "pod.node", "gpu-node-1", 87, 87, D0),
    ("podlist_ranks.json", "pod.phase", "Running", 167, 167, D0),
    ("podlist_ranks.json", "container.image", "pytorch/pytorch:2.3.1-cuda12.1-cudnn8-runtime", 60, 60, D0),
    ("podlist_ranks.json", "container.memory_limit_bytes", 64 * 2**30, 65, 65, D0),
    ("podlist_ranks.json", "pod.gpu_request", 4, 66, 66, D0),
    ("podlist_ranks.json", "nccl.socket_ifname", "eth0", 57, 57, D0),
    ("podlist_ranks.json", "dist.env_missing", [], 41, 41, D0),
    ("podlist_ranks.json", "pod.phase", "Pending", 476, 476, D2),
    ("podlist_ranks.json", "pods.pending", ["distributed-training-2"], 476, 476, D2),
    ("podlist_ranks.json", "pods.not_running", ["distributed-training-2"], 476, 476, D2),
    ("podlist_ranks.json", "pod.node", "", 352, 352, D2),
    ("podlist_ranks.json", "scheduling.failed", True, 470, 470, D2),
    ("podlist_ranks.json", "scheduling.nodes_total", 20, 470, 470, D2),
    ("podlist_ranks.json", "scheduling.reasons", ["untolerated-taint", "insufficient-gpu", "preemption-not-helpful"],
     470, 470, D2),
    ("podlist_ranks.json", "dist.ranks", [0, 1, 2, 3], 49, 525, ""),
    ("podlist_ranks.json", "dist.world_sizes", [4], 53, 529, ""),
    ("podlist_ranks.json", "dist.master_addrs", ["distributed-training-0.distributed-training"], 41, 517, ""),
    # `kubectl get pod -o yaml`: OOMKilled in lastState, RDMA, capabilities, hostNetwork, shm, Volcano group
    ("pod_oom.yaml", "container.last_terminated.reason", "OOMKilled", 89, 89, LLM),
    ("pod_oom.yaml", "container.last_terminated.exit_code", 137, 87, 87, LLM),
    ("pod_oom.yaml", "container.waiting.reason", "CrashLoopBackOff", 98, 98, LLM),
    ("pod_oom.yaml", "container.restart_count", 4, 93, 93, LLM),
    ("pod_oom.yaml", "container.image", "nvcr.io/nvidia/pytorch:24.05-py3", 24, 24, LLM),
    ("pod_oom.yaml", "container.cpu_limit_millicores", 64000, 39, 39, LLM),
    ("pod_oom.yaml", "container.memory_limit_bytes", 400 * 2**30, 40, 40, LLM),
    ("pod_oom.yaml", "container.memory_request_bytes", 350 * 2**30, 45, 45, LLM),
    ("pod_oom.yaml", "pod.gpu_request", 8, 41, 41, LLM),
    ("pod_oom.yaml", "pod.rdma_request", True, 42, 42, LLM),
    ("pod_oom.yaml", "pod.capabilities", ["IPC_LOCK", "SYS_RESOURCE"], 49, 49, LLM),
    ("pod_oom.yaml", "pod.shm_volume", True, 54, 54, LLM),
    ("pod_oom.yaml", "pod.shm_size_bytes", 64 * 2**30, 72, 72, LLM),  # emptyDir.sizeLimit: 64Gi
    ("pod_oom.yaml", "pod.host_network", True, 56, 56, LLM),
    ("pod_oom.yaml", "pod.priority_class", "time-sensitive-training", 58, 58, LLM),
    ("pod_oom.yaml", "pod.scheduler_name", "volcano", 60, 60, LLM),
    ("pod_oom.yaml", "pod.tolerations", ["nvidia.com/gpu:NoSchedule", "spot-instance=true:NoSchedule"], 61, 61, LLM),
    ("pod_oom.yaml", "probe.liveness_delay_seconds", 120, 26, 26, LLM),
    ("pod_oom.yaml", "nccl.ib_hca", "mlx5", 21, 21, LLM),
    ("pod_oom.yaml", "nccl.socket_ifname", "ib0", 23, 23, LLM),
    ("pod_oom.yaml", "gang.configured", True, 5, 5, LLM),
    ("pod_oom.yaml", "pod.qos_class", "Burstable", 102, 102, LLM),
    # a Node object: one GPU dropped out of allocatable, memory pressure, a health taint
    ("node.json", "node.name", "gpu-node-2", 18, 18, NODE),
    ("node.json", "node.taints", ["gpu-unhealthy=true:NoSchedule"], 28, 28, NODE),
    ("node.json", "node.unschedulable", False, 18, 18, NODE),
    ("node.json", "node.conditions", ["MemoryPressure"], 59, 59, NODE),
    ("node.json", "node.gpu_sharing", "exclusive", 15, 15, NODE),
    ("node.json", "gpu.capacity_total", 8, 49, 49, NODE),
    ("node.json", "gpu.allocatable_total", 7, 42, 42, NODE),
    ("node.json", "gpu.unhealthy_count", 1, 42, 49, NODE),
    # multi-document YAML
    ("objects.yaml", "quota.exceeded", True, 18, 18, "resourcequota/team-nlp/team-nlp-quota"),
    ("objects.yaml", "quota.resources_at_limit", ["requests.nvidia.com/gpu"], 18, 18,
     "resourcequota/team-nlp/team-nlp-quota"),
    ("objects.yaml", "gang.configured", False, 24, 24, "job/default/distributed-training"),
    ("objects.yaml", "gang.configured", True, 48, 48, "job/default/distributed-training-gang"),
    ("objects.yaml", "gang.min_available", 4, 48, 48, "job/default/distributed-training-gang"),
    ("objects.yaml", "netpol.count", 1, 68, 68, ""),
    ("objects.yaml", "netpol.restricts_pods", True, 68, 68, ""),
    ("objects.yaml", "hpa.max_replicas", 50, 81, 81, "horizontalpodautoscaler/inference/triton"),
    ("objects.yaml", "hpa.at_max", True, 98, 98, "horizontalpodautoscaler/inference/triton"),
    # an old API server's PodList (no kind on items, numbers as strings) and an autoscaling/v1 HPA, minified
    ("old_cluster.json", "pod.status.reason", "Evicted", 1, 1, "pod/shop/checkout-5c8d9f-abcde"),
    ("old_cluster.json", "eviction.seen", True, 1, 1, "pod/shop/checkout-5c8d9f-abcde"),
    ("old_cluster.json", "eviction.resource", "ephemeral-storage", 1, 1, "pod/shop/checkout-5c8d9f-abcde"),
    ("old_cluster.json", "container.memory_limit_bytes", 512 * 2**20, 1, 1, "pod/shop/checkout-5c8d9f-abcde"),
    ("old_cluster.json", "container.cpu_limit_millicores", 500, 1, 1, "pod/shop/checkout-5c8d9f-abcde"),
    ("old_cluster.json", "container.restart_count", 3, 1, 1, "pod/shop/checkout-5c8d9f-fghij"),
    ("old_cluster.json", "container.last_terminated.exit_code", 1, 1, 1, "pod/shop/checkout-5c8d9f-fghij"),
    ("old_cluster.json", "hpa.at_max", True, 2, 2, "horizontalpodautoscaler/shop/checkout"),
    ("old_cluster.json", "hpa.max_replicas", 12, 2, 2, "horizontalpodautoscaler/shop/checkout"),
]


test_fact_is_read_and_cited, test_fixtures_parse_cleanly = fixture_tests(parse, EXPECTED, FIXTURES)


def test_pod_list_with_one_pending_rank() -> None:
    facts = cited(parse("podlist_ranks.json"))
    assert [v for v, *_ in facts["pods.names"]] == [[f"distributed-training-{i}"] for i in range(4)]
    assert [v for v, *_ in facts["pods.pending"]] == [["distributed-training-2"]]
    assert "gang.configured" not in facts  # pods alone cannot show that gang scheduling is absent


def test_a_node_object_has_no_free_gpu_count() -> None:
    facts = cited(parse("node.json"))
    assert "gpu.free_total" not in facts and "gpu.max_free_per_node" not in facts


def test_a_zero_quota_is_policy_not_exhaustion() -> None:
    facts = cited(parse("objects.yaml"))
    assert facts["quota.resources_at_limit"][0][0] == ["requests.nvidia.com/gpu"]  # not services.loadbalancers


def manifest(*docs: Mapping[str, object]) -> str:
    return "\n".join(json.dumps(d, indent=2) for d in docs)


@pytest.mark.parametrize(("doc", "configured", "minimum"), [
    ({"kind": "PodGroup", "apiVersion": "scheduling.volcano.sh/v1beta1", "metadata": {"name": "pg"},
      "spec": {"minMember": 8}}, True, 8),
    ({"kind": "PyTorchJob", "apiVersion": "kubeflow.org/v1", "metadata": {"name": "bert"},
      "spec": {"runPolicy": {"schedulingPolicy": {"minAvailable": 4}}, "pytorchReplicaSpecs": {}}}, True, 4),
    ({"kind": "Job", "apiVersion": "batch/v1",
      "metadata": {"name": "j", "labels": {"kueue.x-k8s.io/queue-name": "team-a"}}, "spec": {}}, True, None),
    ({"kind": "MPIJob", "apiVersion": "kubeflow.org/v2beta1", "metadata": {"name": "m"},
      "spec": {"mpiReplicaSpecs": {"Worker": {"template": {"spec": {"schedulerName": "volcano"}}}}}}, True, None),
    ({"kind": "PyTorchJob", "apiVersion": "kubeflow.org/v1", "metadata": {"name": "plain"},
      "spec": {"pytorchReplicaSpecs": {"Worker": {"template": {"spec": {}}}}}}, False, None),
    ({"kind": "JobSet", "apiVersion": "jobset.x-k8s.io/v1alpha2", "metadata": {"name": "js"},
      "spec": {"replicatedJobs": [{"template": {"spec": {"template": {"spec": {}}}}}]}}, False, None),
])
def test_gang_configuration(doc: Mapping[str, object], configured: bool, minimum: int | None) -> None:
    facts = cited(parse_text(manifest(doc)))
    assert [v for v, *_ in facts["gang.configured"]] == [configured]
    assert [v for v, *_ in facts.get("gang.min_available", [])] == ([] if minimum is None else [minimum])


def test_network_policies() -> None:
    allow_all = {"kind": "NetworkPolicy", "metadata": {"name": "allow-all"},
                 "spec": {"podSelector": {}, "ingress": [{}], "policyTypes": ["Ingress"]}}
    facts = cited(parse_text(manifest(allow_all)))
    assert [v for v, *_ in facts["netpol.restricts_pods"]] == [False]
    empty = cited(parse_text('{"kind": "NetworkPolicyList", "apiVersion": "networking.k8s.io/v1", "items": []}'))
    assert empty["netpol.count"] == [(0, 1, 1, "")]


def test_quota_below_its_limits() -> None:
    quota = {"kind": "ResourceQuota", "metadata": {"name": "q", "namespace": "ml"},
             "status": {"hard": {"requests.nvidia.com/gpu": "16"}, "used": {"requests.nvidia.com/gpu": "12"}}}
    facts = cited(parse_text(manifest(quota)))
    assert [v for v, *_ in facts["quota.exceeded"]] == [False]
    assert [v for v, *_ in facts["quota.resources_at_limit"]] == [[]]


def test_hpa_below_max() -> None:
    hpa = {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "x"},
           "spec": {"maxReplicas": 10}, "status": {"currentReplicas": 3, "conditions": [
               {"type": "ScalingLimited", "status": "True", "reason": "TooFewReplicas"}]}}
    assert [v for v, *_ in cited(parse_text(manifest(hpa)))["hpa.at_max"]] == [False]
    assert "hpa.metrics_unavailable" not in cited(parse_text(manifest(hpa)))


def test_hpa_that_cannot_read_its_metric() -> None:
    hpa = {"kind": "HorizontalPodAutoscaler", "metadata": {"name": "h", "namespace": "x"},
           "spec": {"maxReplicas": 10}, "status": {"currentReplicas": 1, "conditions": [
               {"type": "ScalingActive", "status": "False", "reason": "FailedGetResourceMetric"}]}}
    assert [v for v, *_ in cited(parse_text(manifest(hpa)))["hpa.metrics_unavailable"]] == [True]
    hpa["status"]["conditions"][0]["reason"] = "ScalingDisabled"  # type: ignore[index]
    assert "hpa.metrics_unavailable" not in cited(parse_text(manifest(hpa)))


def test_event_list_and_concatenated_objects() -> None:
    first = {"kind": "Event", "reason": "Evicted", "type": "Warning",
             "message": "The node was low on resource: memory.", "involvedObject": {"kind": "Pod", "name": "a",
                                                                                    "namespace": "shop"}}
    second = {"kind": "Pod", "metadata": {"name": "b", "namespace": "shop"}, "status": {"phase": "Pending"}}
    text = json.dumps(first) + "\n" + json.dumps(second)  # JSON lines, as `jq -c .items[]` prints
    facts = cited(parse_text(text, ArtifactKind.EVENTS))
    assert facts["eviction.resource"] == [("memory", 1, 1, "pod/shop/a")]
    assert facts["pods.pending"] == [(["b"], 2, 2, "pod/shop/b")]


def test_a_pasted_command_line_before_the_yaml() -> None:
    text = "$ kubectl get pod x -o yaml\napiVersion: v1\nkind: Pod\nmetadata:\n  name: x\nstatus:\n  phase: Failed\n"
    facts = cited(parse_text(text))
    assert facts["pod.phase"] == [("Failed", 7, 7, "pod/x")]


# https://github.com/ray-project/kuberay/issues/4287 (issue description): a `yq` of one container's
# lastState.terminated, which has no key naming what it is a part of.
KUBERAY_4287 = """\
containerID: containerd://0f30d47b321c9d9482bc6b78f2292196f7156194f5d2ea02b12eaeb2b395a1b3
exitCode: 137
finishedAt: "2025-12-17T10:56:44Z"
reason: OOMKilled
startedAt: "2025-12-17T10:56:35Z"
"""


# https://github.com/NVIDIA/k8s-device-plugin/issues/58 (issue description): a Node's status, indented as a markdown
# code block, then the reporter's own words after a blank line.
DEVICE_PLUGIN_58 = """\
    status:
      allocatable:
        cpu: "48"
        memory: 263412492Ki
        nvidia.com/gpu: "0"
        pods: "110"
      capacity:
        cpu: "48"
        memory: 263514892Ki
        nvidia.com/gpu: "16"
        pods: "110"

""" + ("i think i cannot schedule any pods because the `allocatable` is zero. i have pods running on the box, "
       "but none that requested any gpus.\n")


def test_a_node_status_alone_gives_its_gpus_and_no_guessed_spec() -> None:
    assert k8s_objects.sniff(DEVICE_PLUGIN_58) >= 30
    result = parse_text(DEVICE_PLUGIN_58)
    facts = {f.name: f.value for f in result.facts}
    assert (facts["gpu.capacity_total"], facts["gpu.allocatable_total"], facts["gpu.unhealthy_count"]) == (16, 0, 16)
    # Nothing of the spec was pasted: no taints, no cordon are read.
    assert "node.taints" not in facts and "node.unschedulable" not in facts
    assert any("not YAML" in p for p in result.problems)


def test_a_terminated_state_alone_is_read_as_the_last_termination() -> None:
    assert k8s_objects.sniff(KUBERAY_4287) >= 30
    facts = cited(parse_text(KUBERAY_4287))
    assert [(v, s) for v, s, _, _ in facts["container.last_terminated.exit_code"]] == [(137, 2)]
    assert [v for v, *_ in facts["container.last_terminated.reason"]] == ["OOMKilled"]
    # Two keys of it are not enough: an event's reason/message is no container state.
    assert "container.last_terminated.exit_code" not in cited(parse_text("reason: Failed\nmessage: x\n"))


@pytest.mark.parametrize("text", [
    "", "hello", "{", "[1, 2, 3]", '"just a string"', "a: b\nc: d\n", "---\n---\n",
    '{"kind": "Pod", "spec": "nope", "status": [1, 2], "metadata": 7}',
    '{"kind": "Node", "status": {"capacity": {"nvidia.com/gpu": [8]}, "conditions": "x"}, "spec": {"taints": 5}}',
    '{"kind": "List", "items": [1, null, "x", {"kind": 5}]}',
    "kind: Pod\nspec: !!python/object/apply:os.system ['true']\n",
])
def test_garbage_and_wrong_types_give_no_exception(text: str) -> None:
    result = parse_text(text)
    assert [p for p in result.problems if p.startswith("internal")] == []
    assert all(f.name.startswith(("pod.", "node.")) or f.name == "events.reasons" for f in result.facts)


@pytest.mark.parametrize("text", ["", "hello", "{", "[1, 2, 3]", "a: b\n", "Name: x\nNamespace: y\n"])
def test_text_that_is_not_an_object_gives_no_facts(text: str) -> None:
    assert parse_text(text).facts == []


@pytest.mark.parametrize(("raw", "whole", "milli"), [
    ("200Gi", 200 * 2**30, None), ("512Mi", 512 * 2**20, None), ("1500m", 2, 1500), ("2", 2, 2000),
    ("1e9", 10**9, None), ("1E3", 1000, None), ("0.5", 1, 500), ("100Ki", 102400, None), ("1.5G", 1_500_000_000, None),
    (8, 8, 8000), (0.25, 1, 250), ("1E", 10**18, None), ("lots", None, None), ("", None, None), (True, None, None),
])
def test_quantities(raw: object, whole: int | None, milli: int | None) -> None:
    assert quantity_int(raw) == whole
    if milli is not None:
        assert quantity_milli(raw) == milli


def test_sniff() -> None:
    assert k8s_objects.sniff((FIXTURES / "pod_oom.yaml").read_text(encoding="utf-8")) >= 90
    assert k8s_objects.sniff((FIXTURES / "podlist_ranks.json").read_text(encoding="utf-8")) >= 90
    assert k8s_objects.sniff("Name:  x\nNamespace:  y\n") == 0
    assert k8s_objects.sniff('{"status": "success", "data": {}}') == 0


def test_readiness_delay_of_a_pod_object() -> None:
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: embed-0\n  namespace: search\nspec:\n  containers:\n"
            "  - name: server\n    image: vllm/vllm-openai:v0.6.3\n    readinessProbe:\n      httpGet:\n"
            "        path: /health\n        port: 8000\n      initialDelaySeconds: 10\n    livenessProbe:\n"
            "      httpGet:\n        path: /health\n        port: 8000\n      initialDelaySeconds: 30\n")
    result = k8s_objects.parse(Artifact(id="p", kind=ArtifactKind.K8S_OBJECT, content=text))
    got = {f.name: (f.value, f.citation.start) for f in result.facts}
    assert got["probe.readiness_delay_seconds"] == (10, 10)
    assert got["probe.liveness_delay_seconds"] == (30, 15)


# projectcalico/felix#2836: each manifest pasted as the here-document that fed `kubectl apply -n lzf -f- <<EOF`.
CALICO = (Path(__file__).resolve().parents[2] / "realworld" / "service-unreachable"
          / "calico-felix-2836-networkpolicy-allows-nodeport-not-container-port" / "evidence.txt")


def test_manifests_inside_shell_here_documents_are_read() -> None:
    lines = CALICO.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("kubectl apply -n lzf -f- <<EOF"))
    result = parse_text("\n".join(lines[start:]))
    facts = {f.name: f.value for f in result.facts}
    assert facts["service.selector"] == "app=kubia" and facts["netpol.ingress_selectors"] == ["*"]


def test_a_policy_over_every_pod_selects_a_services_backends_with_no_pods_pasted() -> None:
    from collectors.factset import FactSet
    from collectors.joins import service_backends

    lines = CALICO.read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("kubectl apply -n lzf -f- <<EOF"))
    joined = {f.name: f.value for f in service_backends(FactSet(parse_text("\n".join(lines[start:])).facts))}
    assert joined == {"netpol.selects_backends": True}


@pytest.mark.parametrize("name", ["shm'", '"shm"', "shm "])
def test_a_memory_volume_at_dev_shm_is_read_past_a_stray_quote_on_its_name(name: str) -> None:
    # People edit a spec before pasting it and leave a quote behind (`name: shm'`): a volume name is a DNS label,
    # so the quote is the paste's and the mount still refers to that volume.
    text = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n"
            "    volumeMounts:\n      - mountPath: /dev/shm\n        name: shm\n  volumes:\n    - emptyDir:\n"
            f"        medium: Memory\n        sizeLimit: 10Gi\n      name: {name}\n")
    facts = {f.name: f.value for f in k8s_objects.parse(Artifact(id="a", kind=ArtifactKind.K8S_OBJECT,
                                                                  content=text)).facts}
    assert facts["pod.shm_volume"] is True
    assert facts["pod.shm_size_bytes"] == 10 * 2**30


# A JSON member pasted without its object and cut off mid-way (kubernetes/kubernetes#3044, the PR's description:
# the kubelet's status of a container it had just OOM-killed, cut after the `state` member): read up to the cut,
# with the brackets the cut left open closed.
PR_3044 = '''        "oom-test": {
            "state": {
                "termination": {
                    "exitCode": 137,
                    "reason": "OOM Killed",
                    "startedAt": "2014-12-18T23:22:25Z",
                    "finishedAt": "2014-12-18T23:22:26Z"
                }
            },
'''


def test_a_json_member_cut_off_mid_paste_is_read_up_to_the_cut() -> None:
    problems: list[str] = []
    (doc,) = load_docs(PR_3044, problems)
    assert doc.data == {"oom-test": {"state": {"termination": {
        "exitCode": 137, "reason": "OOM Killed", "startedAt": "2014-12-18T23:22:25Z",
        "finishedAt": "2014-12-18T23:22:26Z"}}}}
    assert problems == []


@pytest.mark.parametrize(("cut", "restarts"), [
    # Cut after a whole field: everything before the cut is read.
    ('"containerStatuses": [\n {\n  "name": "cache",\n  "restartCount": 2,\n  "image": "redis:6",\n', 2),
    # Cut inside a string: read up to the last whole field.
    ('"containerStatuses": [\n {\n  "name": "cache",\n  "restartCount": 4,\n  "image": "redis:', 4),
])
def test_a_cut_container_status_gives_its_restart_count(cut: str, restarts: int) -> None:
    facts = {f.name: f.value for f in parse_text(cut).facts}
    assert facts["container.restart_count"] == restarts


@pytest.mark.parametrize("garbage", ['"a": [' + "[" * 100 + "1,", '"a": [1, }', '"a": {"b": "unterminated'])
def test_a_cut_member_that_cannot_be_closed_reads_nothing(garbage: str) -> None:
    assert not any(isinstance(d.data, dict) and d.data for d in load_docs(garbage, []))
