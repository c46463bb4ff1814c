"""Watches on the Kubernetes stand-in, through the official client's `kubernetes.watch.Watch` and raw streams.

Each expectation is the real API server's: a chunked stream of one JSON event per line, the current objects first
when no resourceVersion is given, bookmarks only when asked for, an ERROR event with a 410 Status for a compacted
resourceVersion, and a clean end at timeoutSeconds.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import kubernetes
import pytest
from kubernetes.client import CoreV1Api

from tests.standins.kube_api import Fault, KubeStandIn
from tests.standins.test_kube_api import event, pod


@pytest.fixture
def kube() -> Iterator[KubeStandIn]:
    with KubeStandIn([pod("trainer-0", labels={"app": "trainer"}), pod("web-0", labels={"app": "web"}),
                      pod("api-0", ns="shop", labels={"app": "api"}), event("trainer-0.1", "trainer-0")],
                     bookmark_interval=0.2) as server:
        yield server


def raw_watch(kube: KubeStandIn, **params: Any) -> Any:
    """The undecoded response of a pod watch in namespace ml (the client's own transport)."""
    core = CoreV1Api(kube.api_client())
    return core.list_namespaced_pod("ml", watch=True, _preload_content=False, **params)


def lines_of(response: Any) -> list[dict[str, Any]]:
    out = []
    for chunk in response.stream(amt=None, decode_content=True):
        out += [json.loads(line) for line in chunk.splitlines() if line.strip()]
    return out


def test_a_watch_without_resource_version_starts_with_the_objects_as_added(kube: KubeStandIn) -> None:
    response = raw_watch(kube, timeout_seconds=1)
    assert response.status == 200
    assert response.headers.get("Transfer-Encoding") == "chunked"
    events = lines_of(response)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "trainer-0"), ("ADDED", "web-0")]
    assert events[0]["object"]["kind"] == "Pod" and events[0]["object"]["apiVersion"] == "v1"


def test_the_client_watch_sees_changes_after_a_list_and_a_selector_filters_them(kube: KubeStandIn) -> None:
    core = CoreV1Api(kube.api_client())
    listed = core.list_namespaced_pod("ml", label_selector="app=trainer")
    rv = listed.metadata.resource_version
    seen: list[tuple[str, str]] = []

    def writer() -> None:
        kube.add(pod("trainer-1", labels={"app": "trainer"}))
        kube.add(pod("web-1", labels={"app": "web"}))  # not selected: never seen
        kube.add(pod("trainer-1", labels={"app": "trainer"}, phase="Failed"))
        kube.add(pod("trainer-0", labels={"app": "moved"}))  # left the selection: DELETED for this watch
        kube.delete("v1", "Pod", "ml", "trainer-1")

    watch = kubernetes.watch.Watch()
    timer = threading.Timer(0.2, writer)
    timer.start()
    for item in watch.stream(core.list_namespaced_pod, "ml", label_selector="app=trainer", resource_version=rv,
                             timeout_seconds=30):
        seen.append((item["type"], item["object"].metadata.name))
        if len(seen) == 4:
            watch.stop()
    timer.join()
    assert seen == [("ADDED", "trainer-1"), ("MODIFIED", "trainer-1"), ("DELETED", "trainer-0"),
                    ("DELETED", "trainer-1")]


def test_resource_versions_of_events_increase_and_resume_replays_only_later_changes(kube: KubeStandIn) -> None:
    start = kube.resource_version
    kube.add(pod("web-1", labels={"app": "web"}))
    kube.add(pod("web-1", labels={"app": "web"}, phase="Failed"))
    events = lines_of(raw_watch(kube, resource_version=start, timeout_seconds=1))
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED"]
    assert versions == sorted(versions) and versions[0] > int(start)
    again = lines_of(raw_watch(kube, resource_version=str(versions[0]), timeout_seconds=1))
    assert [(e["type"], e["object"]["status"]["phase"]) for e in again] == [("MODIFIED", "Failed")]


