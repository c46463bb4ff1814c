"""Pod table: past restarts of pods that all run ready now are told apart from a container still restarting."""

from __future__ import annotations

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import pod_table


def _facts(text: str) -> dict[str, object]:
    result = pod_table.parse(Artifact(id="a", kind=ArtifactKind.POD_TABLE, content=text))
    return {f.name: f.value for f in result.facts}


def test_restarted_pods_that_all_run_ready_now_are_settled() -> None:
    # elastisys/compliantkubernetes-apps#300 (https://github.com/elastisys/compliantkubernetes-apps/issues/300)
    text = ("$ kubectl get pod -n fluentd \n"
            "NAME            READY   STATUS    RESTARTS   AGE\n"
            "fluentd-0       1/1     Running   0          4h17m\n"
            "fluentd-cpm87   1/1     Running   27         4h6m\n"
            "fluentd-ggnvh   1/1     Running   28         4h6m\n"
            "fluentd-r87kk   1/1     Running   25         4h6m\n")
    got = _facts(text)
    assert got["container.restart_count"] == 28
    assert got["pods.all_ready"] is True


def test_a_recent_restart_or_an_unready_pod_is_not_settled() -> None:
    # Rule tests (rows rendered as kubectl 1.22+ prints them): a restart seconds ago, or 0/1 ready, still loops.
    recent = ("NAME    READY   STATUS    RESTARTS      AGE\n"
              "web-1   1/1     Running   5 (40s ago)   10m\n")
    unready = ("NAME    READY   STATUS    RESTARTS   AGE\n"
               "web-1   0/1     Running   5          10m\n"
               "web-2   1/1     Running   0          10m\n")
    old = ("NAME    READY   STATUS    RESTARTS     AGE\n"
           "web-1   1/1     Running   5 (3h ago)   2d\n")
    assert "pods.all_ready" not in _facts(recent)
    assert "pods.all_ready" not in _facts(unready)
    assert _facts(old)["pods.all_ready"] is True
