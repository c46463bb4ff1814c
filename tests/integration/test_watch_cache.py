"""The watch cache against the Kubernetes stand-in's watches, through the real `kubernetes` client.

Every watch behaviour the real API server has is exercised: the initial list, ADDED/MODIFIED/DELETED events,
bookmarks, watch timeouts (resume from the last resourceVersion, no relist), a 410 Gone after a compaction
(relist), and failing watch calls (backoff, then recovery). Waits are on conditions with generous deadlines.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import orjson
import pytest

from bot.runner.triage import run_triage
from collectors.live.collect import LiveAccess
from collectors.live.k8s_cached import CachedCalls
from collectors.live.k8s_calls import Failure
from collectors.live.watch_cache import KINDS, WatchCache
from collectors.models import Target
from playbooks.report import Report
from tests.integration.test_kubernetes_source import CRASH_POD, KUBELET_NODE_B, NCCL_MASTER, NOW, load
from tests.standins.kube_api import Fault, KubeStandIn
from tests.standins.test_kube_api import event, node, pod

DEADLINE = 60.0  # generous: the machine may be loaded; a healthy run takes well under a second per wait
POD_KINDS = tuple(k for k in KINDS if k.key in ("pod", "event", "node"))


def eventually(condition: Callable[[], bool], what: str) -> None:
    end = time.monotonic() + DEADLINE
    while not condition():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.02)


def names(cache: WatchCache, key: str, ns: str | None = "ml") -> list[str]:
    informer = cache.informer(key, ns)
    assert informer is not None
    return [orjson.loads(r)["metadata"]["name"] for r in informer.store.select(ns, lambda _l, _f: True)]


def requests_of(kube: KubeStandIn, path: str, watch: bool) -> list[Any]:
    return [r for r in kube.requests if r.path == path and (r.query.get("watch") == "true") == watch]


@pytest.fixture
def kube() -> Iterator[KubeStandIn]:
    with KubeStandIn([pod("trainer-0", labels={"app": "trainer"}), pod("web-0", labels={"app": "web"}),
                      node("gpu-node-2"), event("trainer-0.1", "trainer-0")], bookmark_interval=0.2) as server:
        yield server


@pytest.fixture
def cache(kube: KubeStandIn) -> Iterator[WatchCache]:
    started = WatchCache(kube.api_client(), ["ml"], watch_timeout=30, kinds=POD_KINDS).start()
    try:
        assert started.wait_synced(DEADLINE)
        yield started
    finally:
        started.stop()


def test_the_initial_list_fills_the_cache_and_events_keep_it_current(kube: KubeStandIn, cache: WatchCache) -> None:
    assert names(cache, "pod") == ["trainer-0", "web-0"]
    assert names(cache, "node", None) == ["gpu-node-2"]
    kube.add(pod("trainer-1", labels={"app": "trainer"}))
    kube.add(pod("web-0", labels={"app": "web"}, phase="Failed"))
    kube.delete("v1", "Pod", "ml", "trainer-0")
    eventually(lambda: names(cache, "pod") == ["trainer-1", "web-0"], "ADDED and DELETED")
    informer = cache.informer("pod", "ml")
    assert informer is not None
    eventually(lambda: orjson.loads(informer.store.get("ml", "web-0") or b"{}")["status"]["phase"] == "Failed",
               "MODIFIED")
    assert len(requests_of(kube, "/api/v1/namespaces/ml/pods", watch=False)) == 1  # listed once, then watched
    assert informer.relists == 1


def test_watches_ask_for_bookmarks_and_bookmarks_move_the_resource_version(kube: KubeStandIn,
                                                                          cache: WatchCache) -> None:
    eventually(lambda: requests_of(kube, "/api/v1/namespaces/ml/pods", watch=True), "the first watch")
    watches = requests_of(kube, "/api/v1/namespaces/ml/pods", watch=True)
    assert watches[0].query["allowWatchBookmarks"] == "true"
    assert watches[0].query["resourceVersion"]  # from the list, never a watch from "now"
    kube.add(pod("api-0", ns="shop", labels={"app": "api"}))  # not watched: only a bookmark tells the cache
    informer = cache.informer("pod", "ml")
    assert informer is not None
    eventually(lambda: informer.resource_version == kube.resource_version, "a bookmark's resourceVersion")
    assert names(cache, "pod") == ["trainer-0", "web-0"]


def test_a_watch_that_times_out_resumes_from_its_resource_version_without_a_relist(kube: KubeStandIn) -> None:
    cache = WatchCache(kube.api_client(), ["ml"], watch_timeout=1, kinds=POD_KINDS).start()
    try:
        assert cache.wait_synced(DEADLINE)
        path = "/api/v1/namespaces/ml/pods"
        eventually(lambda: len(requests_of(kube, path, watch=True)) >= 3, "watches renewed after timeoutSeconds")
        assert all(r.query["timeoutSeconds"] == "1" for r in requests_of(kube, path, watch=True))
        kube.add(pod("trainer-1", labels={"app": "trainer"}))
        eventually(lambda: "trainer-1" in names(cache, "pod"), "a change after several renewed watches")
        assert len(requests_of(kube, path, watch=False)) == 1
    finally:
        cache.stop()


def test_410_gone_makes_the_cache_relist(kube: KubeStandIn, cache: WatchCache) -> None:
    informer = cache.informer("pod", "ml")
    assert informer is not None
    kube.compact()  # the open watch falls behind: an ERROR event with a 410 Status
    eventually(lambda: informer.relists == 2, "a relist after 410")
    kube.add(pod("trainer-1", labels={"app": "trainer"}))
    eventually(lambda: "trainer-1" in names(cache, "pod"), "watching again after the relist")


def test_failing_watches_back_off_and_a_resume_that_is_too_old_relists_what_changed_meanwhile(
        kube: KubeStandIn, cache: WatchCache) -> None:
    informer = cache.informer("pod", "ml")
    assert informer is not None
    path = "/api/v1/namespaces/ml/pods"
    kube.set_faults([Fault(path=path + "$", status=500)])
    kube.end_watches()
    eventually(lambda: sum(r.status == 500 for r in kube.requests if r.path == path) >= 2, "failed watch calls")
    assert informer.last_error.startswith("WatchFailed: watch: 500")
    assert names(cache, "pod") == ["trainer-0", "web-0"]  # the last good state still answers
    kube.delete("v1", "Pod", "ml", "trainer-0")  # missed: no watch is open
    kube.compact()
    kube.set_faults([])
    eventually(lambda: informer.relists == 2 and names(cache, "pod") == ["web-0"], "a relist that drops trainer-0")
    failed = [r.status for r in kube.requests if r.path == path]
    assert failed.count(500) >= 2 and failed[-1] == 200


def test_cached_calls_answer_like_the_api_and_fall_back_to_it(kube: KubeStandIn, cache: WatchCache) -> None:
    api = kube.api_client()
    calls = CachedCalls(api, 5.0, cache)
    before = len(kube.requests)
    listed = calls.get_list(calls.core.list_namespaced_pod, "ml", label_selector="app in (trainer)")
    assert not isinstance(listed, Failure)
    assert [p["metadata"]["name"] for p in listed["items"]] == ["trainer-0"]
    got = calls.get(calls.core.read_namespaced_pod, "web-0", "ml")
    assert not isinstance(got, Failure) and (got["kind"], got["apiVersion"]) == ("Pod", "v1")
    missing = calls.get(calls.core.read_namespaced_pod, "nope", "ml")
    cold = calls.get(calls.core.read_namespaced_pod, "nope", "shop")  # a namespace not cached: the API answers
    assert isinstance(missing, Failure) and isinstance(cold, Failure)
    assert missing.reason == '404 Not Found: pods "nope" not found' == cold.reason
    events = calls.get_list(calls.core.list_namespaced_event, "ml",
                            field_selector="involvedObject.kind=Pod,involvedObject.name=trainer-0")
    assert not isinstance(events, Failure) and [e["reason"] for e in events["items"]] == ["BackOff"]
    asked = [r.path for r in kube.requests[before:] if r.query.get("watch") != "true"]  # the cache's own watches
    assert asked == ["/api/v1/namespaces/shop/pods/nope"]
    assert calls.age() is not None and calls.age() < DEADLINE


# ---- a triage from the cache is the triage a cold run gives ------------------------------------------------


def comparable(report: Report) -> dict[str, Any]:
    """The report without what differs by design: capture times, and the cache's own field."""
    doc = report.model_dump(mode="json", exclude={"cache"})
    for artifact in doc["artifacts"]:
        artifact.pop("captured_at")
    return doc


