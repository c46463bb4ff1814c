"""The Kubernetes live source against the loopback API stand-in, through the real `kubernetes` client.

Every test also checks the two rules the source must never break: it only reads (GET), and it never lists
pods or events cluster-wide or namespace-wide without a selector.
"""

from __future__ import annotations

import copy
import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.factset import FactSet
from collectors.live.base import Scope, SourceResult, TargetNotFound, Window
from collectors.live.kubernetes import collect_kubernetes
from collectors.models import Artifact, ArtifactKind, Target
from collectors.parsers.registry import parse_artifact
from playbooks.pipeline import analyse
from tests.standins.kube_api import Fault, KubeStandIn

FIXTURES = Path(__file__).parents[1] / "fixtures" / "live" / "k8s"
NOW = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
WINDOW = Window.last(timedelta(hours=1), NOW)
SAFE_ID = re.compile(r"[A-Za-z0-9._-]+")

CRASH_POD = "checkout-7d9f8c6b5-fghij"
KUBELET_NODE_B = (
    'Mar 10 08:50:03.123456 node-b kubelet[812]: E0310 08:50:03.123456     812 pod_workers.go:1301] "Error syncing '
    'pod, skipping" err="failed to \\"StartContainer\\" for \\"app\\" with CrashLoopBackOff: \\"back-off 2m40s '
    'restarting failed container=app pod=checkout-7d9f8c6b5-fghij_shop(a2dd396a)\\"" '
    'pod="shop/checkout-7d9f8c6b5-fghij" podUID="a2dd396a-1a4c-5bb7-8d33-17cbcf1c05cd"\n')
NCCL_MASTER = (
    "gpu-a:61:61 [0] NCCL INFO Bootstrap : Using eth0:10.0.3.10<0>\n"
    "gpu-a:61:61 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so), using internal implementation\n"
    "gpu-a:61:61 [0] NCCL INFO cudaDriverVersion 12040\n")


def load(name: str) -> list[dict[str, Any]]:
    with (FIXTURES / f"{name}.yaml").open() as fh:
        return [doc for doc in yaml.safe_load_all(fh) if doc]


def standin(objects: list[dict[str, Any]], **kwargs: Any) -> KubeStandIn:
    return KubeStandIn(objects, now=NOW, **kwargs)


def collect(kube: KubeStandIn, target: Target, **kwargs: Any) -> tuple[Scope, SourceResult]:
    scope, result = collect_kubernetes(kube.api_client(), target, WINDOW, **kwargs)
    assert_read_only_and_scoped(kube)
    assert_artifacts_well_formed(result)
    return scope, result


def assert_read_only_and_scoped(kube: KubeStandIn) -> None:
    for req in kube.requests:
        fields, labels = req.query.get("fieldSelector", ""), req.query.get("labelSelector", "")
        assert req.method == "GET", req
        assert "/secrets" not in req.path, req
        assert not req.path.startswith("/apis/events.k8s.io"), req
        if req.path == "/api/v1/pods":  # cluster-wide pods: only one node's, never all
            assert fields.startswith("spec.nodeName="), req
        if re.fullmatch(r"/api/v1/namespaces/[^/]+/pods", req.path):
            assert labels, req
        if req.path == "/api/v1/events" or re.fullmatch(r"/api/v1/namespaces/[^/]+/events", req.path):
            assert "involvedObject.kind=" in fields and "involvedObject.name=" in fields, req


def assert_artifacts_well_formed(result: SourceResult) -> None:
    ids = [a.id for a in result.artifacts]
    assert len(ids) == len(set(ids)), ids
    for a in result.artifacts:
        assert SAFE_ID.fullmatch(a.id), a.id
        assert a.source == "kubernetes" and a.command and a.captured_at is not None, a.id
        assert a.command.startswith("kubectl "), a.command
    for m in result.missing:
        assert m.source.startswith("kubernetes:") and m.reason, m
    for a in result.artifacts:  # every artifact is something its parser reads cleanly
        assert not parse_artifact(a).problems, (a.id, parse_artifact(a).problems)