def test_bookmarks_come_only_when_asked_and_carry_a_resource_version(kube: KubeStandIn) -> None:
    start = kube.resource_version
    kube.add(pod("api-1", ns="shop", labels={"app": "api"}))  # another namespace: moves the revision on
    with_bookmarks = lines_of(raw_watch(kube, resource_version=start, allow_watch_bookmarks=True,
                                        timeout_seconds=1))
    bookmarks = [e for e in with_bookmarks if e["type"] == "BOOKMARK"]
    assert bookmarks and all(e["type"] == "BOOKMARK" for e in with_bookmarks)
    assert bookmarks[0]["object"] == {"kind": "Pod", "apiVersion": "v1",
                                      "metadata": {"resourceVersion": kube.resource_version}}
    without = lines_of(raw_watch(kube, resource_version=start, timeout_seconds=1))
    assert without == []


def test_a_compacted_resource_version_is_an_error_event_with_a_410_status(kube: KubeStandIn) -> None:
    old = kube.resource_version
    kube.add(pod("web-1", labels={"app": "web"}))
    kube.compact()
    response = raw_watch(kube, resource_version=old, timeout_seconds=30)
    assert response.status == 200  # the error is in the stream, as from the real watch cache
    events = lines_of(response)
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
    assert status["message"].startswith(f"too old resource version: {old} (")
    # The client's Watch turns it into an ApiException with the 410, which is what informers relist on.
    core = CoreV1Api(kube.api_client())
    with pytest.raises(kubernetes.client.ApiException) as caught:
        for _ in kubernetes.watch.Watch().stream(core.list_namespaced_pod, "ml", resource_version=old,
                                                 timeout_seconds=30):
            pass
    assert caught.value.status == 410


def test_an_open_watch_that_falls_behind_a_compaction_gets_410(kube: KubeStandIn) -> None:
    response = raw_watch(kube, resource_version=kube.resource_version, timeout_seconds=30)
    threading.Timer(0.3, kube.compact).start()
    events = lines_of(response)
    assert [e["type"] for e in events] == ["ERROR"] and events[0]["object"]["code"] == 410


def test_a_watch_ends_at_its_timeout_and_when_the_server_ends_watches(kube: KubeStandIn) -> None:
    assert lines_of(raw_watch(kube, resource_version=kube.resource_version, timeout_seconds=1)) == []
    response = raw_watch(kube, resource_version=kube.resource_version, timeout_seconds=600)
    threading.Timer(0.3, kube.end_watches).start()
    assert lines_of(response) == []  # ended cleanly (the chunked body is terminated), long before 600 s


def test_watch_requests_are_logged_and_bad_parameters_are_400(kube: KubeStandIn) -> None:
    lines_of(raw_watch(kube, timeout_seconds=1))
    logged = [r for r in kube.requests if r.query.get("watch") == "true"]
    assert logged and logged[0].path == "/api/v1/namespaces/ml/pods" and logged[0].status == 200
    with pytest.raises(kubernetes.client.ApiException) as caught:
        raw_watch(kube, resource_version="abc")
    assert caught.value.status == 400
    with pytest.raises(kubernetes.client.ApiException) as caught:
        raw_watch(kube, label_selector="app in (")
    assert caught.value.status == 400


def test_a_fault_on_the_watch_path_answers_before_any_stream(kube: KubeStandIn) -> None:
    kube.set_faults([Fault(path=r"/api/v1/namespaces/ml/pods$", status=500, times=1)])
    with pytest.raises(kubernetes.client.ApiException) as caught:
        raw_watch(kube, timeout_seconds=1)
    assert caught.value.status == 500
    assert len(lines_of(raw_watch(kube, timeout_seconds=1))) == 2


def test_events_and_nodes_are_watched_too(kube: KubeStandIn) -> None:
    core = CoreV1Api(kube.api_client())
    response = core.list_namespaced_event("ml", watch=True, _preload_content=False, timeout_seconds=1,
                                          field_selector="involvedObject.name=trainer-0")
    events = lines_of(response)
    assert [(e["type"], e["object"]["reason"]) for e in events] == [("ADDED", "BackOff")]