CACHE_ASKS = re.compile(r"^/api/v1/namespaces/[^/]+/pods/[^/]+/log$|^/api/v1/nodes/[^/]+/proxy/|^/apis/(?!apps/|batch/"
                        r"|networking\.k8s\.io/|autoscaling/)")


@pytest.mark.parametrize(("fixture", "target", "logs"), [
    ("shop", Target(service="checkout", namespace="shop"),
     {("shop", CRASH_POD, "app:previous"): "panic: open /etc/checkout/config.yaml: no such file or directory\n"}),
    ("distributed", Target(service="job/llama-ft", namespace="ml-dist"),
     {("ml-dist", "llama-ft-master-0", "pytorch"): NCCL_MASTER}),
    ("gpu", Target(service="trainer", namespace="ml"), {}),
    ("shop", Target(node="node-b"), {}),
])
def test_a_triage_from_the_warm_cache_gives_the_cold_report(fixture: str, target: Target,
                                                            logs: dict[tuple[str, str, str], str]) -> None:
    with KubeStandIn(load(fixture), now=NOW, pod_logs=logs,
                     node_logs={("node-b", "kubelet"): KUBELET_NODE_B}) as kube:
        api = kube.api_client()
        cold = run_triage(target, timedelta(hours=1), LiveAccess(kube=api), now=NOW)
        cache = WatchCache(api).start()
        try:
            assert cache.wait_synced(DEADLINE)
            before = len(kube.requests)
            warm = run_triage(target, timedelta(hours=1), LiveAccess(kube=api, cache=cache), now=NOW)
            asked = [r.path for r in kube.requests[before:] if r.query.get("watch") != "true"]
        finally:
            cache.stop()
    assert cold.report.findings, "the fixture must give findings for the comparison to mean something"
    assert comparable(warm.report) == comparable(cold.report)
    assert cold.report.cache is None
    assert warm.report.cache is not None and 0 <= warm.report.cache.age_seconds < DEADLINE
    assert warm.report.cache.namespaces == []  # cluster-wide
    # Only what the cache cannot hold went to the API: logs, the node log API, custom resources.
    assert all(CACHE_ASKS.match(path) for path in asked), asked
