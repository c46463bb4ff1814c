"""The Kubernetes stand-in, exercised only through the official `kubernetes` client and through kubectl.

Every expectation here is the real API server's behaviour: response shapes, selector semantics, pagination tokens,
log options and error `Status` bodies. If one of these fails, the stand-in has drifted from a real cluster.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import kubernetes
import pytest
import urllib3
from kubernetes.client import (
    ApiException,
    AppsV1Api,
    AutoscalingV2Api,
    BatchV1Api,
    CoreV1Api,
    CustomObjectsApi,
    EventsV1Api,
    NetworkingV1Api,
    VersionApi,
)

from tests.standins.kube_api import Fault, KubeStandIn
from tests.standins.kube_tls import tls_material

NOW = datetime(2026, 11, 22, 8, 0, tzinfo=UTC)
KUBECTL = Path("/usr/bin/kubectl")
USER = "system:serviceaccount:triagebot:triagebot"
CONFIG: Any = kubernetes.config  # untyped module


# --- fixtures -------------------------------------------------------------------------------------------------------


def running(name: str, restarts: int = 0, last: dict[str, Any] | None = None) -> dict[str, Any]:
    status: dict[str, Any] = {"name": name, "image": f"registry/{name}:1", "imageID": "", "ready": True,
                              "restartCount": restarts, "state": {"running": {"startedAt": "2026-11-22T07:00:00Z"}}}
    if last:
        status["lastState"] = {"terminated": last}
    return status


def pod(name: str, ns: str = "ml", *, labels: dict[str, str] | None = None, node: str | None = "gpu-node-2",
        phase: str = "Running", containers: tuple[str, ...] = ("trainer",), init: tuple[str, ...] = (),
        statuses: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": c, "image": f"registry/{c}:1"} for c in containers]}
    if init:
        spec["initContainers"] = [{"name": c, "image": f"registry/{c}:1"} for c in init]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns, "labels": labels or {},
                         "creationTimestamp": "2026-11-22T06:00:00Z"},
            "spec": spec,
            "status": {"phase": phase, "podIP": "10.1.0.4",
                       "containerStatuses": statuses if statuses is not None else [running(c) for c in containers]}}


def node(name: str, ready: str = "True", unschedulable: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"nvidia.com/gpu.present": "true"},
                         "creationTimestamp": "2026-11-01T00:00:00Z"},
            "spec": {"unschedulable": unschedulable} if unschedulable else {},
            "status": {"conditions": [{"type": "Ready", "status": ready}],
                       "addresses": [{"type": "InternalIP", "address": "10.0.3.14"}],
                       "nodeInfo": {"kubeletVersion": "v1.31.4", "kubeProxyVersion": "", "machineID": "m",
                                    "systemUUID": "s", "bootID": "b", "kernelVersion": "6.1.0-28-amd64",
                                    "osImage": "Debian GNU/Linux 12 (bookworm)", "operatingSystem": "linux",
                                    "architecture": "amd64", "containerRuntimeVersion": "containerd://1.7.22"}}}


def event(name: str, obj: str, reason: str = "BackOff", ns: str = "ml", kind: str = "Pod",
          type_: str = "Warning", message: str = "Back-off restarting failed container") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": kind, "name": obj, "namespace": ns},
            "reason": reason, "message": message, "type": type_, "count": 3,
            "firstTimestamp": "2026-11-22T07:00:00Z", "lastTimestamp": "2026-11-22T07:50:00Z",
            "source": {"component": "kubelet", "host": "gpu-node-2"}}


def cluster() -> list[dict[str, Any]]:
    oom = {"reason": "OOMKilled", "exitCode": 137, "containerID": "containerd://0a1b",
           "startedAt": "2026-11-22T06:50:00Z", "finishedAt": "2026-11-22T06:59:00Z"}
    return [
        node("gpu-node-1"), node("gpu-node-2"), node("cpu-node-1", ready="False", unschedulable=True),
        pod("trainer-0", labels={"app": "trainer", "tier": "gpu"}, statuses=[running("trainer", 4, oom)]),
        pod("trainer-1", labels={"app": "trainer", "tier": "gpu"}, node="gpu-node-1"),
        pod("loader-0", labels={"app": "loader", "tier": "cpu"}, node="cpu-node-1", phase="Pending"),
        {**pod("sidecars-0", labels={"app": "web"}, containers=("web", "proxy"), init=("setup",)),
         "status": {"phase": "Running", "podIP": "10.1.0.9",
                    "initContainerStatuses": [{"name": "setup", "image": "registry/setup:1", "imageID": "",
                                               "ready": False, "restartCount": 0, "state": {"terminated": {
                                                   "reason": "Completed", "exitCode": 0,
                                                   "containerID": "containerd://5e7"}}}],
                    "containerStatuses": [running("web"), running("proxy")]}},
        pod("pulling-0", labels={"app": "web", "canary": "yes"}, statuses=[
            {"name": "trainer", "image": "registry/trainer:2", "imageID": "", "ready": False, "restartCount": 0,
             "state": {"waiting": {"reason": "ContainerCreating"}}}]),
        pod("api-0", ns="shop", labels={"app": "api"}),
        event("trainer-0.1", "trainer-0"), event("trainer-0.2", "trainer-0", reason="OOMKilling"),
        event("trainer-1.1", "trainer-1", reason="Scheduled", type_="Normal", message="assigned"),
        event("gpu-node-2.1", "gpu-node-2", kind="Node", reason="NodeNotReady", ns="default"),
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "api", "namespace": "shop"},
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "api"}},
                  "template": {"spec": {"containers": [{"name": "api", "image": "shop/api:3"}]}}},
         "status": {"replicas": 2, "readyReplicas": 1, "updatedReplicas": 2, "availableReplicas": 1}},
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
         "spec": {"template": {"spec": {"containers": [{"name": "t", "image": "t"}], "restartPolicy": "Never"}}},
         "status": {"succeeded": 1}},
        {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": "llm", "namespace": "ml"},
         "spec": {"pytorchReplicaSpecs": {"Worker": {"replicas": 4}}}},
        {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "metadata": {"name": "research"},
         "spec": {"weight": 1}},
    ]


POD_LOGS = {
    ("ml", "trainer-0", "trainer"): "2026-11-22T07:00:01Z starting\nepoch 1\n2026-11-22T07:40:00Z epoch 2\nepoch 3\n",
    ("ml", "trainer-0", "trainer:previous"): "loading shards\nCUDA out of memory\n",
    ("ml", "trainer-1", ""): "worker ready\n",
}
NODE_LOGS = {
    ("gpu-node-2", "kubelet"): (
        "Nov 22 07:01:00.000001 gpu-node-2 kubelet[811]: I1122 pod_workers.go: Pod started\n"
        "Nov 22 07:30:00.000002 gpu-node-2 kubelet[811]: E1122 kuberuntime: OOM kill of trainer\n"
        "Nov 22 07:45:00.000003 gpu-node-2 kubelet[811]: I1122 eviction_manager.go: OK\n"),
    ("gpu-node-2", "kern.log"): "Nov 22 07:29:59 gpu-node-2 kernel: Memory cgroup out of memory\n",
}


@pytest.fixture
def kube() -> Iterator[KubeStandIn]:
    with KubeStandIn(cluster(), pod_logs=POD_LOGS, node_logs=NODE_LOGS, now=NOW) as server:
        yield server


@pytest.fixture
def core(kube: KubeStandIn) -> Iterator[Any]:
    # Typed Any on purpose: the generated models make every field Optional, which says nothing about the server.
    with kube.api_client() as client:
        yield typed_any(CoreV1Api, client)


def typed_any(cls: type[Any], client: kubernetes.client.ApiClient) -> Any:
    return cls(client)


def no_retry_core(kube: KubeStandIn) -> Any:
    """A client that surfaces every status: by default urllib3 retries 429/503 that carry Retry-After."""
    cfg = kubernetes.client.Configuration(host=kube.url)
    cfg.api_key = {"authorization": f"Bearer {kube.token}"}
    cfg.retries = False
    return CoreV1Api(kubernetes.client.ApiClient(cfg))


def header(err: ApiException, name: str) -> str:
    return str((err.headers or {}).get(name, ""))


def api_error(call: Any, *args: Any, **kwargs: Any) -> tuple[ApiException, dict[str, Any]]:
    """Call, expect an ApiException, return it with its decoded Status body."""
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    body = info.value.body
    return info.value, json.loads(body) if body and body.startswith("{") else {}


def raw_get(client: kubernetes.client.ApiClient, path: str, query: list[tuple[str, str]] | None = None,
            accept: str = "*/*") -> tuple[int, str, str]:
    """A GET through the client's own request machinery (how triagebot reads /proxy/logs/?query=...)."""
    request = client.param_serialize(method="GET", resource_path=path, query_params=query or [],
                                     header_params={"Accept": accept}, auth_settings=["BearerToken"])
    response: Any = client.call_api(*request)  # the generated RESTResponse is untyped
    response.read()
    text = response.data.decode()
    if not 200 <= response.status <= 299:
        raise ApiException.from_response(http_resp=response, body=text, data=None)
    return response.status, response.getheader("content-type") or "", text