def of_kind(result: SourceResult, kind: ArtifactKind) -> list[Artifact]:
    return [a for a in result.artifacts if a.kind == kind]


def one(result: SourceResult, artifact_id: str) -> Artifact:
    found = [a for a in result.artifacts if a.id == artifact_id]
    assert found, [a.id for a in result.artifacts]
    return found[0]


def merged(artifacts: list[Artifact]) -> FactSet:
    facts = FactSet()
    for artifact in artifacts:
        parsed = parse_artifact(artifact)
        assert not parsed.problems, (artifact.id, parsed.problems)
        for fact in parsed.facts:
            facts.add(fact)
    return facts


def missing_for(result: SourceResult, prefix: str) -> list[str]:
    return [m.reason for m in result.missing if m.source.startswith(prefix)]


# ---- resolution ------------------------------------------------------------------------------------------


@pytest.fixture
def shop() -> Iterator[KubeStandIn]:
    logs = {("shop", CRASH_POD, "app:previous"): "loading config from /etc/checkout/config.yaml\n"
                                                 "panic: open /etc/checkout/config.yaml: no such file or directory\n",
            ("shop", CRASH_POD, "app"): "loading config from /etc/checkout/config.yaml\n",
            ("shop", "checkout-7d9f8c6b5-abcde", "app"): "listening on :8080\n"}
    with standin(load("shop"), pod_logs=logs, node_logs={("node-b", "kubelet"): KUBELET_NODE_B}) as kube:
        yield kube


def test_service_resolves_through_its_selector(shop: KubeStandIn) -> None:
    scope, result = collect(shop, Target(service="checkout", namespace="shop"))

    assert scope.namespace == "shop" and scope.service == "checkout"
    assert scope.workload == "deployment/checkout"
    assert sorted(p.name for p in scope.pods) == ["checkout-7d9f8c6b5-abcde", CRASH_POD]  # not the staging decoy
    assert {(n.name, n.internal_ip) for n in scope.nodes} == {("node-a", "10.0.1.10"), ("node-b", "10.0.1.11")}
    assert not result.missing

    pods = one(result, "k8s-pods-shop-checkout.json")
    assert pods.kind == ArtifactKind.POD and pods.subject == "service/shop/checkout"
    assert pods.command == "kubectl get pods -n shop -l app=checkout,tier=web -o json"
    assert pods.content.startswith('{\n  "apiVersion": "v1",\n  "items": [')  # pretty, so parsers cite lines
    pod_facts = merged([pods])
    assert pod_facts.value("container.waiting.reason") == "CrashLoopBackOff"
    cited = pod_facts.get("container.waiting.reason")
    assert cited is not None and '"CrashLoopBackOff"' in pods.content.split("\n")[cited.sources[0].citation.start - 1]

    events = one(result, f"k8s-events-pod-shop-{CRASH_POD}.json")
    assert events.kind == ArtifactKind.EVENTS and events.subject == f"pod/shop/{CRASH_POD}"
    assert events.command == ("kubectl get events -n shop --field-selector "
                              f"involvedObject.kind=Pod,involvedObject.name={CRASH_POD} -o json")
    assert "BackOff" in merged([events]).value("events.reasons")
    assert "decoy" not in "".join(a.content for a in result.artifacts)

    nodes = of_kind(result, ArtifactKind.NODE)
    assert len(nodes) == 1 and set(re.findall(r'"name": "(node-[ab])"', nodes[0].content)) == {"node-a", "node-b"}
    assert nodes[0].command == "kubectl get nodes node-b node-a -o json"  # nodes of troubled pods first
    # Both nodes in one list call by hostname label; node-b's label differs, so it is read on its own.
    node_reads = [r.path for r in shop.requests if r.path.startswith("/api/v1/nodes") and "proxy" not in r.path]
    assert sorted(node_reads) == ["/api/v1/nodes", "/api/v1/nodes/node-b"]
    assert merged(nodes).value("node.conditions") == ["MemoryPressure"]
    assert "NodeHasInsufficientMemory" in one(result, "k8s-events-node-node-b.json").content

    hpa = one(result, "k8s-hpa-shop-checkout.json")
    assert hpa.command == "kubectl get hpa -n shop checkout -o json"
    assert merged([hpa]).value("hpa.at_max") is True
    assert one(result, "k8s-service-shop-checkout.json").kind == ArtifactKind.K8S_OBJECT
    assert one(result, "k8s-deployment-shop-checkout.json").command == \
        "kubectl get deployments -n shop checkout -o json"
    assert one(result, "k8s-resourcequotas-shop.json").command == "kubectl get resourcequota -n shop -o json"
    assert "ScalingReplicaSet" in one(result, "k8s-events-deployment-shop-checkout.json").content


