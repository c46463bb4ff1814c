"""Composed multi-rank training logs, built line by line from real formats.

No public thread holds a complete 64-rank log, so these logs are composed. Every line shape is copied from a
real log in a public thread (only numbers and names change):

- NCCL `comm ... rank R nRanks N nNodes K localRanks M localRank L MNNVL 0`:
  https://github.com/NVIDIA/nccl-tests/issues/213
- NCCL `ncclCommInitRank comm ... rank R nranks N cudaDev D nvmlDev D busId B commId C - Init START/COMPLETE`:
  https://github.com/NVIDIA/nccl/issues/1814 and https://github.com/NVIDIA/nccl/issues/1029
- PyTorch `[rankR]:[E...] [Rank R] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=S, OpType=...)`
  and `[PG ID 0 PG GUID 0(default_pg) Rank R]  failure detected by watchdog at work sequence id: S PG status:
  last enqueued work: E, last completed work: C`, and `Received a dump signal due to a collective timeout from
  rank X ... Last enqueued NCCL work: E, last completed NCCL work: C.`: https://github.com/OpenRLHF/OpenRLHF/issues/1126
- `[PG 1 Rank R] Timeout at NCCL work: S, last enqueued NCCL work: E, last completed NCCL work: C.`:
  https://github.com/hiyouga/LlamaFactory/issues/6269
- torchrun's failure summary (`host :`, `rank : R (local_rank: L)`, `exitcode : -6 (pid: P)`):
  https://github.com/huggingface/picotron_tutorial/issues/6
"""

from __future__ import annotations

from dataclasses import dataclass, field

_TAIL = ("This is most likely caused by incorrect usages of collectives, e.g., wrong sizes used across ranks, the "
         "order of collectives is not same for all ranks or the scheduled collective, for some reason, didn't run. "
         "Additionally, this can be caused by GIL deadlock or other reasons such as network errors or bugs in the "
         "communications library (e.g. NCCL), etc. ")


@dataclass
class Job:
    """A job of `ranks` ranks, `per_node` to a node named `node-<i>`, whose hosts run with hostNetwork."""

    ranks: int
    per_node: int = 8
    host_prefix: str = "gpu-node-"
    lines: list[str] = field(default_factory=list)

    def host(self, rank: int) -> str:
        return f"{self.host_prefix}{rank // self.per_node}"

    def pid(self, rank: int) -> int:
        return 40100 + rank

    def init(self, ranks: list[int] | None = None, complete: bool = True) -> Job:
        nodes = max(1, (self.ranks + self.per_node - 1) // self.per_node)
        for r in range(self.ranks) if ranks is None else ranks:
            local = r % self.per_node
            where = f"{self.host(r)}:{self.pid(r)}:{self.pid(r) + 900} [{local}]"
            self.lines.append(f"{where} NCCL INFO ncclCommInitRank comm 0x55d3a8c3{r:04x} rank {r} nranks "
                              f"{self.ranks} cudaDev {local} nvmlDev {local} busId {0x18000 + local * 0x10000:x} "
                              f"commId 0x9ad9b5e4ab2566da - Init START")
            self.lines.append(f"{where} NCCL INFO comm 0x55d3a8c3{r:04x} rank {r} nRanks {self.ranks} nNodes "
                              f"{nodes} localRanks {min(self.per_node, self.ranks)} localRank {local} MNNVL 0")
            if complete:
                self.lines.append(f"{where} NCCL INFO ncclCommInitRank comm 0x55d3a8c3{r:04x} rank {r} nranks "
                                  f"{self.ranks} cudaDev {local} nvmlDev {local} busId "
                                  f"{0x18000 + local * 0x10000:x} commId 0x9ad9b5e4ab2566da - Init COMPLETE")
        return self

    def chatter(self, step: int) -> Job:
        self.lines.append(f"[rank0]:2025-09-01 05:09:{step % 60:02d} INFO train.py:212 step {step} loss 2.31")
        return self

    def timed_out(self, rank: int, seq: int, completed: int, op: str = "ALLREDUCE", enqueued: int | None = None,
                  group: str = "PG ID 0 PG GUID 0(default_pg)") -> Job:
        """The rank's own watchdog fires on `seq` and it reports its progress."""
        enq = seq if enqueued is None else enqueued
        p = f"[rank{rank}]:[E901 05:20:03.1239{rank:05d} ProcessGroupNCCL.cpp:632]"
        self.lines.append(f"{p} [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, "
                          f"OpType={op}, NumelIn=1048576, NumelOut=1048576, Timeout(ms)=600000) ran for 600020 "
                          f"milliseconds before timing out.")
        self.lines.append(f"[rank{rank}]:[E901 05:20:03.1240{rank:05d} ProcessGroupNCCL.cpp:2271] [{group} Rank "
                          f"{rank}]  failure detected by watchdog at work sequence id: {seq} PG status: last "
                          f"enqueued work: {enq}, last completed work: {completed}")
        return self

    def dumped(self, rank: int, source: int, enqueued: int, completed: int,
               group: str = "PG ID 0 PG GUID 0(default_pg)") -> Job:
        """The rank got the dump signal from `source`'s timeout and prints where it is."""
        self.lines.append(f"[rank{rank}]:[E901 05:20:03.1188{rank:05d} ProcessGroupNCCL.cpp:1746] [{group} Rank "
                          f"{rank}] Received a dump signal due to a collective timeout from  rank {source} and we "
                          f"will try our best to dump the debug info. Last enqueued NCCL work: {enqueued}, last "
                          f"completed NCCL work: {completed}.{_TAIL}")
        return self

    def summary(self, ranks: list[int]) -> Job:
        """torchrun's failure summary, naming each failed rank's host."""
        self.lines.append("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")
        self.lines.append("=====================================================")
        self.lines.append("train.py FAILED")
        self.lines.append("-----------------------------------------------------")
        self.lines.append("Root Cause (first observed failure):")
        for r in ranks:
            self.lines += [f"[{r}]:", "  time      : 2025-09-01_05:20:05", f"  host      : {self.host(r)}",
                           f"  rank      : {r} (local_rank: {r % self.per_node})",
                           f"  exitcode  : -6 (pid: {self.pid(r)})", "  error_file: <N/A>",
                           f"  traceback : Signal 6 (SIGABRT) received by PID {self.pid(r)}"]
        return self

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def mid_run_straggler(ranks: int, straggler: int, seq: int = 20418, init: bool = True) -> Job:
    """Every rank but `straggler` enqueued collective `seq` and timed out on it; the straggler never enqueued it."""
    job = Job(ranks)
    if init:
        job.init()
    job.chatter(1).chatter(2)
    first = 0 if straggler != 0 else 1
    for r in range(ranks):
        if r == straggler:
            job.dumped(r, first, enqueued=seq - 1, completed=seq - 1)
        else:
            job.timed_out(r, seq, completed=seq - 1)
    return job


def all_waiting(ranks: int, seq: int = 20418, init: bool = True) -> Job:
    """Every rank enqueued collective `seq` and none completed it: no straggler."""
    job = Job(ranks)
    if init:
        job.init()
    for r in range(ranks):
        job.timed_out(r, seq, completed=seq - 1)
    return job