def names(items: Any) -> list[str]:
    return [i.metadata.name for i in items]


# --- discovery, get and list ----------------------------------------------------------------------------------------


def test_discovery_documents(kube: KubeStandIn, core: Any) -> None:
    client = core.api_client
    assert typed_any(VersionApi, client).get_code().git_version.startswith("v1.")
    core_resources = {r.name: r for r in core.get_api_resources().resources}
    assert {"pods", "pods/log", "nodes", "nodes/proxy", "events", "services", "endpoints", "resourcequotas",
            "configmaps"} <= set(core_resources)
    assert core_resources["pods"].namespaced and not core_resources["nodes"].namespaced
    assert "po" in core_resources["pods"].short_names
    groups = {g.name for g in typed_any(kubernetes.client.ApisApi, client).get_api_versions().groups}
    assert {"apps", "batch", "networking.k8s.io", "autoscaling", "events.k8s.io", "scheduling.volcano.sh",
            "kubeflow.org", "jobset.x-k8s.io", "kueue.x-k8s.io"} <= groups
    apps = {r.name for r in typed_any(AppsV1Api, client).get_api_resources().resources}
    assert {"deployments", "statefulsets", "replicasets", "daemonsets"} <= apps
    status, _, body = raw_get(client, "/apis/kueue.x-k8s.io/v1beta1")
    assert status == 200 and {"workloads", "localqueues", "clusterqueues"} <= {
        r["name"] for r in json.loads(body)["resources"]}


def test_get_and_list_core_objects(core: Any) -> None:
    got = core.read_namespaced_pod("trainer-0", "ml")
    assert got.kind == "Pod" and got.api_version == "v1"
    assert got.metadata.uid and got.metadata.resource_version and got.metadata.creation_timestamp
    assert got.status.container_statuses[0].last_state.terminated.reason == "OOMKilled"
    pods = core.list_namespaced_pod("ml")
    assert pods.kind == "PodList" and pods.api_version == "v1" and pods.metadata.resource_version
    assert names(pods.items) == ["loader-0", "pulling-0", "sidecars-0", "trainer-0", "trainer-1"]  # key order
    assert pods.items[0].kind is None  # list items carry no TypeMeta, as from a real server
    assert names(core.list_pod_for_all_namespaces().items)[-1] == "api-0"  # "shop/..." sorts after "ml/..."
    assert names(core.list_node().items) == ["cpu-node-1", "gpu-node-1", "gpu-node-2"]
    assert core.read_node("gpu-node-2").status.node_info.kubelet_version == "v1.31.4"
    namespaces = names(core.list_namespace().items)
    assert {"default", "kube-system", "ml", "shop"} <= set(namespaces)  # created with their first object
    for call in (core.list_namespaced_service, core.list_namespaced_endpoints, core.list_namespaced_resource_quota,
                 core.list_namespaced_config_map):
        assert call("ml").items == []