def test_logs_current_and_previous_and_kubelet(shop: KubeStandIn) -> None:
    _, result = collect(shop, Target(service="checkout", namespace="shop"))

    previous = one(result, f"k8s-logs-shop-{CRASH_POD}-app-previous.log")
    assert previous.kind == ArtifactKind.CONTAINER_LOG
    assert previous.command == f"kubectl logs -n shop {CRASH_POD} -c app --tail=2000 --limit-bytes=512000 --previous"
    assert "panic: open /etc/checkout/config.yaml" in previous.content
    assert one(result, f"k8s-logs-shop-{CRASH_POD}-app.log").content.startswith("loading config")

    kubelet = one(result, "k8s-kubelet-node-b.log")
    assert kubelet.kind == ArtifactKind.KUBELET_LOG and kubelet.subject == "node/node-b"
    assert kubelet.command == ("kubectl get --raw '/api/v1/nodes/node-b/proxy/logs/?query=kubelet"
                               "&sinceTime=2026-03-10T08:00:00Z&tailLines=2000'")
    assert merged([kubelet]).value("container.waiting.reason") == "CrashLoopBackOff"
    proxied = [r for r in shop.requests if r.path.endswith("/proxy/logs/")]
    assert proxied and all(r.query["query"] == "kubelet" for r in proxied)


def test_logs_are_bounded_by_tail_and_bytes() -> None:
    objects = load("shop")
    noisy = "".join(f"line {i:05d} of a chatty service\n" for i in range(5000))
    with standin(objects, pod_logs={("shop", "checkout-7d9f8c6b5-abcde", "app"): noisy}) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"), log_tail_lines=100,
                            log_limit_bytes=1000)
        _, wide = collect(kube, Target(service="checkout", namespace="shop"), log_tail_lines=100,
                          log_limit_bytes=100_000)
    cut = one(result, "k8s-logs-shop-checkout-7d9f8c6b5-abcde-app.log")
    assert len(cut.content.encode()) <= 1000 and cut.content.startswith("line 04900")
    tail = one(wide, "k8s-logs-shop-checkout-7d9f8c6b5-abcde-app.log")
    assert tail.content.count("\n") == 100 and tail.content.endswith("line 04999 of a chatty service\n")


def test_service_without_selector_falls_back_to_app_labels(shop: KubeStandIn) -> None:
    scope, result = collect(shop, Target(service="payments", namespace="shop"))
    assert [p.name for p in scope.pods] == ["payments-0"]
    assert one(result, "k8s-pods-shop-payments.json").command == \
        "kubectl get pods -n shop -l app.kubernetes.io/name=payments -o json"
    tried = [r.query.get("labelSelector") for r in shop.requests if r.path == "/api/v1/namespaces/shop/pods"]
    assert tried == ["app=payments", "app.kubernetes.io/name=payments"]  # `app` first, as documented


def test_deployment_by_name_uses_its_full_selector(shop: KubeStandIn) -> None:
    scope, result = collect(shop, Target(service="ledger", namespace="shop"))
    assert scope.workload == "deployment/ledger"
    assert [p.name for p in scope.pods] == ["ledger-5c8d7b9f4-zz9yx"]
    pods = one(result, "k8s-pods-shop-ledger.json")
    assert pods.command == "kubectl get pods -n shop -l 'component=ledger,track in (stable)' -o json"
    assert pods.subject == "deployment/shop/ledger"


