"""A distributed training job as the Kubernetes API serves it: a PyTorchJob, its pods, nodes and rank logs.

Each pod runs one rank. The logs are composed from real line formats (tests/unit/parsers/rank_logs.py cites the
thread each comes from); the pods run without hostNetwork, so NCCL prints the pod's hostname and only the Pod
object names the node.
"""

from __future__ import annotations

from typing import Any

from tests.unit.parsers.rank_logs import _TAIL

NS = "ml"
PER_NODE = 8


def pod_name(job: str, rank: int) -> str:
    return f"{job}-master-0" if rank == 0 else f"{job}-worker-{rank - 1}"


def node_name(rank: int, per_node: int = PER_NODE) -> str:
    return f"gpu-node-{rank // per_node}"


def rank_log(pod: str, rank: int, ranks: int, straggler: int | None, seq: int = 20418) -> str:
    """One rank's log tail: NCCL init (the pod's hostname, no hostNetwork), a step line, then where it stopped."""
    local, pid = 0, 40100 + rank
    where = f"{pod}:{pid}:{pid + 900} [{local}]"
    nodes = max(1, ranks // PER_NODE)
    lines = [
        f"{where} NCCL INFO ncclCommInitRank comm 0x55d3a8c3{rank:04x} rank {rank} nranks {ranks} cudaDev 0 "
        f"nvmlDev 0 busId 18000 commId 0x9ad9b5e4ab2566da - Init START",
        f"{where} NCCL INFO comm 0x55d3a8c3{rank:04x} rank {rank} nRanks {ranks} nNodes {nodes} localRanks 1 "
        f"localRank 0 MNNVL 0",
        f"{where} NCCL INFO ncclCommInitRank comm 0x55d3a8c3{rank:04x} rank {rank} nranks {ranks} cudaDev 0 "
        f"nvmlDev 0 busId 18000 commId 0x9ad9b5e4ab2566da - Init COMPLETE",
        f"[rank{rank}]:2025-09-01 05:09:12 INFO train.py:212 step 20417 loss 2.31",
    ]
    group = "PG ID 0 PG GUID 0(default_pg)"
    if rank == straggler:
        source = 0 if straggler != 0 else 1
        lines.append(f"[rank{rank}]:[E901 05:20:03.1188{rank:05d} ProcessGroupNCCL.cpp:1746] [{group} Rank {rank}] "
                     f"Received a dump signal due to a collective timeout from  rank {source} and we will try our "
                     f"best to dump the debug info. Last enqueued NCCL work: {seq - 1}, last completed NCCL work: "
                     f"{seq - 1}.{_TAIL}")
    else:
        lines.append(f"[rank{rank}]:[E901 05:20:03.1239{rank:05d} ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog "
                     f"caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, "
                     f"NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600020 milliseconds before "
                     f"timing out.")
        lines.append(f"[rank{rank}]:[E901 05:20:03.1240{rank:05d} ProcessGroupNCCL.cpp:2271] [{group} Rank {rank}]  "
                     f"failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: "
                     f"{seq}, last completed work: {seq - 1}")
    return "\n".join(lines) + "\n"


def training_pod(job: str, rank: int, labels: dict[str, str], container: str = "pytorch", *, ns: str = NS,
                 per_node: int = PER_NODE) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": pod_name(job, rank), "namespace": ns, "labels": labels,
                     "uid": f"0c6a5f2e-7d4b-4e1a-9c3b-{rank:012d}"},
        "spec": {"nodeName": node_name(rank, per_node), "containers": [
            {"name": container, "image": "nvcr.io/nvidia/pytorch:24.08-py3",
             "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
        "status": {"phase": "Running", "containerStatuses": [
            {"name": container, "ready": True, "restartCount": 0,
             "state": {"running": {"startedAt": "2026-03-10T07:00:00Z"}}}]},
    }


def pytorchjob(name: str, ranks: int, *, ns: str = NS, per_node: int = PER_NODE) -> list[dict[str, Any]]:
    job = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {"name": name, "namespace": ns},
           "spec": {"pytorchReplicaSpecs": {"Master": {"replicas": 1}, "Worker": {"replicas": ranks - 1}}}}
    pods = []
    for rank in range(ranks):
        role, index = ("master", 0) if rank == 0 else ("worker", rank - 1)
        pods.append(training_pod(name, rank, {
            "training.kubeflow.org/job-name": name, "training.kubeflow.org/operator-name": "pytorchjob-controller",
            "training.kubeflow.org/replica-type": role, "training.kubeflow.org/replica-index": str(index)},
            ns=ns, per_node=per_node))
    return [job, *pods]


def nodes(ranks: int, *, per_node: int = PER_NODE, addresses: bool = False) -> list[dict[str, Any]]:
    """The job's nodes; with `addresses`, node i has InternalIP 127.0.0.<i+1> (where a test's node agent listens)."""
    out = []
    for index, first in enumerate(range(0, ranks, per_node)):
        name = node_name(first, per_node)
        status: dict[str, Any] = {"conditions": [{"type": "Ready", "status": "True"}]}
        if addresses:
            status["addresses"] = [{"type": "InternalIP", "address": f"127.0.0.{index + 1}"},
                                   {"type": "Hostname", "address": name}]
        out.append({"apiVersion": "v1", "kind": "Node",
                    "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}}, "status": status})
    return out


def logs_for(job: str, ranks: int, straggler: int | None, container: str = "pytorch", *,
             ns: str = NS) -> dict[tuple[str, str, str], str]:
    return {(ns, pod_name(job, r), container): rank_log(pod_name(job, r), r, ranks, straggler) for r in range(ranks)}