def test_not_found_is_a_real_status(core: Any) -> None:
    err, body = api_error(core.read_namespaced_pod, "nope", "ml")
    assert (err.status, err.reason) == (404, "Not Found")
    assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                    "message": 'pods "nope" not found', "reason": "NotFound",
                    "details": {"name": "nope", "kind": "pods"}, "code": 404}
    err, body = api_error(typed_any(AppsV1Api, core.api_client).read_namespaced_deployment, "nope", "shop")
    assert body["message"] == 'deployments.apps "nope" not found'
    assert body["details"] == {"name": "nope", "group": "apps", "kind": "deployments"}
    err, body = api_error(typed_any(CustomObjectsApi, core.api_client).list_namespaced_custom_object,
                          "example.com", "v1", "ml", "widgets")
    assert (err.status, body["message"]) == (404, "the server could not find the requested resource")


def test_workload_apis(kube: KubeStandIn, core: Any) -> None:
    client = core.api_client
    deployment = typed_any(AppsV1Api, client).read_namespaced_deployment("api", "shop")
    assert deployment.status.ready_replicas == 1
    assert names(typed_any(AppsV1Api, client).list_deployment_for_all_namespaces().items) == ["api"]
    assert typed_any(AppsV1Api, client).list_namespaced_stateful_set("ml").kind == "StatefulSetList"
    jobs = typed_any(BatchV1Api, client).list_namespaced_job("ml", field_selector="status.successful=1")
    assert names(jobs.items) == ["train"]
    assert typed_any(NetworkingV1Api, client).list_namespaced_network_policy("ml").items == []
    assert typed_any(AutoscalingV2Api, client).list_namespaced_horizontal_pod_autoscaler("shop").items == []


def test_custom_resources(core: Any) -> None:
    crd = typed_any(CustomObjectsApi, core.api_client)
    jobs = crd.list_namespaced_custom_object("kubeflow.org", "v1", "ml", "pytorchjobs")
    assert jobs["kind"] == "PyTorchJobList"
    assert jobs["items"][0]["kind"] == "PyTorchJob"  # unstructured lists keep each item's type
    assert crd.get_namespaced_custom_object("kubeflow.org", "v1", "ml", "pytorchjobs", "llm")["spec"]
    queues = crd.list_cluster_custom_object("scheduling.volcano.sh", "v1beta1", "queues")
    assert [q["metadata"]["name"] for q in queues["items"]] == ["research"]
    assert crd.list_namespaced_custom_object("jobset.x-k8s.io", "v1alpha2", "ml", "jobsets")["items"] == []
    assert crd.list_namespaced_custom_object("kueue.x-k8s.io", "v1beta1", "ml", "workloads")["items"] == []


def test_events_share_storage_across_both_apis(kube: KubeStandIn, core: Any) -> None:
    kube.add({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "new.1", "namespace": "ml"},
              "eventTime": "2026-11-22T07:55:00.000000Z", "reportingController": "kubelet",
              "reportingInstance": "gpu-node-2", "action": "Killing", "reason": "Killing", "type": "Normal",
              "regarding": {"kind": "Pod", "name": "trainer-1", "namespace": "ml"}, "note": "Stopping container"})
    v1 = typed_any(EventsV1Api, core.api_client).list_namespaced_event("ml", field_selector="regarding.name=trainer-1,"
                                                                                    "reason=Killing")
    assert [(e.note, e.regarding.name) for e in v1.items] == [("Stopping container", "trainer-1")]
    legacy = core.list_namespaced_event("ml", field_selector="involvedObject.name=trainer-1,reason=Killing")
    assert [(e.message, e.reporting_component) for e in legacy.items] == [("Stopping container", "kubelet")]
    # Events recorded through core/v1 have no eventTime: events.k8s.io/v1 serves them with "eventTime": null,
    # which this client's strict EventsV1Event model cannot load -- exactly what a real cluster does to it.
    raw = typed_any(EventsV1Api, core.api_client).list_namespaced_event("ml", _preload_content=False).data
    old = next(e for e in json.loads(raw)["items"] if e["metadata"]["name"] == "trainer-0.1")
    assert old["eventTime"] is None and old["deprecatedCount"] == 3 and old["regarding"]["name"] == "trainer-0"


def test_event_involved_object_uid_filled_from_the_object(core: Any) -> None:
    uid = core.read_namespaced_pod("trainer-0", "ml").metadata.uid
    events = core.list_namespaced_event("ml", field_selector=f"involvedObject.uid={uid}")
    assert sorted(names(events.items)) == ["trainer-0.1", "trainer-0.2"]


# --- selectors ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("selector", "expected"), [
    ("app=trainer", ["trainer-0", "trainer-1"]),
    ("app==trainer", ["trainer-0", "trainer-1"]),
    ("app!=trainer", ["loader-0", "pulling-0", "sidecars-0"]),
    ("app in (loader, web)", ["loader-0", "pulling-0", "sidecars-0"]),
    ("app notin (trainer,web)", ["loader-0"]),
    ("canary", ["pulling-0"]),
    ("!tier", ["pulling-0", "sidecars-0"]),
    ("app=trainer,tier=gpu", ["trainer-0", "trainer-1"]),
    ("tier in (gpu),app!=loader", ["trainer-0", "trainer-1"]),
    ("app=nothing", []),
])
def test_label_selectors(core: Any, selector: str, expected: list[str]) -> None:
    assert names(core.list_namespaced_pod("ml", label_selector=selector).items) == expected


