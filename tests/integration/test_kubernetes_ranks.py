"""Every rank of a training job read live: 2, 64 and 512 ranks through the real `kubernetes` client against the
loopback API stand-in, which limits requests in flight like an API server (429 + Retry-After beyond it).

The job's pods and logs come from tests/harness/training_job.py (composed from real line formats).
"""

from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from collectors.live.base import Scope, SourceResult, Window
from collectors.live.k8s_ranks import RankLimits
from collectors.live.kubernetes import collect_kubernetes
from collectors.models import Artifact, ArtifactKind, Target
from collectors.parsers.registry import parse_artifact
from playbooks.pipeline import analyse
from tests.harness.training_job import NS, logs_for, node_name, nodes, pod_name, pytorchjob, rank_log, training_pod
from tests.standins.kube_api import Fault, KubeStandIn

NOW = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)
WINDOW = Window.last(timedelta(hours=1), NOW)
WORKERS = 8  # the collection's pool: the concurrency limit of every call, rank logs included
HANG_GUARD = 300.0  # seconds: only so a hang fails the test instead of the run; not a performance check


def collect(kube: KubeStandIn, target: Target, **kwargs: Any) -> tuple[Scope, SourceResult]:
    with ThreadPoolExecutor(max_workers=1) as guard:
        future = guard.submit(collect_kubernetes, kube.api_client(), target, WINDOW, max_workers=WORKERS,
                              call_timeout=30.0, **kwargs)
        return future.result(timeout=HANG_GUARD)


def ranks_artifact(result: SourceResult) -> Artifact:
    found = [a for a in result.artifacts if a.id.endswith("-ranks.log")]
    assert len(found) == 1, [a.id for a in result.artifacts]
    return found[0]


def log_requests(kube: KubeStandIn) -> list[Any]:
    return [r for r in kube.requests if r.path.endswith("/log")]


@pytest.mark.parametrize(("ranks", "straggler"), [(2, 1), (64, 21), (512, 300)])
def test_every_rank_is_read_and_the_straggler_is_named_with_its_pod_and_node(ranks: int, straggler: int) -> None:
    with KubeStandIn([*pytorchjob("train", ranks), *nodes(ranks)], pod_logs=logs_for("train", ranks, straggler),
                     now=NOW, max_inflight=WORKERS) as kube:
        scope, result = collect(kube, Target(service="job/train", namespace=NS))

    # Every rank's log was read once, bounded in lines and bytes, never more calls at once than the pool allows.
    requests = log_requests(kube)
    assert sorted(r.path.split("/")[-2] for r in requests) == sorted(pod_name("train", r) for r in range(ranks))
    per_rank = RankLimits().per_rank_bytes(ranks)
    assert per_rank == (32 * 1024 if ranks == 512 else 64 * 1024)
    assert {(r.query["tailLines"], r.query["limitBytes"]) for r in requests} == {("300", str(per_rank))}
    assert kube.peak_inflight <= WORKERS
    assert not any(r.status == 429 for r in kube.requests)
    assert all(r.method == "GET" for r in kube.requests)

    # One artifact holds them all, in the shape `kubectl logs -l ... --prefix` prints, ranks in order.
    art = ranks_artifact(result)
    assert art.subject == f"pytorchjob/{NS}/train"
    assert art.command.startswith(f"kubectl logs -n {NS} -l training.kubeflow.org/job-name=train --prefix")
    assert f"--max-log-requests={ranks}" in art.command
    prefixes = [line.split("] ", 1)[0] + "]" for line in art.content.splitlines()]
    assert list(dict.fromkeys(prefixes)) == [f"[pod/{pod_name('train', r)}/pytorch]" for r in range(ranks)]
    assert len(scope.pods) == ranks and not [m for m in result.missing if "logs" in m.source]

    # The rank table names the straggler, its pod and, through the pod's object, its node.
    report = analyse(result.artifacts)
    assert report.facts["nccl.suspect_ranks"] == [straggler]
    assert report.facts["nccl.suspect_pods"] == [pod_name("train", straggler)]
    assert report.facts["nccl.suspect_hosts"] == [node_name(straggler)]
    assert report.facts["nccl.wait_seq"] == 20418
    assert sorted(report.facts["nccl.waiting_ranks"]) == [r for r in range(ranks) if r != straggler]
    lead = report.findings[0]
    top = next(h for h in lead.hypotheses if h.status == "confirmed")
    assert (lead.playbook, top.id) == ("nccl-hang", "straggler-rank")
    assert pod_name("train", straggler) in top.claim and node_name(straggler) in top.claim


