"""The rank table and the wave front of a hung collective, read from multi-rank logs (tests/unit/parsers/rank_logs.py
composes them from real line formats, each cited there)."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nccl, nccl_ranks
from collectors.parsers.logs import container_log
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from tests.unit.parsers.rank_logs import Job, all_waiting, mid_run_straggler

WAVE = ("nccl.wait_seq", "nccl.waiting_ranks", "nccl.suspect_ranks", "nccl.suspect_hosts", "nccl.silent_ranks",
        "nccl.last_completed_seq")


def facts(text: str, kind: ArtifactKind = ArtifactKind.NCCL_LOG, subject: str = "") -> dict[str, Any]:
    """The wave-front facts, list facts merged in order of their lines."""
    parser = nccl if kind == ArtifactKind.NCCL_LOG else container_log
    result = parser.parse(Artifact(id="a", kind=kind, content=text, subject=subject))
    assert result.problems == []
    out: dict[str, Any] = {}
    for fact in result.facts:
        if fact.name not in WAVE:
            continue
        if isinstance(fact.value, list):
            out.setdefault(fact.name, [])
            out[fact.name] += [v for v in fact.value if v not in out[fact.name]]
        else:
            out[fact.name] = fact.value
    return {name: sorted(value) if isinstance(value, list) else value for name, value in out.items()}


def _behind(ranks: int, laggard: int) -> Job:
    """The laggard enqueued the collective but is still stuck on the one before (its GPU stopped)."""
    job = Job(ranks).init()
    for r in range(ranks):
        if r == laggard:
            job.dumped(r, 0, enqueued=501, completed=499)
        else:
            job.timed_out(r, 501, completed=500)
    return job


def _init_hang(ranks: int, missing: int) -> Job:
    """The first collective (lazy NCCL init) hangs: one rank never started, so it printed nothing."""
    job = Job(ranks).init([r for r in range(ranks) if r != missing], complete=False)
    for r in range(ranks):
        if r != missing:
            job.timed_out(r, 1, completed=0, op="BROADCAST")
    return job


def _subgroup(ranks: int) -> Job:
    """A tensor-parallel subgroup (PG 1) hangs while the default group is idle; only PG 1 is compared."""
    job = Job(ranks).init()
    for r in range(ranks):
        job.dumped(r, 1, enqueued=900, completed=900)  # default group: all idle, nothing pending
        if r == 2:
            job.dumped(r, 1, enqueued=7752, completed=7752, group="PG 1")
        else:
            job.lines.append(f"[rank{r}]:[E1206 18:44:16.9949 ProcessGroupNCCL.cpp:1709] [PG 1 Rank {r}] Timeout at "
                             f"NCCL work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752.")
    return job


# (case, log, expected wave-front facts). A fact the case does not list must be absent.
CASES: list[tuple[str, str, dict[str, Any]]] = [
    ("2-ranks-straggler", mid_run_straggler(2, 1).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": [0], "nccl.suspect_ranks": [1],
      "nccl.suspect_hosts": ["gpu-node-0"], "nccl.last_completed_seq": 20417}),
    ("8-ranks-straggler-rank-0", mid_run_straggler(8, 0).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": [1, 2, 3, 4, 5, 6, 7], "nccl.suspect_ranks": [0],
      "nccl.suspect_hosts": ["gpu-node-0"], "nccl.last_completed_seq": 20417}),
    ("64-ranks-straggler-on-node-5", mid_run_straggler(64, 43).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": [r for r in range(64) if r != 43], "nccl.suspect_ranks": [43],
      "nccl.suspect_hosts": ["gpu-node-5"], "nccl.last_completed_seq": 20417}),
    ("2-ranks-all-waiting", all_waiting(2).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": [0, 1], "nccl.suspect_ranks": [],
      "nccl.last_completed_seq": 20417}),
    ("8-ranks-all-waiting", all_waiting(8).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": list(range(8)), "nccl.suspect_ranks": [],
      "nccl.last_completed_seq": 20417}),
    ("64-ranks-all-waiting", all_waiting(64).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": list(range(64)), "nccl.suspect_ranks": [],
      "nccl.last_completed_seq": 20417}),
    # Without NCCL's comm lines the job's size is unknown: all shown ranks wait, but an unshown one may lag.
    ("8-ranks-all-waiting-size-unknown", all_waiting(8, init=False).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": list(range(8)), "nccl.last_completed_seq": 20417}),
    # Without comm lines the suspect is still named, but not its host.
    ("8-ranks-straggler-no-hosts", mid_run_straggler(8, 6, init=False).text(),
     {"nccl.wait_seq": 20418, "nccl.waiting_ranks": [0, 1, 2, 3, 4, 5, 7], "nccl.suspect_ranks": [6],
      "nccl.last_completed_seq": 20417}),
    ("16-ranks-one-behind", _behind(16, 9).text(),
     {"nccl.wait_seq": 501, "nccl.waiting_ranks": [r for r in range(16) if r != 9], "nccl.suspect_ranks": [9],
      "nccl.suspect_hosts": ["gpu-node-1"], "nccl.last_completed_seq": 500}),
    # Init hang: nothing ever completed; every rank that printed waits on the first collective, so the one rank
    # of the job that never started (and printed nothing) is the suspect.
    ("8-ranks-init-hang", _init_hang(8, 5).text(),
     {"nccl.wait_seq": 1, "nccl.waiting_ranks": [0, 1, 2, 3, 4, 6, 7], "nccl.silent_ranks": [5],
      "nccl.suspect_ranks": [5],
      "nccl.last_completed_seq": 0}),
    # The `[rank2]:` prefix gives the subgroup rank's global rank, so its host is known.
    ("subgroup-pg-1", _subgroup(8).text(),
     {"nccl.wait_seq": 7753, "nccl.waiting_ranks": [0, 1, 3, 4, 5, 6, 7], "nccl.suspect_ranks": [2],
      "nccl.suspect_hosts": ["gpu-node-0"], "nccl.last_completed_seq": 7752}),
    # Real lines (https://github.com/pytorch/pytorch/issues/118369): rank 0 timed out at two numbers with no
    # group named, so the groups cannot be told apart and no wave front is drawn.
    ("unnamed-groups-conflict",
     "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96117, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625613 milliseconds before timing out.\n"
     "[E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96125, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625593 milliseconds before timing out.\n"
     "[E ProcessGroupNCCL.cpp:458] [Rank 7] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=64088, "
     "OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 25625251 milliseconds before timing out.\n", {}),
    # Real lines (https://github.com/huggingface/accelerate/issues/3861): both ranks wait on 22, size unknown.
    ("real-two-ranks-dump",
     "[rank1]:[E1128 21:11:49.041194513 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 1] Received a "
     "dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. "
     "Last enqueued NCCL work: 22, last completed NCCL work: 21.\n"
     "[rank2]:[E1128 21:11:49.041253142 ProcessGroupNCCL.cpp:1870] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received a "
     "dump signal due to a collective timeout from this local rank and we will try our best to dump the debug info. "
     "Last enqueued NCCL work: 22, last completed NCCL work: 21.\n",
     {"nccl.wait_seq": 22, "nccl.waiting_ranks": [1, 2], "nccl.last_completed_seq": 21}),
    ("no-timeout-at-all", Job(8).init().chatter(5).text(), {}),
]


@pytest.mark.parametrize(("text", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_wave_front(text: str, expected: dict[str, Any]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize("kind", [ArtifactKind.NCCL_LOG, ArtifactKind.CONTAINER_LOG])
def test_both_training_log_readers_draw_it(kind: ArtifactKind) -> None:
    assert facts(mid_run_straggler(8, 3).text(), kind)["nccl.suspect_ranks"] == [3]


def test_a_pasted_log_loses_its_rank_prefixes_and_keeps_its_wave_front() -> None:
    """`[rankN]:` prefixes come off when pasted; the `[PG ... Rank N]` label inside each line still names the rank."""
    text = "```\n$ kubectl logs job/train --all-pods --prefix\n" + mid_run_straggler(16, 12).text() + "```\n"
    found: dict[str, Any] = {}
    for artifact in artifacts_from_text(text, "paste"):
        for fact in parse_artifact(artifact).facts:
            if fact.name in ("nccl.suspect_ranks", "nccl.suspect_hosts", "nccl.wait_seq"):
                found[fact.name] = fact.value
    assert found == {"nccl.suspect_ranks": [12], "nccl.suspect_hosts": ["gpu-node-1"], "nccl.wait_seq": 20418}


def test_rank_table_rows_say_host_pod_group_progress_and_state() -> None:
    job = mid_run_straggler(4, 2)
    table = nccl_ranks.read_table(job.text().split("\n"), pod="train-worker-0")
    front = nccl_ranks.wavefront(table)
    assert front is not None and front.op == "ALLREDUCE" and front.group == "0"
    rows = {row.rank: row for row in front.rows}
    straggler = rows[2]
    assert (straggler.enqueued, straggler.completed, straggler.state) == (20417, 20417, "never-enqueued")
    assert (rows[0].enqueued, rows[0].completed, rows[0].state) == (20418, 20417, "waiting")
    assert straggler.pod == "train-worker-0"
    place = nccl_ranks.host_of(table, straggler)
    assert place is not None and (place.host, place.pid, place.device) == ("gpu-node-0", 40102, 2)


def test_torchrun_summary_names_the_host_when_nccl_did_not() -> None:
    job = mid_run_straggler(16, 13, init=False).summary([0, 13])
    assert facts(job.text())["nccl.suspect_hosts"] == ["gpu-node-1"]


def test_two_hosts_claiming_one_rank_name_no_host() -> None:
    job = mid_run_straggler(4, 1)
    job.lines.insert(0, "other-host:7:7 [1] NCCL INFO comm 0x5 rank 1 nRanks 4 nNodes 1 localRanks 4 localRank 1 "
                        "MNNVL 0")
    assert "nccl.suspect_hosts" not in facts(job.text())


def test_a_subgroup_communicator_does_not_rename_the_hosts_of_global_ranks() -> None:
    job = mid_run_straggler(8, 5)
    # A 2-rank subgroup communicator on another host numbers its ranks 0 and 1: not global ranks.
    job.lines.insert(0, "elsewhere:9:9 [1] NCCL INFO comm 0x9 rank 1 nRanks 2 nNodes 1 localRanks 2 localRank 1 "
                        "MNNVL 0")
    job.lines.append("elsewhere:9:9 [5] NCCL INFO comm 0x9 rank 5 nRanks 6 nNodes 1 localRanks 6 localRank 5 MNNVL 0")
    assert facts(job.text())["nccl.suspect_hosts"] == ["gpu-node-0"]


def test_the_pod_a_log_came_from_is_each_of_its_ranks_pod() -> None:
    table = nccl_ranks.read_table(mid_run_straggler(2, 1).text().split("\n"), pod="w-1")
    assert {row.pod for row in table.rows.values()} == {"w-1"}
    prefixed = "[pod/w-3/trainer] [rank3]:[E1 ProcessGroupNCCL.cpp:1] [PG ID 0 PG GUID 0(default_pg) Rank 3] " \
               "Timeout at NCCL work: 8, last enqueued NCCL work: 8, last completed NCCL work: 7."
    table = nccl_ranks.read_table([prefixed], pod="")
    assert [(row.pod, row.global_rank) for row in table.rows.values()] == [("w-3", 3)]


def test_garbage_never_raises_and_reads_nothing() -> None:
    junk = "\n".join(["[PG ID x Rank ]", "last enqueued NCCL work: , last completed", "WorkNCCL(SeqNum=",
                      "a:b:c [x] NCCL INFO comm 0xzz rank nRanks", "  rank      : 3 (local_rank: 1)", "x" * 100_000])
    assert facts(junk) == {}


def test_a_world_size_from_a_barrier_message_stands_in_for_nccls_size() -> None:
    """No NCCL comm lines, but the store barrier says world_size=4: all four ranks waiting blames none."""
    barrier = ("torch.distributed.DistStoreError: Timed out initializing process group in store based barrier on "
               "rank 0, for key: store_based_barrier_key:1 (world_size=4, num_workers_joined=4, timeout=0:30:00)")
    text = barrier + "\n" + all_waiting(4, init=False).text()
    assert facts(text)["nccl.suspect_ranks"] == []
    assert "nccl.suspect_ranks" not in facts(all_waiting(4, init=False).text())


# https://github.com/mila-iqia/milabench/pull/269: a runner prefixes every line it relays, and the terminal cut the
# watchdog's timeout line inside its progress half, at a space the line then lost.
MILABENCH_269 = "\n".join([
    "dinov2-giant-nodes.cn-d003.nolog [stderr] [rank3]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] "
    "[PG 0 (default_pg) Rank 3] Timeout at NCCL work: 2070, last enqueued ",
    "NCCL work: 2082, last completed NCCL work: 2069.",
])


def test_a_timeout_line_wrapped_inside_its_progress_half_keeps_the_last_completed_work() -> None:
    table = nccl_ranks.read_table(MILABENCH_269.split("\n"))
    row = table.rows[("0", 3)]
    assert (row.timeout_seq, row.enqueued, row.completed, row.global_rank) == (2070, 2082, 2069, 3)
    assert table.last_completed == (2069, 2)  # cited on the line that holds it