@pytest.mark.parametrize("selector", ["app in", "app in ()", "app=(x", "!", "bad key!=x", "app=a b", "app>x"])
def test_invalid_label_selector_is_400(core: Any, selector: str) -> None:
    err, body = api_error(core.list_namespaced_pod, "ml", label_selector=selector)
    assert (err.status, body["reason"], body["code"]) == (400, "BadRequest", 400)


@pytest.mark.parametrize(("selector", "expected"), [
    ("spec.nodeName=gpu-node-1", ["trainer-1"]),
    ("status.phase=Pending", ["loader-0"]),
    ("status.phase!=Running", ["loader-0"]),
    ("metadata.name=trainer-0", ["trainer-0"]),
    ("metadata.namespace==ml,spec.nodeName!=gpu-node-2", ["loader-0", "trainer-1"]),
    ("spec.host=cpu-node-1", ["loader-0"]),
])
def test_pod_field_selectors(core: Any, selector: str, expected: list[str]) -> None:
    assert names(core.list_namespaced_pod("ml", field_selector=selector).items) == expected


@pytest.mark.parametrize(("selector", "expected"), [
    ("involvedObject.name=trainer-0", ["trainer-0.1", "trainer-0.2"]),
    ("involvedObject.kind=Pod,reason=Scheduled", ["trainer-1.1"]),
    ("type=Warning,involvedObject.namespace=ml", ["trainer-0.1", "trainer-0.2"]),
    ("involvedObject.kind=Node", ["gpu-node-2.1"]),
    ("source=kubelet,reason!=BackOff", ["gpu-node-2.1", "trainer-0.2", "trainer-1.1"]),
])
def test_event_field_selectors(core: Any, selector: str, expected: list[str]) -> None:
    assert sorted(names(core.list_event_for_all_namespaces(field_selector=selector).items)) == expected


def test_node_field_selectors(core: Any) -> None:
    assert names(core.list_node(field_selector="spec.unschedulable=true").items) == ["cpu-node-1"]
    assert names(core.list_node(field_selector="metadata.name=gpu-node-1").items) == ["gpu-node-1"]


def test_unsupported_field_selectors_name_the_label(core: Any) -> None:
    client = core.api_client
    cases = [
        (core.list_namespaced_pod, ("ml",), "spec.containers", "field label not supported: spec.containers"),
        (core.list_node, (), "metadata.namespace", "field label not supported: metadata.namespace"),
        (core.list_namespaced_event, ("ml",), "involvedObject", "field label not supported: involvedObject"),
        (typed_any(AppsV1Api, client).list_namespaced_deployment, ("shop",), "status.replicas",
         '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'),
        (typed_any(BatchV1Api, client).list_namespaced_job, ("ml",), "status.active",
         'field label "status.active" not supported for batchv1.Job'),
    ]
    for call, args, label, message in cases:
        err, body = api_error(call, *args, field_selector=f"{label}=x")
        assert (err.status, body["reason"], body["message"]) == (400, "BadRequest", message)
    err, body = api_error(core.list_namespaced_pod, "ml", field_selector="spec.nodeName")
    assert body["message"] == "invalid selector: 'spec.nodeName'; can't understand 'spec.nodeName'"


# --- pagination -----------------------------------------------------------------------------------------------------


def test_pagination_walks_every_item_once(kube: KubeStandIn, core: Any) -> None:
    first = core.list_namespaced_pod("ml", limit=2)
    assert names(first.items) == ["loader-0", "pulling-0"]
    assert first.metadata._continue and first.metadata.remaining_item_count == 3
    kube.add(pod("aaa-late", labels={"app": "late"}))  # after the first page: not in this consistent list
    kube.add(pod("zzz-late", labels={"app": "late"}))
    seen, token = names(first.items), first.metadata._continue
    while token:
        page = core.list_namespaced_pod("ml", limit=2, _continue=token)
        assert page.metadata.resource_version == first.metadata.resource_version
        seen += names(page.items)
        token = page.metadata._continue
    assert seen == ["loader-0", "pulling-0", "sidecars-0", "trainer-0", "trainer-1"]
    assert "zzz-late" in names(core.list_namespaced_pod("ml").items)


def test_pagination_with_selectors_has_no_remaining_count(core: Any) -> None:
    page = core.list_pod_for_all_namespaces(label_selector="app", limit=1)
    assert len(page.items) == 1 and page.metadata._continue and page.metadata.remaining_item_count is None


def test_limit_is_capped_by_page_limit_max() -> None:
    pods = [pod(f"p-{i:02d}") for i in range(7)]
    with KubeStandIn(pods, page_limit_max=3) as kube, kube.api_client() as client:
        api = typed_any(CoreV1Api, client)
        first = api.list_namespaced_pod("ml", limit=500)
        assert len(first.items) == 3 and first.metadata._continue
        assert len(api.list_namespaced_pod("ml").items) == 7  # no limit: the whole list


def test_garbage_continue_token_is_400(core: Any) -> None:
    err, body = api_error(core.list_namespaced_pod, "ml", limit=1, _continue="not-a-token")
    assert (err.status, body["reason"]) == (400, "BadRequest")
    assert body["message"].startswith("invalid continue token")