def test_every_rank_waiting_blames_no_rank() -> None:
    with KubeStandIn([*pytorchjob("train", 16), *nodes(16)], pod_logs=logs_for("train", 16, None), now=NOW) as kube:
        _, result = collect(kube, Target(service="job/train", namespace=NS))
    report = analyse(result.artifacts)
    assert report.facts["nccl.suspect_ranks"] == []
    assert "nccl.suspect_pods" not in report.facts and "nccl.suspect_hosts" not in report.facts


def test_a_rank_whose_log_fails_is_missing_and_the_others_are_still_read() -> None:
    objects = [*pytorchjob("train", 8), *nodes(8)]
    failing = Fault(path=f"/api/v1/namespaces/{NS}/pods/train-worker-3/log", status=500)
    with KubeStandIn(objects, pod_logs=logs_for("train", 8, 5), now=NOW, faults=[failing]) as kube:
        _, result = collect(kube, Target(service="job/train", namespace=NS))
    art = ranks_artifact(result)
    assert "[pod/train-worker-3/" not in art.content
    assert art.content.count("[pod/train-worker-4/pytorch]") == 5
    reasons = [m.reason for m in result.missing if m.source == f"kubernetes:logs of pytorchjob/{NS}/train"]
    assert len(reasons) == 1 and reasons[0].startswith("1 of 8 ranks' logs not read: train-worker-3: 500")
    # The rank that could not be read is silent, never blamed; the straggler still is.
    report = analyse(result.artifacts)
    assert report.facts["nccl.suspect_ranks"] == [5]
    assert report.facts["nccl.silent_ranks"] == [4]


def test_ranks_beyond_the_cap_are_named_as_missing() -> None:
    with KubeStandIn([*pytorchjob("train", 12), *nodes(12)], pod_logs=logs_for("train", 12, 2), now=NOW) as kube:
        _, result = collect(kube, Target(service="job/train", namespace=NS),
                            rank_limits=RankLimits(cap=4, total_bytes=64 * 1024))
    # The rank reader asked for 4 ranks at a quarter of the budget each; the per-pod reader (up to 10 pods, at its
    # own limits) still reads the current logs of pods the rank reader did not cover.
    by_rank_reader = [r for r in log_requests(kube) if r.query["tailLines"] == "300"]
    assert sorted(r.path.split("/")[-2] for r in by_rank_reader) == [pod_name("train", r) for r in range(4)]
    assert {r.query["limitBytes"] for r in by_rank_reader} == {str(16 * 1024)}
    assert not any(r.path.split("/")[-2] in {pod_name("train", n) for n in range(4)}
                   for r in log_requests(kube) if r.query["tailLines"] != "300")
    assert any(m.reason == "read the logs of 4 of 12 ranks (the first by rank)" for m in result.missing)