def test_pod_target(shop: KubeStandIn) -> None:
    scope, result = collect(shop, Target(service=f"pod/{CRASH_POD}", namespace="shop"))
    assert [p.name for p in scope.pods] == [CRASH_POD] and scope.workload == "deployment/checkout"
    pod = one(result, f"k8s-pod-shop-{CRASH_POD}.json")
    assert pod.command == f"kubectl get pod -n shop {CRASH_POD} -o json"
    assert merged([pod]).value("container.restart_count") == 5
    # The Target's own pod field means the same.
    scope2, _ = collect(shop, Target(pod=CRASH_POD, namespace="shop"))
    assert [p.name for p in scope2.pods] == [CRASH_POD]


def test_node_target_is_described_with_its_pods(shop: KubeStandIn) -> None:
    scope, result = collect(shop, Target(service="node/node-b", namespace="shop"))
    assert scope.nodes[0].name == "node-b" and scope.nodes[0].internal_ip == "10.0.1.11"
    assert sorted(p.name for p in scope.pods) == [CRASH_POD, "ledger-5c8d7b9f4-zz9yx"]
    describe = one(result, "k8s-describe-node-node-b.txt")
    assert describe.command == "kubectl describe node node-b"
    assert "Non-terminated Pods:  (2 in total)" in describe.content
    assert "NodeHasInsufficientMemory" in describe.content  # the node's events, as kubectl shows them
    assert merged([describe]).value("node.conditions") == ["MemoryPressure"]
    pods = one(result, "k8s-pods-node-node-b.json")
    assert pods.command == "kubectl get pods -A --field-selector spec.nodeName=node-b -o json"
    assert one(result, "k8s-kubelet-node-b.log")


@pytest.mark.parametrize(("target", "message"), [
    (Target(service="checkuot", namespace="shop"),
     'service "checkuot" not found in namespace "shop"; did you mean: checkout, checkout-api?'),
    (Target(service="job/ledgr", namespace="shop"), 'job "ledgr" not found in namespace "shop"; did you mean: ledger?'),
    # The name exists, as another kind: say which, not "did you mean: ledger" for "ledger".
    (Target(service="statefulset/ledger", namespace="shop"),
     'statefulset "ledger" not found in namespace "shop"; did you mean: deployment/ledger?'),
    (Target(service="pod/checkout-7d9f8c6b5-zzzzz", namespace="shop"),
     'pod "checkout-7d9f8c6b5-zzzzz" not found in namespace "shop"; did you mean: checkout, checkout-api?'),
    (Target(service="node/node-c", namespace="shop"), 'node "node-c" not found; did you mean: node-a, node-b?'),
    (Target(service="checkout", namespace="shp"), 'namespace "shp" not found; did you mean: shop?'),
    (Target(service="zzz", namespace="shop"), 'service "zzz" not found in namespace "shop"'),
    (Target(service="Bad_Name", namespace="shop"), '"Bad_Name" is not a valid Kubernetes object name'),
])
def test_unknown_targets_name_near_matches(shop: KubeStandIn, target: Target, message: str) -> None:
    with pytest.raises(TargetNotFound) as err:
        collect_kubernetes(shop.api_client(), target, WINDOW)
    assert str(err.value).startswith(message), str(err.value)
    assert_read_only_and_scoped(shop)


# ---- GPU allocation --------------------------------------------------------------------------------------


def gpu_objects(notebook_gpus: int = 6, node1_allocatable: int = 8) -> list[dict[str, Any]]:
    objects = copy.deepcopy(load("gpu"))
    for obj in objects:
        name = obj["metadata"]["name"]
        if name in ("notebook-a", "notebook-b"):
            for part in ("requests", "limits"):
                obj["spec"]["containers"][0]["resources"][part]["nvidia.com/gpu"] = str(notebook_gpus)
        if name == "gpu-node-1":
            obj["status"]["allocatable"]["nvidia.com/gpu"] = str(node1_allocatable)
    return objects