def test_expired_continue_token_is_410_with_a_fresh_token(kube: KubeStandIn, core: Any) -> None:
    first = core.list_namespaced_pod("ml", limit=2)
    kube.expire_continue_tokens()
    err, body = api_error(core.list_namespaced_pod, "ml", limit=2, _continue=first.metadata._continue)
    assert (err.status, err.reason, body["reason"], body["code"]) == (410, "Gone", "Expired", 410)
    assert body["message"].startswith("The provided continue parameter is too old")
    rest = core.list_namespaced_pod("ml", limit=10, _continue=body["metadata"]["continue"])
    assert names(rest.items) == ["sidecars-0", "trainer-0", "trainer-1"]


def test_continue_with_resource_version_is_rejected(core: Any) -> None:
    token = core.list_namespaced_pod("ml", limit=1).metadata._continue
    _, body = api_error(core.list_namespaced_pod, "ml", limit=1, _continue=token, resource_version="1")
    assert body["message"] == "specifying resource version is not allowed when using continue"


# --- pod logs -------------------------------------------------------------------------------------------------------


def test_pod_log_options(core: Any) -> None:
    log = core.read_namespaced_pod_log
    assert log("trainer-0", "ml") == POD_LOGS[("ml", "trainer-0", "trainer")]  # the only container
    assert log("trainer-0", "ml", container="trainer", tail_lines=1) == "epoch 3\n"
    assert log("trainer-0", "ml", tail_lines=0) == ""
    assert log("trainer-0", "ml", limit_bytes=5) == "2026-"
    assert log("trainer-0", "ml", previous=True) == "loading shards\nCUDA out of memory\n"
    assert log("trainer-1", "ml") == "worker ready\n"  # the "" key: the default container
    # sinceSeconds counts back from the server clock (08:00); lines inherit the last timestamp seen.
    assert log("trainer-0", "ml", since_seconds=30 * 60) == "2026-11-22T07:40:00Z epoch 2\nepoch 3\n"
    stamped = log("trainer-0", "ml", timestamps=True, tail_lines=1)
    assert stamped == "2026-11-22T07:40:00Z epoch 3\n"
    raw = log("trainer-0", "ml", tail_lines=1, _preload_content=False)
    assert raw.data == b"epoch 3\n"


def test_pod_log_errors(core: Any) -> None:
    cases: list[tuple[tuple[str], dict[str, Any], int, str]] = [
        (("sidecars-0",), {}, 400, "a container name must be specified for pod sidecars-0, choose one of: "
                                   "[web proxy] or one of the init containers: [setup]"),
        (("trainer-0",), {"container": "nope"}, 400, "container nope is not valid for pod trainer-0"),
        (("trainer-1",), {"previous": True}, 400,
         'previous terminated container "trainer" in pod "trainer-1" not found'),
        (("pulling-0",), {}, 400, 'container "trainer" in pod "pulling-0" is waiting to start: ContainerCreating'),
        (("ghost",), {}, 404, 'pods "ghost" not found'),
        (("trainer-0",), {"tail_lines": -1}, 422,
         'PodLogOptions "trainer-0" is invalid: tailLines: Invalid value: -1: must be greater than or equal to 0'),
    ]
    for args, kwargs, status, message in cases:
        err, body = api_error(core.read_namespaced_pod_log, *args, "ml", **kwargs)
        assert (err.status, body["message"]) == (status, message)
    assert core.read_namespaced_pod_log("sidecars-0", "ml", container="setup") == ""  # ran, wrote nothing


def test_unscheduled_pod_has_empty_logs(kube: KubeStandIn, core: Any) -> None:
    kube.add(pod("pending-0", node=None, phase="Pending", statuses=[]))
    assert core.read_namespaced_pod_log("pending-0", "ml") == ""


# --- node logs ------------------------------------------------------------------------------------------------------


def node_logs(core: Any, node_name: str, query: list[tuple[str, str]] | None = None,
              path: str = "logs/") -> tuple[int, str, str]:
    return raw_get(core.api_client, f"/api/v1/nodes/{node_name}/proxy/{path}", query)


def test_node_log_query(core: Any) -> None:
    kubelet = NODE_LOGS[("gpu-node-2", "kubelet")]
    assert node_logs(core, "gpu-node-2", [("query", "kubelet")]) == (200, "text/plain;charset=UTF-8", kubelet)
    _, _, tail = node_logs(core, "gpu-node-2", [("query", "kubelet"), ("tailLines", "1")])
    assert tail == kubelet.splitlines(keepends=True)[-1]
    _, _, grep = node_logs(core, "gpu-node-2", [("query", "kubelet"), ("pattern", "oom kill")])
    assert grep == kubelet.splitlines(keepends=True)[1]  # all-lowercase pattern: case-insensitive
    _, _, since = node_logs(core, "gpu-node-2", [("query", "kubelet"), ("sinceTime", "2026-11-22T07:30:00Z")])
    assert since == "".join(kubelet.splitlines(keepends=True)[1:])
    assert node_logs(core, "gpu-node-2", [("query", "containerd")])[2] == "\nlog not found for containerd\n"
    assert node_logs(core, "gpu-node-2", [("query", "kern")])[2] == NODE_LOGS[("gpu-node-2", "kern.log")]
    assert node_logs(core, "gpu-node-2", path="logs/kern.log")[2] == NODE_LOGS[("gpu-node-2", "kern.log")]
    assert core.connect_get_node_proxy_with_path("gpu-node-2", "logs/kern.log").startswith("Nov 22")