def test_leaderworkerset_ranks_by_worker_index() -> None:
    lws = {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet",
           "metadata": {"name": "serve", "namespace": NS}, "spec": {"replicas": 1, "leaderWorkerTemplate": {"size": 4}}}
    pods = []
    logs: dict[tuple[str, str, str], str] = {}
    for rank in (3, 1, 0, 2):  # listed out of order: the artifact still follows the worker index
        pod = training_pod("serve", rank, {"leaderworkerset.sigs.k8s.io/name": "serve",
                                           "leaderworkerset.sigs.k8s.io/group-index": "0",
                                           "leaderworkerset.sigs.k8s.io/worker-index": str(rank)}, "vllm")
        pod["metadata"]["name"] = f"serve-0-{rank}" if rank else "serve-0"
        pods.append(pod)
        logs[(NS, pod["metadata"]["name"], "vllm")] = rank_log(pod["metadata"]["name"], rank, 4, 2)
    with KubeStandIn([lws, *pods, *nodes(4)], pod_logs=logs, now=NOW) as kube:
        _, result = collect(kube, Target(service="lws/serve", namespace=NS))
    art = ranks_artifact(result)
    assert art.subject == f"lws/{NS}/serve"
    order = list(dict.fromkeys(line.split("] ", 1)[0] for line in art.content.splitlines()))
    assert order == ["[pod/serve-0/vllm", "[pod/serve-0-1/vllm", "[pod/serve-0-2/vllm", "[pod/serve-0-3/vllm"]
    assert analyse(result.artifacts).facts["nccl.suspect_pods"] == ["serve-0-2"]


def test_plain_pods_with_a_rank_label_are_read_as_ranks() -> None:
    pods = [training_pod("bench", r, {"app": "bench", "rank": str(r)}) for r in range(3)]
    with KubeStandIn([*pods, *nodes(3)], pod_logs=logs_for("bench", 3, 0), now=NOW) as kube:
        _, result = collect(kube, Target(service="bench", namespace=NS))
    art = ranks_artifact(result)
    assert art.command.startswith(f"kubectl logs -n {NS} -l app=bench --prefix")
    report = analyse(result.artifacts)
    assert report.facts["nccl.suspect_pods"] == ["bench-master-0"]
    assert report.facts["nccl.suspect_hosts"] == ["gpu-node-0"]


FLIGHT_RECORDER = Path(__file__).resolve().parents[1] / "fixtures" / "flight_recorder"


def test_flight_recorder_dumps_on_the_nodes_are_read_through_the_kubelet() -> None:
    """The ranks wrote `<ns>_<pod>_nccl_trace_rank_<r>` into a hostPath under /var/log/pytorch-fr; the kubelet
    serves that folder. The dumps are real (tests/fixtures/flight_recorder/straggler: rank 2 never enqueued #7)."""
    objects = [*pytorchjob("train", 4), *nodes(4, per_node=2)]
    for obj in objects:  # two ranks per node
        if obj["kind"] == "Pod":
            rank = 0 if obj["metadata"]["name"].endswith("master-0") else int(obj["metadata"]["name"][-1]) + 1
            obj["spec"]["nodeName"] = node_name(rank, 2)
    node_files: dict[tuple[str, str], str | bytes] = {}
    for rank in range(4):
        data = (FLIGHT_RECORDER / "straggler" / f"rank_{rank}.pkl").read_bytes()
        node_files[(node_name(rank, 2), f"pytorch-fr/{NS}_{pod_name('train', rank)}_nccl_trace_rank_{rank}")] = data
    # Another job's dump and a stray file in the same folder are not read.
    node_files[("gpu-node-0", f"pytorch-fr/{NS}_other-master-0_nccl_trace_rank_0")] = b"\x80\x04not read"
    node_files[("gpu-node-0", "pytorch-fr/README.txt")] = "notes\n"
    with KubeStandIn(objects, pod_logs=logs_for("train", 4, None), node_logs=node_files, now=NOW) as kube:
        _, result = collect(kube, Target(service="job/train", namespace=NS), flight_recorder_dir="pytorch-fr")
    reads = [r.path for r in kube.requests if "/proxy/logs/pytorch-fr/" in r.path]
    assert sorted(reads) == sorted(
        [f"/api/v1/nodes/gpu-node-{n}/proxy/logs/pytorch-fr/" for n in (0, 1)]
        + [f"/api/v1/nodes/{node_name(r, 2)}/proxy/logs/pytorch-fr/{NS}_{pod_name('train', r)}_nccl_trace_rank_{r}"
           for r in range(4)])
    dumps = [a for a in result.artifacts if a.kind == ArtifactKind.FLIGHT_RECORDER]
    assert len(dumps) == 1 and dumps[0].subject == f"pytorchjob/{NS}/train"
    assert not [m for m in result.missing if "flight-recorder" in m.source]
    facts = {f.name: f.value for f in parse_artifact(dumps[0]).facts}
    assert (facts["nccl.wait_seq"], facts["nccl.suspect_ranks"]) == (7, [2])


