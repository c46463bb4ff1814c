"""Flight Recorder dumps a training job's ranks wrote to their nodes, read through the kubelet's /var/log server.

The bot never execs into a pod. Where a job writes its dumps to a hostPath under the node's /var/log
(`TORCH_NCCL_DEBUG_INFO_TEMP_FILE=/var/log/<folder>/$(POD_NAMESPACE)_$(POD_NAME)_nccl_trace_rank_`, see
docs/nccl.md), the kubelet serves them read-only at /api/v1/nodes/<node>/proxy/logs/<folder>/ (RBAC: get on
nodes/proxy, the kubelet-logs component). Each rank's node folder is listed once, only the files named after
the job's own pods are read, each within a byte limit, and the dumps become one `flight-recorder` artifact.
"""

from __future__ import annotations

import html
import re
from collections import defaultdict
from dataclasses import dataclass, field

from collectors.flight_dumps import MAX_DUMP_BYTES, bundle, rank_of_name
from collectors.live.base import PodRef
from collectors.live.k8s_calls import Failure, KubeCalls
from collectors.live.k8s_logs import Out
from collectors.live.k8s_util import kubectl
from collectors.models import ArtifactKind

DUMP_LIMIT_BYTES = 16 * 2**20  # one rank's dump; 2,000 entries pickle to well under 1 MiB
DUMPS_TOTAL_BYTES = 128 * 2**20
SAFE_FOLDER = re.compile(r"[A-Za-z0-9._-]{1,100}(?:/[A-Za-z0-9._-]{1,100}){0,4}")
_HREF = re.compile(r'<a href="([^"/]{1,255})">')
_SHOWN = 3


@dataclass
class _Reads:
    """What the reads have found so far; the artifact is written when nothing is pending."""

    pending: int = 0
    files: dict[str, bytes] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    budget: int = DUMPS_TOTAL_BYTES
    slot: int | None = None


def read_rank_dumps(out: Out, calls: KubeCalls, refs: list[PodRef], namespace: str, subject: str,
                    folder: str) -> None:
    """Queue one listing per node of the job's pods, then one read per dump file named after those pods."""
    if not SAFE_FOLDER.fullmatch(folder) or ".." in folder.split("/"):
        out.missing(0, "flight-recorder", f"flight_recorder_dir {folder!r} is not a plain path under /var/log")
        return
    pods_on: dict[str, set[str]] = defaultdict(set)
    for pod in refs:
        if pod.node:
            pods_on[pod.node].add(pod.name)
    if not pods_on:
        return
    reads = _Reads()
    name = subject.split("/")[-1]

    def finish() -> None:
        if reads.pending or reads.slot is None:
            return
        text, refused = bundle(sorted(reads.files.items()))
        if text:
            listing = f"/api/v1/nodes/<node>/proxy/logs/{folder}/"
            out.artifact(reads.slot, ArtifactKind.FLIGHT_RECORDER, ("flight-recorder", namespace, name), ".json",
                         subject, kubectl("get", "--raw", listing + f"{namespace}_<pod>_nccl_trace_rank_<r>"), text)
        problems = reads.failures + refused
        if problems:
            more = f"; +{len(problems) - _SHOWN} more" if len(problems) > _SHOWN else ""
            out.missing(reads.slot, f"flight-recorder {subject}",
                        f"{len(problems)} dump(s) not read: {'; '.join(problems[:_SHOWN])}{more}")

    def read_file(node: str, file: str) -> None:
        reads.pending += 1
        limit = max(1, min(DUMP_LIMIT_BYTES, MAX_DUMP_BYTES, reads.budget))

        def then(slot: int, result: bytes | Failure) -> None:
            reads.pending -= 1
            if isinstance(result, Failure):
                reads.failures.append(f"{node}:{file}: {result.reason}")
            elif len(result) >= limit:
                reads.failures.append(f"{node}:{file}: larger than {limit} bytes")
            else:
                reads.budget -= len(result)
                reads.files[file] = result
            finish()

        out.fetch(lambda: calls.node_file(node, f"{folder}/{file}", limit), then)

    def listed(node: str, pods: set[str]) -> None:
        reads.pending += 1

        def then(slot: int, result: bytes | Failure) -> None:
            reads.pending -= 1
            reads.slot = slot if reads.slot is None else min(reads.slot, slot)
            if isinstance(result, Failure):
                if result.status != 404:  # no such folder on that node: nothing was written there
                    reads.failures.append(f"{node}: {result.reason}")
            else:
                for file in _files(result.decode("utf-8", "replace")):
                    if any(file.startswith(f"{namespace}_{pod}_") for pod in pods) and rank_of_name(file) is not None:
                        read_file(node, file)
            finish()

        out.fetch(lambda: calls.node_file(node, f"{folder}/", 1024 * 1024), then)

    for node, pods in sorted(pods_on.items()):
        listed(node, pods)


def _files(listing: str) -> list[str]:
    """File names in the kubelet's (Go http.FileServer) directory listing."""
    return [html.unescape(m) for m in _HREF.findall(listing)]