def test_pending_gpu_pod_fragmented_gpus() -> None:
    with standin(gpu_objects()) as kube:
        scope, result = collect(kube, Target(service="trainer", namespace="ml"))
    assert [(p.name, p.phase, p.gpu_request) for p in scope.pods] == [("trainer-0", "Pending", 4)]
    described = of_kind(result, ArtifactKind.DESCRIBE_NODE)
    # The H100 node is outside the pod's nodeSelector and the CPU node has no GPUs.
    assert [a.subject for a in described] == ["node/gpu-node-1", "node/gpu-node-2"]
    node2 = one(result, "k8s-describe-node-gpu-node-2.txt").content
    assert "finished-eval" not in node2  # a Succeeded pod holds no GPUs
    assert re.search(r"^  nvidia.com/gpu +6 +6$", node2, re.M)
    for artifact in described:
        per_node = merged([artifact])
        assert (per_node.value("gpu.free_total"), per_node.value("gpu.unhealthy_count")) == (2, 0), artifact.id
    facts = merged(described)
    assert (facts.value("gpu.free_total"), facts.value("gpu.max_free_per_node")) == (4, 2)

    report = analyse(result.artifacts, Target(service="trainer", namespace="ml"), missing=result.missing)
    lead = report.findings[0]
    assert lead.playbook == "pending" and lead.hypotheses[0].id == "gpu-fragmentation", lead.hypotheses[:3]
    assert lead.hypotheses[0].status == "confirmed"


def test_pending_gpu_pod_no_gpus_left() -> None:
    with standin(gpu_objects(notebook_gpus=8)) as kube:
        _, result = collect(kube, Target(service="trainer", namespace="ml"))
    facts = merged(of_kind(result, ArtifactKind.DESCRIBE_NODE))
    assert (facts.value("gpu.free_total"), facts.value("gpu.max_free_per_node")) == (0, 0)
    report = analyse(result.artifacts, Target(service="trainer", namespace="ml"))
    lead = report.findings[0]
    assert (lead.playbook, lead.hypotheses[0].id, lead.hypotheses[0].status) == \
        ("pending", "insufficient-gpu", "confirmed")


def test_unhealthy_gpus_show_as_capacity_above_allocatable() -> None:
    with standin(gpu_objects(node1_allocatable=6)) as kube:
        _, result = collect(kube, Target(service="trainer", namespace="ml"))
    node1 = merged([one(result, "k8s-describe-node-gpu-node-1.txt")])
    assert (node1.value("gpu.unhealthy_count"), node1.value("gpu.free_total")) == (2, 0)


def test_mig_slices_count_as_gpus_for_a_pending_pod() -> None:
    mig = "nvidia.com/mig-3g.40gb"
    objects = [obj for obj in gpu_objects() if obj["metadata"]["name"] not in ("gpu-node-h100",)]
    for obj in objects:
        name = obj["metadata"]["name"]
        if name == "trainer-0":
            obj["spec"]["containers"][0]["resources"] = {"limits": {mig: "1"}, "requests": {mig: "1"}}
        if name == "gpu-node-1":
            obj["metadata"]["labels"].update({"nvidia.com/mig.strategy": "mixed",
                                              "nvidia.com/mig.config": "all-3g.40gb"})
            for part in ("capacity", "allocatable"):
                obj["status"][part].update({mig: "2", "nvidia.com/gpu": "6"})
        if name == "notebook-a":
            obj["spec"]["containers"][0]["resources"]["requests"][mig] = "2"
            obj["spec"]["containers"][0]["resources"]["limits"][mig] = "2"
    with standin(objects) as kube:
        scope, result = collect(kube, Target(service="trainer", namespace="ml"))
    assert scope.pods[0].gpu_request == 0  # no whole GPUs, yet a GPU pod: the allocation is read
    node1 = one(result, "k8s-describe-node-gpu-node-1.txt").content
    assert re.search(rf"^  {re.escape(mig)}: +2$", node1, re.M)
    assert re.search(rf"^  {re.escape(mig)} +2 +2$", node1, re.M)  # both slices taken
    assert merged([one(result, "k8s-describe-node-gpu-node-1.txt")]).value("node.gpu_sharing") == "mig"


