"""One file per rank and one interleaved file give the same suspects; a silent rank, a launcher prefix, a terminal
wrap and the older watchdog-only lines all still name the straggler and lead with it (issue #24). The logs are
composed from real line shapes (tests/unit/parsers/rank_logs.py cites each)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind, Missing
from collectors.parsers.gpu import nccl_ranks
from playbooks.pipeline import analyse
from playbooks.report import Report
from tests.unit.parsers.rank_logs import Job, all_waiting, mid_run_straggler

WAVE = ("nccl.wait_seq", "nccl.waiting_ranks", "nccl.suspect_ranks", "nccl.suspect_hosts", "nccl.silent_ranks",
        "nccl.collectives_differ")


def _interleaved(text: str) -> Report:
    return analyse([Artifact(id="all", kind=ArtifactKind.CONTAINER_LOG, content=text)])


def _per_rank(job: Job, streamed: bool = False) -> Report:
    """Each rank's lines in its own file, as `kubectl logs` of each pod writes them; `streamed`: handed to analyse
    one at a time, as the CLI reads files, so only the logs the rank join needs are kept."""
    files: dict[int, list[str]] = {}
    for line in job.lines:
        rank = _rank_of(line, job)
        files.setdefault(rank, []).append(line)
    artifacts = (Artifact(id=f"rank-{r}.log", kind=ArtifactKind.CONTAINER_LOG, content="\n".join(lines) + "\n")
                 for r, lines in sorted(files.items()))
    return analyse(artifacts if streamed else list(artifacts))


def _rank_of(line: str, job: Job) -> int:
    if line.startswith("[rank"):
        return int(line[5:line.index("]")])
    for r in range(job.ranks):  # an NCCL init line: its pid names the rank
        if f":{job.pid(r)}:" in line:
            return r
    return 0


def _wave(report: Report) -> dict[str, Any]:
    return {name: report.facts[name] for name in WAVE if name in report.facts}


def _statuses(report: Report) -> dict[str, str]:
    finding = next(f for f in report.findings if f.playbook == "nccl-hang")
    return {h.id: h.status for h in finding.hypotheses}


def _leader(report: Report) -> str:
    finding = next(f for f in report.findings if f.playbook == "nccl-hang")
    return next(h.id for h in finding.hypotheses if h.status in ("confirmed", "likely"))


def _seven_wait_one_silent(init: bool) -> Job:
    """Seven ranks time out on one collective (watchdog line only, as before PyTorch 2.2); rank 5 prints nothing."""
    job = Job(8)
    if init:
        job.init()
    for r in range(8):
        if r != 5:
            job.lines.append(f"[rank{r}]:[E901 05:20:03.1239{r:05d} ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog "
                             f"caught collective operation timeout: WorkNCCL(SeqNum=460631, OpType=ALLREDUCE, "
                             f"NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600000 milliseconds before timing "
                             f"out.")
    return job


def _dump_straggler() -> Job:
    """Waiting ranks print only the watchdog line (no group named); rank 5 answers the dump signal one behind."""
    job = _seven_wait_one_silent(init=True)
    job.dumped(5, 0, enqueued=460630, completed=460630)
    return job


@pytest.mark.parametrize(("name", "job", "suspects", "hosts"), [
    ("mid-run-straggler", mid_run_straggler(8, 5), [5], ["gpu-node-0"]),
    ("dump-signal-straggler", _dump_straggler(), [5], ["gpu-node-0"]),
    ("silent-rank-with-size", _seven_wait_one_silent(init=True), [5], ["gpu-node-0"]),
])
def test_one_file_per_rank_names_the_same_suspects(name: str, job: Job, suspects: list[int],
                                                   hosts: list[str]) -> None:
    together, apart = _interleaved(job.text()), _per_rank(job)
    assert together.facts["nccl.suspect_ranks"] == suspects, name
    assert together.facts["nccl.suspect_hosts"] == hosts, name
    assert _wave(apart) == _wave(together), name
    assert _wave(_per_rank(job, streamed=True)) == _wave(together), name
    for report in (together, apart):
        assert _leader(report) == "straggler-rank", name
        assert _statuses(report)["collective-mismatch"] == "unknown", name


def test_every_rank_waiting_in_separate_files_blames_nobody() -> None:
    report = _per_rank(all_waiting(8))
    assert report.facts["nccl.suspect_ranks"] == []
    assert report.facts["nccl.collectives_differ"] is False
    assert _statuses(report)["collective-mismatch"] == "unknown"
    assert _leader(report) == "fabric-fault"


def test_the_silent_rank_is_named_in_the_claim() -> None:
    report = _interleaved(_seven_wait_one_silent(init=True).text())
    finding = next(f for f in report.findings if f.playbook == "nccl-hang")
    claim = next(h.claim for h in finding.hypotheses if h.id == "straggler-rank")
    assert claim.startswith("Rank 5 on gpu-node-0 never")
    assert "printed no progress line" in claim


def test_without_the_jobs_size_a_gap_in_the_ranks_is_the_silent_rank() -> None:
    report = _interleaved(_seven_wait_one_silent(init=False).text())
    assert report.facts["nccl.suspect_ranks"] == [5]
    assert report.facts["nccl.silent_ranks"] == [5]


@pytest.mark.parametrize("prefix", ["[1,{r}]<stderr>:", "{r}: ", "2024-05-01T10:00:00.123Z [rank{r}]:",
                                    "[{r}] [rank{r}]:", "(RayWorker pid=4{r}) [rank{r}]:", "node-1:{r}: "])
def test_launcher_prefixes_keep_the_straggler(prefix: str) -> None:
    job = mid_run_straggler(8, 3, init=False)
    lines = [prefix.format(r=_rank_of(line, job)) + line.split("]:", 1)[1] if line.startswith("[rank") else line
             for line in job.lines]
    report = _interleaved("\n".join(lines) + "\n")
    assert report.facts["nccl.suspect_ranks"] == [3]
    assert report.facts["nccl.wait_seq"] == 20418


@pytest.mark.parametrize("width", [80, 120, 137])
def test_lines_a_terminal_wrapped_keep_the_straggler(width: int) -> None:
    job = mid_run_straggler(8, 3, init=False)
    wrapped = [line[i:i + width] for line in job.lines for i in range(0, len(line), width)]
    report = _interleaved("\n".join(wrapped) + "\n")
    assert report.facts["nccl.suspect_ranks"] == [3]
    assert report.facts["nccl.wait_seq"] == 20418


def test_a_silent_rank_is_not_blamed_when_some_ranks_logs_were_not_read() -> None:
    text = _seven_wait_one_silent(init=True).text()
    report = analyse([Artifact(id="ranks", kind=ArtifactKind.CONTAINER_LOG, content=text)],
                     missing=[Missing(source="logs of job/train", reason="1 of 8 ranks' logs not read: w-5: 403")])
    assert report.facts["nccl.silent_ranks"] == [5]
    assert "nccl.suspect_ranks" not in report.facts and "nccl.suspect_hosts" not in report.facts
    assert _statuses(report)["straggler-rank"] == "unknown"


def test_a_finished_line_of_another_rank_is_not_taken_for_a_wrapped_head() -> None:
    lines = ["[rank2]:[E ProcessGroupNCCL.cpp:577] [Rank 2] Some NCCL operations have failed or timed out. Due to the "
             "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
             "WorkNCCL(SeqNum=5, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600020 ms"]
    assert nccl_ranks.read_table(lines).rows == {}


def test_a_file_holding_only_where_the_straggler_runs_still_names_its_host() -> None:
    # Found by the property below: rank 1's file holds nothing but its NCCL init lines (it never reached the
    # collective), and the other file holds every wait; the host comes from the first file.
    job = mid_run_straggler(3, 1, seq=2)
    own = [line for line in job.lines if "] NCCL INFO" in line and " rank 1 " in line]
    rest = [line for line in job.lines if line not in own]
    report = analyse([Artifact(id=f"f{i}", kind=ArtifactKind.CONTAINER_LOG, content="\n".join(b) + "\n")
                      for i, b in enumerate([rest, own])])
    assert report.facts["nccl.suspect_ranks"] == [1]
    assert report.facts["nccl.suspect_hosts"] == [job.host(1)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ranks=st.integers(min_value=3, max_value=12), data=st.data())
def test_any_split_of_the_logs_names_the_same_straggler(ranks: int, data: st.DataObject) -> None:
    straggler = data.draw(st.integers(min_value=0, max_value=ranks - 1))
    job = mid_run_straggler(ranks, straggler, seq=data.draw(st.integers(min_value=2, max_value=10**6)))
    # The lines dealt into 2-4 files in any order: one per rank, or several ranks to a file.
    files = data.draw(st.integers(min_value=2, max_value=4))
    buckets: list[list[str]] = [[] for _ in range(files)]
    for line in job.lines:
        buckets[data.draw(st.integers(min_value=0, max_value=files - 1))].append(line)
    report = analyse([Artifact(id=f"f{i}", kind=ArtifactKind.CONTAINER_LOG, content="\n".join(b) + "\n")
                      for i, b in enumerate(buckets)])
    assert report.facts["nccl.suspect_ranks"] == [straggler]
    assert report.facts["nccl.suspect_hosts"] == [job.host(straggler)]