def test_a_dump_that_is_not_plain_data_is_missing_and_never_loaded() -> None:
    objects = [*pytorchjob("train", 2), *nodes(2)]
    node_files: dict[tuple[str, str], str | bytes] = {
        ("gpu-node-0", f"pytorch-fr/{NS}_train-master-0_nccl_trace_rank_0"):
            (FLIGHT_RECORDER / "straggler" / "rank_0.pkl").read_bytes(),
        ("gpu-node-0", f"pytorch-fr/{NS}_train-worker-0_nccl_trace_rank_1"): pickle.dumps(Path("/etc/passwd")),
    }
    with KubeStandIn(objects, pod_logs=logs_for("train", 2, None), node_logs=node_files, now=NOW) as kube:
        _, result = collect(kube, Target(service="job/train", namespace=NS), flight_recorder_dir="pytorch-fr")
    reasons = [m.reason for m in result.missing if m.source == f"kubernetes:flight-recorder pytorchjob/{NS}/train"]
    assert len(reasons) == 1 and "nccl_trace_rank_1: refused: the pickle names pathlib" in reasons[0]
    dumps = [a for a in result.artifacts if a.kind == ArtifactKind.FLIGHT_RECORDER]
    assert len(dumps) == 1 and '"ml_train-master-0_nccl_trace_rank_0"' in dumps[0].content


def test_a_jobset_child_job_is_widened_to_the_whole_jobset() -> None:
    """kube-state-metrics names a JobSet pod's child Job as its owner, so NCCLJobStalled names the child Job; the
    ranks are every pod of the JobSet, across its child Jobs."""
    jobset = {"apiVersion": "jobset.x-k8s.io/v1alpha2", "kind": "JobSet", "metadata": {"name": "pre", "namespace": NS},
              "spec": {"replicatedJobs": [{"name": "workers", "replicas": 2}]}}
    objects: list[dict[str, Any]] = [jobset]
    logs: dict[tuple[str, str, str], str] = {}
    for index in range(2):
        child = f"pre-workers-{index}"
        objects.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": child, "namespace": NS},
                        "spec": {"selector": {"matchLabels": {"batch.kubernetes.io/job-name": child}}}})
        for completion in range(2):
            rank = index * 2 + completion
            pod = training_pod("pre", rank, {"jobset.sigs.k8s.io/jobset-name": "pre",
                                             "jobset.sigs.k8s.io/job-index": str(index),
                                             "batch.kubernetes.io/job-name": child,
                                             "batch.kubernetes.io/job-completion-index": str(completion)})
            pod["metadata"]["name"] = f"{child}-{completion}"
            objects.append(pod)
            logs[(NS, pod["metadata"]["name"], "pytorch")] = rank_log(pod["metadata"]["name"], rank, 4, 3)
    with KubeStandIn([*objects, *nodes(4)], pod_logs=logs, now=NOW) as kube:
        scope, result = collect(kube, Target(service="job/pre-workers-0", namespace=NS))
    assert scope.workload == "jobset/pre"
    art = ranks_artifact(result)
    assert art.subject == f"jobset/{NS}/pre"
    order = list(dict.fromkeys(line.split("] ", 1)[0] for line in art.content.splitlines()))
    assert order == [f"[pod/pre-workers-{i}-{c}/pytorch" for i in range(2) for c in range(2)]
    assert analyse(result.artifacts).facts["nccl.suspect_pods"] == ["pre-workers-1-1"]