# ---- distributed jobs ------------------------------------------------------------------------------------


@pytest.fixture
def dist() -> Iterator[KubeStandIn]:
    with standin(load("distributed"), pod_logs={("ml-dist", "llama-ft-master-0", "pytorch"): NCCL_MASTER}) as kube:
        yield kube


def test_distributed_job_all_ranks_one_pending(dist: KubeStandIn) -> None:
    scope, result = collect(dist, Target(service="job/llama-ft", namespace="ml-dist"))

    assert scope.workload == "pytorchjob/llama-ft"
    assert [(p.name, p.phase, p.node) for p in scope.pods] == [
        ("llama-ft-master-0", "Running", "gpu-a"), ("llama-ft-worker-0", "Running", "gpu-b"),
        ("llama-ft-worker-1", "Running", "gpu-c"), ("llama-ft-worker-2", "Pending", None)]
    pods = one(result, "k8s-pods-ml-dist-llama-ft.json")
    assert pods.command == "kubectl get pods -n ml-dist -l training.kubeflow.org/job-name=llama-ft -o json"
    facts = merged([pods])
    assert facts.value("dist.ranks") == [0, 1, 2, 3] and facts.value("dist.world_sizes") == [4]
    assert facts.value("nccl.socket_ifname") == "eth0" and facts.value("pods.pending") == ["llama-ft-worker-2"]

    job = one(result, "k8s-pytorchjob-ml-dist-llama-ft.json")
    assert job.command == "kubectl get pytorchjobs.kubeflow.org -n ml-dist llama-ft -o json"
    group = one(result, "k8s-podgroup-ml-dist-llama-ft.json")
    assert group.command == "kubectl get podgroups.scheduling.volcano.sh -n ml-dist llama-ft -o json"
    assert merged([group]).value("gang.min_available") == 4
    assert "Unschedulable" in one(result, "k8s-events-podgroup-ml-dist-llama-ft.json").content
    headless = one(result, "k8s-service-ml-dist-llama-ft-master-0.json")
    assert '"clusterIP": "None"' in headless.content
    netpol = one(result, "k8s-networkpolicies-ml-dist.json")
    assert merged([netpol]).value("netpol.count") == 1

    # Every running rank's log in one artifact, as `kubectl logs -l ... --prefix` prints it (the workers printed
    # nothing yet); the pending rank has no log to read.
    nccl = one(result, "k8s-logs-ml-dist-llama-ft-ranks.log")
    assert nccl.kind == ArtifactKind.NCCL_LOG and nccl.subject == "pytorchjob/ml-dist/llama-ft"
    assert nccl.content.splitlines()[0] == "[pod/llama-ft-master-0/pytorch] " + NCCL_MASTER.splitlines()[0]
    assert not [a for a in result.artifacts if a.id.startswith("k8s-logs-ml-dist-llama-ft-master-0")]
    # Every rank runs on a full 8-GPU node: the pending rank has nowhere to go.
    described = of_kind(result, ArtifactKind.DESCRIBE_NODE)
    assert sorted(a.subject for a in described) == ["node/gpu-a", "node/gpu-b", "node/gpu-c"]
    assert not of_kind(result, ArtifactKind.NODE)  # described nodes are not listed twice (GPU sums would double)
    assert merged(described).value("gpu.free_total") == 0
    assert not result.missing