def test_node_log_query_errors_are_kubelet_text(core: Any) -> None:
    cases = [
        ([("query", "kubelet"), ("sinceTime", "yesterday")], 400,
         'sinceTime: Invalid value: "yesterday": invalid time format\n'),
        ([("query", "kubelet"), ("tailLines", "200000")], 406,
         "tailLines: Invalid value: 200000: must be between 0 and 100000, inclusive\n"),
        ([("query", "kern.log")], 406, 'query: Invalid value: "kern.log": input contains unsupported characters\n'),
    ]
    for query, status, text in cases:
        err, _ = api_error(node_logs, core, "gpu-node-2", query)
        assert (err.status, err.body) == (status, text)
        assert header(err, "Content-Type").startswith("text/plain")
    err, _ = api_error(node_logs, core, "gpu-node-2", [("query", "kubelet")], path="logs/kern.log")
    assert (err.status, err.body) == (406, "path not allowed in query mode\n")
    err, _ = api_error(node_logs, core, "gpu-node-2", [("query", "kubelet")], path="logs")
    assert (err.status, err.body) == (404, "404 page not found\n")


def test_node_log_for_unknown_node_is_404_status(core: Any) -> None:
    err, body = api_error(node_logs, core, "gpu-node-9", [("query", "kubelet")])
    assert (err.status, body["message"], body["details"]) == (404, 'nodes "gpu-node-9" not found',
                                                              {"name": "gpu-node-9", "kind": "nodes"})


def test_node_log_query_gate_off_serves_the_var_log_listing() -> None:
    with KubeStandIn([node("gpu-node-2")], node_logs=NODE_LOGS, node_log_query=False) as kube, \
            kube.api_client() as client:
        status, content_type, body = raw_get(client, "/api/v1/nodes/gpu-node-2/proxy/logs/", [("query", "kubelet")])
        assert (status, content_type) == (200, "text/html; charset=utf-8")
        assert '<a href="kern.log">kern.log</a>' in body and "kubelet[811]" not in body
        files = raw_get(client, "/api/v1/nodes/gpu-node-2/proxy/logs/kern.log")
        assert files[2] == NODE_LOGS[("gpu-node-2", "kern.log")]  # plain files still work without the gate


# --- faults, auth, writes, latency ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "reason", "phrase", "message"), [
    (403, "Forbidden", "Forbidden", f'pods is forbidden: User "{USER}" cannot list resource "pods" in API group "" '
                                    'in the namespace "ml"'),
    (404, "NotFound", "Not Found", "the server could not find the requested resource"),
    (410, "Expired", "Gone", "The resourceVersion for the provided list is too old."),
    (429, "TooManyRequests", "Too Many Requests", "Too many requests, please try again later."),
    (500, "InternalError", "Internal Server Error", "Internal error occurred: etcdserver: request timed out"),
    (503, "ServiceUnavailable", "Service Unavailable", "the server is currently unable to handle the request"),
    (504, "Timeout", "Gateway Timeout", "Timeout: request did not complete within the allotted timeout"),
])
def test_fault_shapes(kube: KubeStandIn, status: int, reason: str, phrase: str, message: str) -> None:
    kube.set_faults([Fault(r"/api/v1/namespaces/ml/pods$", status, retry_after=7)])
    core = no_retry_core(kube)
    err, body = api_error(core.list_namespaced_pod, "ml")
    assert (err.status, err.reason) == (status, phrase)
    assert (body["kind"], body["status"], body["reason"], body["message"], body["code"]) == (
        "Status", "Failure", reason, message, status)
    if status == 429:
        assert header(err, "Retry-After") == "7" and body["details"] == {"retryAfterSeconds": 7}
    assert core.read_namespaced_pod("trainer-0", "ml").metadata.name == "trainer-0"  # other paths unaffected


def test_requests_beyond_the_in_flight_limit_are_429_with_retry_after() -> None:
    # Slow answers keep requests in flight; a limit of 2 turns the rest of 6 concurrent requests away.
    with KubeStandIn(cluster(), now=NOW, latency=0.4, max_inflight=2) as server:
        core = no_retry_core(server)
        barrier = threading.Barrier(6)

        def one(_: int) -> int:
            barrier.wait()
            try:
                core.list_node()
            except ApiException as err:
                body = json.loads(err.body)
                assert header(err, "Retry-After") == "1" and body["details"] == {"retryAfterSeconds": 1}
                assert (body["reason"], body["message"]) == ("TooManyRequests",
                                                             "Too many requests, please try again later.")
                return int(err.status)
            return 200

        with ThreadPoolExecutor(max_workers=6) as pool:
            statuses = sorted(pool.map(one, range(6)))
        assert statuses.count(200) >= 2 and statuses.count(429) >= 1
        assert server.peak_inflight == 2 and server.inflight == 0
        assert core.list_node().items  # capacity is back once the slow ones are done


def test_forbidden_names_the_subresource(kube: KubeStandIn, core: Any) -> None:
    kube.set_faults([Fault(r"/api/v1/nodes/[^/]+/proxy/logs", 403)])
    err, body = api_error(node_logs, core, "gpu-node-2", [("query", "kubelet")])
    assert body["message"] == (f'nodes "gpu-node-2" is forbidden: User "{USER}" cannot get resource "nodes/proxy" '
                               'in API group "" at the cluster scope')
    assert body["details"] == {"name": "gpu-node-2", "kind": "nodes"}
    err, body = api_error(core.list_namespaced_secret, "ml")  # the read-only role never covers secrets
    assert (err.status, body["reason"]) == (403, "Forbidden")


def test_default_client_honours_retry_after(kube: KubeStandIn, core: Any) -> None:
    kube.set_faults([Fault(r"/api/v1/nodes$", 429, retry_after=1, times=1)])
    started = time.monotonic()
    assert len(core.list_node().items) == 3  # urllib3 waited Retry-After, then asked again
    assert time.monotonic() - started >= 1
    assert [r.status for r in kube.requests] == [429, 200]


def test_fault_times_and_method(kube: KubeStandIn, core: Any) -> None:
    kube.set_faults([Fault(r"/api/v1/nodes", 500, times=2), Fault(r"/api/v1/nodes", 503, method="POST")])
    for _ in range(2):
        assert api_error(core.list_node)[0].status == 500
    assert len(core.list_node().items) == 3


