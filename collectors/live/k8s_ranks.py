"""Every rank's log tail of a distributed job, read concurrently and within a byte budget, as one artifact.

The rank that hangs a collective is rarely the one that reports it (docs/nccl.md), so a training job's triage
reads all its ranks, not the ten most troubled pods. The calls run on the collection's bounded pool (its
worker count is the concurrency limit, and the client's connection pool is sized for it), each call is cut at
its byte limit, and the per-rank limit shrinks as ranks grow so the whole read stays under one budget.

The answers are joined into the text `kubectl logs -l <selector> --prefix` prints: every line behind
`[pod/<pod>/<container>] `, ranks in launcher-then-index order. The NCCL parser reads that prefix, so each row
of the rank table names its pod, and the pods' own objects name their nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

from collectors.detect import detect_kind
from collectors.live.base import PodRef
from collectors.live.k8s_calls import Failure, KubeCalls
from collectors.live.k8s_logs import Out
from collectors.live.k8s_util import kubectl
from collectors.models import ArtifactKind

RANK_CAP = 1024  # ranks whose logs are read; a larger job gets a `missing` entry naming how many were left out
RANK_TAIL_LINES = 300  # the dump-signal and watchdog lines sit at the end of each rank's log
RANK_LIMIT_BYTES = 64 * 1024
RANKS_TOTAL_BYTES = 16 * 2**20  # 512 ranks get 32 KiB each
_MIN_RANK_BYTES = 4096
_SHOWN_FAILURES = 3


@dataclass(frozen=True)
class RankLimits:
    cap: int = RANK_CAP
    tail_lines: int = RANK_TAIL_LINES
    limit_bytes: int = RANK_LIMIT_BYTES
    total_bytes: int = RANKS_TOTAL_BYTES

    def per_rank_bytes(self, ranks: int) -> int:
        """Each rank's share of the budget, never above the per-rank limit nor below a useful tail."""
        return max(_MIN_RANK_BYTES, min(self.limit_bytes, self.total_bytes // max(ranks, 1)))


def rank_pods(refs: list[PodRef]) -> list[PodRef]:
    """The pods that have run a container, in rank order; pending pods have no log to read."""
    return sorted((p for p in refs if p.node and p.log_container and p.phase != "Pending"), key=lambda p: p.order)


def read_rank_logs(out: Out, calls: KubeCalls, refs: list[PodRef], namespace: str, selector: str, subject: str,
                   limits: RankLimits) -> frozenset[tuple[str, str]]:
    """Queue one log call per rank; the joined artifact is written when the last answer arrives.

    Returns the (pod, container) pairs whose current log this covers, so the per-pod reader skips them.
    """
    ranked = rank_pods(refs)
    if not ranked or not selector:
        return frozenset()
    chosen = ranked[:limits.cap]
    per_rank = limits.per_rank_bytes(len(chosen))
    command = kubectl("logs", "-n", namespace, "-l", selector, "--prefix", f"--tail={limits.tail_lines}",
                      f"--limit-bytes={per_rank}", f"--max-log-requests={len(chosen)}")
    answers: dict[int, tuple[int, str | Failure]] = {}
    name = subject.split("/")[-1]

    def settle(index: int, slot: int, result: str | Failure) -> None:
        answers[index] = (slot, result)
        if len(answers) == len(chosen):
            _write(out, chosen, answers, namespace, name, subject, command, len(ranked))

    for index, pod in enumerate(chosen):
        def thunk(pod: PodRef = pod) -> str | Failure:
            return calls.pod_log(pod.name, namespace, pod.log_container, previous=False,
                                 tail_lines=limits.tail_lines, limit_bytes=per_rank)

        out.fetch(thunk, lambda slot, result, index=index: settle(index, slot, result))  # type: ignore[misc]
    return frozenset((p.name, p.log_container) for p in chosen)


def _write(out: Out, chosen: list[PodRef], answers: dict[int, tuple[int, str | Failure]], namespace: str,
           name: str, subject: str, command: str, ranks: int) -> None:
    slot = min(s for s, _ in answers.values())  # fixed when the calls were queued: the same order every run
    parts: list[str] = []
    failures: list[str] = []
    for index, pod in enumerate(chosen):
        result = answers[index][1]
        if isinstance(result, Failure):
            failures.append(f"{pod.name}: {result.reason}")
            continue
        prefix = f"[pod/{pod.name}/{pod.log_container}] "
        parts.extend(prefix + line for line in result.splitlines())
    text = "\n".join(parts) + ("\n" if parts else "")
    if text.strip():
        kind = ArtifactKind.NCCL_LOG if detect_kind(text) is ArtifactKind.NCCL_LOG else ArtifactKind.CONTAINER_LOG
        out.artifact(slot, kind, ("logs", namespace, name, "ranks"), ".log", subject, command, text)
    if failures:
        shown = "; ".join(failures[:_SHOWN_FAILURES])
        more = f"; +{len(failures) - _SHOWN_FAILURES} more" if len(failures) > _SHOWN_FAILURES else ""
        out.missing(slot, f"logs of {subject}", f"{len(failures)} of {len(chosen)} ranks' logs not read: {shown}{more}")
    if ranks > len(chosen):
        out.missing(slot, f"logs of {subject}", f"read the logs of {len(chosen)} of {ranks} ranks (the first by rank)")