def test_indexed_batch_job(dist: KubeStandIn) -> None:
    scope, result = collect(dist, Target(service="job/eval-batch", namespace="ml-dist"))
    assert scope.workload == "job/eval-batch" and len(scope.pods) == 2
    assert one(result, "k8s-job-ml-dist-eval-batch.json").command == "kubectl get jobs -n ml-dist eval-batch -o json"
    assert one(result, "k8s-networkpolicies-ml-dist.json")  # Indexed with parallelism: a distributed job
    workload = one(result, "k8s-workload-ml-dist-job-eval-batch-3f2a1.json")  # its Kueue Workload, not the decoy
    assert workload.command == "kubectl get workloads.kueue.x-k8s.io -n ml-dist job-eval-batch-3f2a1 -o json"
    assert merged([workload]).value("gang.configured") is True
    assert not [a for a in result.artifacts if "job-other" in a.id]


def test_job_whose_pods_the_quota_refused(dist: KubeStandIn) -> None:
    scope, result = collect(dist, Target(service="job/sweep-7", namespace="ml-dist"))
    assert scope.workload == "job/sweep-7" and scope.pods == []
    facts = merged(result.artifacts)
    assert facts.value("quota.exceeded") is True
    assert facts.value("quota.resources_at_limit") == ["requests.nvidia.com/gpu"]


# ---- failures --------------------------------------------------------------------------------------------


def test_forbidden_events_become_missing_and_the_rest_stays() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/(namespaces/[^/]+/)?events$", 403)]) as kube:
        scope, result = collect(kube, Target(service="checkout", namespace="shop"))
    assert len(scope.pods) == 2 and not of_kind(result, ArtifactKind.EVENTS)
    reasons = missing_for(result, f"kubernetes:events pod/shop/{CRASH_POD}")
    # The API server's Forbidden, said as the permission that was missing and the rule that grants it.
    assert reasons == ['not granted: list events in namespace shop (a Role rule {apiGroups: [""], '
                       'resources: ["events"], verbs: ["list"]} grants it)']
    assert missing_for(result, "kubernetes:events node/node-b")
    assert of_kind(result, ArtifactKind.POD) and of_kind(result, ArtifactKind.NODE)


def test_throttled_call_is_retried_after_retry_after() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/namespaces/shop/pods$", 429, retry_after=1, times=1)]) as kube:
        started = time.monotonic()
        scope, result = collect(kube, Target(service="checkout", namespace="shop"))
        elapsed = time.monotonic() - started
        statuses = [r.status for r in kube.requests if r.path == "/api/v1/namespaces/shop/pods"]
    assert statuses == [429, 200]
    assert len(scope.pods) == 2 and not result.missing
    assert elapsed >= 1.0  # Retry-After was honoured


def test_throttling_beyond_the_budget_is_missing() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/namespaces/shop/resourcequotas$", 429, retry_after=30)]) as kube:
        started = time.monotonic()
        _, result = collect(kube, Target(service="checkout", namespace="shop"), call_timeout=2.0)
        assert time.monotonic() - started < 2.0  # a 30 s Retry-After is not waited for
    [reason] = missing_for(result, "kubernetes:resourcequotas")
    assert reason.startswith("429 Too Many Requests: Too many requests, please try again later.")
    assert "Retry-After 30s" in reason


def test_server_error_is_missing() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/nodes/node-b$", 500)]) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"))
    assert missing_for(result, "kubernetes:node/node-b") == [
        "500 Internal Server Error: Internal error occurred: etcdserver: request timed out"]
    assert '"name": "node-a"' in of_kind(result, ArtifactKind.NODE)[0].content


def test_failed_node_list_falls_back_to_single_reads() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/nodes$", 403)]) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"))
    assert not missing_for(result, "kubernetes:node")
    assert set(re.findall(r'"name": "(node-[ab])"', of_kind(result, ArtifactKind.NODE)[0].content)) == {"node-a",
                                                                                                         "node-b"}


def test_slow_call_times_out_once_and_is_missing() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/nodes/node-b$", 0, delay=3.0)]) as kube:
        started = time.monotonic()
        _, result = collect(kube, Target(service="checkout", namespace="shop"), call_timeout=0.5)
        elapsed = time.monotonic() - started
        tries = [r for r in kube.requests if r.path == "/api/v1/nodes/node-b"]
    assert missing_for(result, "kubernetes:node/node-b") == ["timeout after 0.5s"]
    assert elapsed < 2.0, elapsed  # one timeout, not urllib3's four
    assert len(tries) <= 1
    assert of_kind(result, ArtifactKind.POD)