def test_slow_fault_delays_then_answers(kube: KubeStandIn, core: Any) -> None:
    kube.set_faults([Fault(r"/api/v1/namespaces/ml/pods/trainer-0$", 0, delay=0.3, times=1)])
    started = time.monotonic()
    assert core.read_namespaced_pod("trainer-0", "ml").metadata.name == "trainer-0"
    assert time.monotonic() - started >= 0.3


def test_slow_fault_trips_a_client_timeout(kube: KubeStandIn, core: Any) -> None:
    kube.set_faults([Fault(r"/api/v1/namespaces/ml/events", 0, delay=0.5)])
    with pytest.raises((urllib3.exceptions.ReadTimeoutError, urllib3.exceptions.MaxRetryError)):
        core.list_namespaced_event("ml", _request_timeout=0.1)


def test_requests_without_the_token_are_401(kube: KubeStandIn) -> None:
    for token in ("wrong", None):
        cfg = kubernetes.client.Configuration(host=kube.url)
        if token:
            cfg.api_key = {"authorization": f"Bearer {token}"}
        with kubernetes.client.ApiClient(cfg) as client:
            err, body = api_error(typed_any(CoreV1Api, client).list_namespaced_pod, "ml")
        assert (err.status, body["reason"], body["message"]) == (401, "Unauthorized", "Unauthorized")


def test_writes_are_refused_and_logged(kube: KubeStandIn, core: Any) -> None:
    eviction = kubernetes.client.V1Eviction(metadata=kubernetes.client.V1ObjectMeta(name="trainer-0", namespace="ml"))
    calls = [
        (core.delete_namespaced_pod, ("trainer-0", "ml"), 'delete is not supported on resources of kind "pods"'),
        (core.patch_node, ("gpu-node-2", {"spec": {"unschedulable": True}}),
         'patch is not supported on resources of kind "nodes"'),
        (core.create_namespaced_pod_eviction, ("trainer-0", "ml", eviction),
         'create is not supported on resources of kind "pods"'),
    ]
    for call, args, message in calls:
        err, body = api_error(call, *args)
        assert (err.status, body["reason"], body["message"]) == (405, "MethodNotAllowed", message)
    assert core.read_node("gpu-node-2").spec.unschedulable is None
    assert [r.method for r in kube.requests if r.method != "GET"] == ["DELETE", "PATCH", "POST"]


def test_request_log_shows_paths_and_queries(kube: KubeStandIn, core: Any) -> None:
    core.list_namespaced_pod("ml", label_selector="app=trainer")
    core.connect_get_node_proxy_with_path("gpu-node-2", "logs/kern.log")  # sent as logs%2Fkern.log
    assert [(r.path, r.query, r.status) for r in kube.requests] == [
        ("/api/v1/namespaces/ml/pods", {"labelSelector": "app=trainer"}, 200),
        ("/api/v1/nodes/gpu-node-2/proxy/logs/kern.log", {}, 200)]
    assert not any(r.path == "/api/v1/pods" for r in kube.requests)


def test_latency_applies_to_every_request() -> None:
    with KubeStandIn([node("gpu-node-1")], latency=0.1) as kube, kube.api_client() as client:
        api = typed_any(CoreV1Api, client)
        started = time.monotonic()
        for _ in range(3):
            api.read_node("gpu-node-1")
        assert time.monotonic() - started >= 0.3


def test_large_lists_stay_consistent() -> None:
    pods = [pod(f"p-{i:05d}", ns=f"ns-{i % 7}", labels={"app": f"a{i % 5}"}) for i in range(3000)]
    events = [event(f"e-{i:05d}", f"p-{i % 3000:05d}", ns=f"ns-{i % 7}") for i in range(20000)]
    with KubeStandIn(pods + events, latency=0.01) as kube, kube.api_client() as client:
        api = typed_any(CoreV1Api, client)
        assert len(api.list_namespaced_pod("ns-3", label_selector="app=a1").items) == len(
            [p for p in pods if p["metadata"]["namespace"] == "ns-3" and p["metadata"]["labels"]["app"] == "a1"])
        total, token = 0, ""
        while True:
            raw = api.list_event_for_all_namespaces(limit=5000, _continue=token or None, _preload_content=False)
            page = json.loads(raw.data)
            total += len(page["items"])
            token = page["metadata"].get("continue", "")
            if not token:
                break
        assert total == 20000


# --- lifecycle, kubeconfig ------------------------------------------------------------------------------------------


def test_stops_cleanly_and_binds_loopback_only(tmp_path: Path) -> None:
    with KubeStandIn([node("gpu-node-1")]) as kube, kube.api_client() as client:
        assert kube.url.startswith("http://127.0.0.1:")
        port = int(kube.url.rsplit(":", 1)[1])
        typed_any(CoreV1Api, client).read_node("gpu-node-1")  # leaves an idle keep-alive connection open
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass


def test_kubeconfig_works_with_load_kube_config(kube: KubeStandIn, tmp_path: Path) -> None:
    path = kube.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    client = CONFIG.new_client_from_config(config_file=str(path), context="standin")
    with client:
        assert names(typed_any(CoreV1Api, client).list_namespaced_pod("ml", label_selector="app=trainer").items) == [
            "trainer-0", "trainer-1"]
    bad = kube.kubeconfig(tmp_path / "bad", token="stolen")
    with CONFIG.new_client_from_config(config_file=str(bad)) as client:
        assert api_error(typed_any(CoreV1Api, client).list_node)[0].status == 401


# --- kubectl --------------------------------------------------------------------------------------------------------