def test_forbidden_pods_still_report_the_service() -> None:
    with standin(load("shop"), faults=[Fault(r"/api/v1/namespaces/shop/pods$", 403)]) as kube:
        scope, result = collect(kube, Target(service="checkout", namespace="shop"))
    assert scope.pods == [] and not of_kind(result, ArtifactKind.POD)  # unreadable is not "no pods"
    assert missing_for(result, "kubernetes:pods")[0].startswith("not granted: list pods in namespace shop")
    assert one(result, "k8s-service-shop-checkout.json")
    # With no pods to name their controller, the Deployment named like the Service stands in.
    assert scope.workload == "deployment/checkout" and one(result, "k8s-deployment-shop-checkout.json")


def test_node_log_api_off_is_missing_with_the_reason() -> None:
    with standin(load("shop"), node_log_query=False) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"))
    [reason] = missing_for(result, "kubernetes:kubelet-log node/node-b")
    assert reason.startswith("node log API not served (NodeLogQuery feature gate off?)")
    assert not of_kind(result, ArtifactKind.KUBELET_LOG)


def test_node_proxy_forbidden_or_absent() -> None:
    faults = [Fault(r"/api/v1/nodes/node-b/proxy", 403)]
    with standin(load("shop"), faults=faults) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"))
    [reason] = missing_for(result, "kubernetes:kubelet-log node/node-b")
    assert reason == "not granted: get nodes/proxy (the kubelet-logs component grants it, or set kubelet_logs: false)"
    with standin(load("shop"), faults=[Fault(r"/api/v1/nodes/node-b/proxy", 404)]) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"))
    [reason] = missing_for(result, "kubernetes:kubelet-log node/node-b")
    assert reason.startswith("node log API not served (NodeLogQuery feature gate off?): 404 Not Found")


def test_kubelet_logs_off_asks_nothing_of_nodes_proxy_and_says_so_once() -> None:
    with standin(load("shop")) as kube:
        _, result = collect(kube, Target(service="checkout", namespace="shop"), kubelet_logs=False)
        assert not [r for r in kube.requests if "/proxy/" in r.path]
    assert not of_kind(result, ArtifactKind.KUBELET_LOG)
    assert [(m.source, m.reason) for m in result.missing if "kubelet" in m.source] == [
        ("kubernetes:kubelet-log", "not read: kubelet_logs is off (it needs get on nodes/proxy)")]


def test_same_cluster_same_artifacts_in_the_same_order(shop: KubeStandIn) -> None:
    runs = [collect(shop, Target(service="checkout", namespace="shop"), max_workers=n)[1] for n in (1, 8)]
    assert [(a.id, a.content) for a in runs[0].artifacts] == [(a.id, a.content) for a in runs[1].artifacts]


def test_all_triages_of_a_process_together_keep_under_the_in_flight_cap() -> None:
    """Many triages at once must not flood the API server: the process holds PROCESS_IN_FLIGHT calls at most."""
    from concurrent.futures import ThreadPoolExecutor

    from collectors.live.k8s_calls import PROCESS_IN_FLIGHT, KubeCalls, bounded_client

    wanted = PROCESS_IN_FLIGHT + 36
    with standin(load("shop"), latency=1.0) as kube:
        api = bounded_client(kube.api_client(), wanted)
        calls = KubeCalls(api, call_timeout=10.0)
        with ThreadPoolExecutor(max_workers=wanted) as pool:
            answers = list(pool.map(lambda _: calls.get(calls.core.read_namespace, "shop"), range(wanted)))
        assert kube.peak_inflight == PROCESS_IN_FLIGHT
        assert kube.inflight == 0
    assert all(isinstance(a, dict) and a["metadata"]["name"] == "shop" for a in answers)