def require_kubectl() -> Path:
    if KUBECTL.exists() and tls_material() is not None:
        return KUBECTL
    missing = "kubectl at /usr/bin/kubectl" if not KUBECTL.exists() else "openssl (kubectl needs TLS for tokens)"
    if os.environ.get("CI"):
        pytest.fail(f"{missing} is required in CI")
    pytest.skip(f"{missing} is not installed; skipped because CI is unset")


def kubectl(kube: KubeStandIn, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    binary = require_kubectl()
    config = kube.kubeconfig(tmp_path / "kubeconfig", namespace="ml")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    return subprocess.run([str(binary), "--kubeconfig", str(config), "--cache-dir", str(tmp_path / "cache"), *args],
                          capture_output=True, text=True, timeout=60, env=env, check=False)


def test_kubectl_get_pods_table(kube: KubeStandIn, tmp_path: Path) -> None:
    out = kubectl(kube, tmp_path, "get", "pods")
    assert out.returncode == 0, out.stderr
    rows = [line.split() for line in out.stdout.splitlines()]
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    by_name = {r[0]: r for r in rows[1:]}
    assert by_name["trainer-0"][1:6] == ["1/1", "Running", "4", "(61m", "ago)"]
    assert by_name["pulling-0"][1:3] == ["0/1", "ContainerCreating"]
    assert by_name["sidecars-0"][1:3] == ["2/2", "Running"]
    assert by_name["loader-0"][2] == "Pending"
    wide = kubectl(kube, tmp_path, "get", "pods", "-o", "wide", "-l", "app=trainer")
    assert "gpu-node-1" in wide.stdout and "10.1.0.4" in wide.stdout


def test_kubectl_get_json_with_selectors(kube: KubeStandIn, tmp_path: Path) -> None:
    out = kubectl(kube, tmp_path, "get", "pods", "-l", "app in (trainer)", "--field-selector",
                  "spec.nodeName=gpu-node-2", "-o", "json")
    assert out.returncode == 0, out.stderr
    assert [p["metadata"]["name"] for p in json.loads(out.stdout)["items"]] == ["trainer-0"]
    nodes = kubectl(kube, tmp_path, "get", "nodes")
    assert "NotReady,SchedulingDisabled" in nodes.stdout
    events = kubectl(kube, tmp_path, "get", "events", "--field-selector", "involvedObject.name=trainer-0")
    assert "OOMKilling" in events.stdout and "pod/trainer-0" in events.stdout
    crd = kubectl(kube, tmp_path, "get", "pytorchjobs", "-o", "name")
    assert crd.stdout.strip() == "pytorchjob.kubeflow.org/llm"
    deploy = kubectl(kube, tmp_path, "get", "deploy", "-n", "shop")
    assert deploy.stdout.split("\n")[1].split()[:4] == ["api", "1/2", "2", "1"]


def test_kubectl_describe_pod_and_node(kube: KubeStandIn, tmp_path: Path) -> None:
    out = kubectl(kube, tmp_path, "describe", "pod", "trainer-0")
    assert out.returncode == 0, out.stderr
    assert "OOMKilled" in out.stdout and "Restart Count:  4" in out.stdout
    assert "Back-off restarting failed container" in out.stdout  # events found by involvedObject.uid
    node_out = kubectl(kube, tmp_path, "describe", "node", "gpu-node-2")
    assert node_out.returncode == 0, node_out.stderr
    assert "trainer-0" in node_out.stdout  # the node's pods, listed by spec.nodeName


def test_kubectl_logs_and_raw_node_logs(kube: KubeStandIn, tmp_path: Path) -> None:
    assert kubectl(kube, tmp_path, "logs", "trainer-0", "--tail=1").stdout == "epoch 3\n"
    assert kubectl(kube, tmp_path, "logs", "trainer-0", "-p").stdout.endswith("CUDA out of memory\n")
    raw = kubectl(kube, tmp_path, "get", "--raw", "/api/v1/nodes/gpu-node-2/proxy/logs/?query=kubelet&tailLines=1")
    assert raw.stdout == NODE_LOGS[("gpu-node-2", "kubelet")].splitlines(keepends=True)[-1]
    defaulted = kubectl(kube, tmp_path, "logs", "sidecars-0")  # kubectl itself picks the first container
    assert 'Defaulted container "web" out of: web, proxy, setup (init)' in defaulted.stderr
    err = kubectl(kube, tmp_path, "get", "--raw", "/api/v1/namespaces/ml/pods/sidecars-0/log")
    assert "Error from server (BadRequest): a container name must be specified for pod sidecars-0" in err.stderr


def test_kubectl_errors(kube: KubeStandIn, tmp_path: Path) -> None:
    missing = kubectl(kube, tmp_path, "get", "pod", "ghost")
    assert 'Error from server (NotFound): pods "ghost" not found' in missing.stderr
    write = kubectl(kube, tmp_path, "delete", "pod", "trainer-0", "--wait=false")
    assert write.returncode != 0 and "MethodNotAllowed" in write.stderr
    assert kube.requests[-1].method == "DELETE"
    kube.set_faults([Fault(r"/api/v1/namespaces/ml/pods", 403)])
    denied = kubectl(kube, tmp_path, "get", "pods")
    assert "Error from server (Forbidden): pods is forbidden" in denied.stderr


def test_kubectl_large_list_is_gzipped_and_paged(tmp_path: Path) -> None:
    events = [event(f"e-{i:05d}", f"p-{i % 50}") for i in range(1200)]
    with KubeStandIn(events) as kube:
        out = kubectl(kube, tmp_path, "get", "events", "-o", "json")
        assert out.returncode == 0, out.stderr
        assert len(json.loads(out.stdout)["items"]) == 1200
        pages = [r for r in kube.requests if r.path == "/api/v1/namespaces/ml/events"]
        assert [r.query.get("limit") for r in pages] == ["500", "500", "500"]
