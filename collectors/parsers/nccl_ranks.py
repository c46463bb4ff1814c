"""The per-rank table of a multi-rank training log, and the wavefront of the collective it hangs on.

Every rank of a hung job says where it is: PyTorch's ProcessGroupNCCL watchdog prints the sequence number it
timed out on (`WorkNCCL(SeqNum=S, OpType=...)`) and, since PyTorch 2.2, every live rank prints its process
group's `last enqueued NCCL work: E, last completed NCCL work: C` when a peer's timeout makes it dump. NCCL's
own `comm 0x... rank R nranks N` line ties a rank to a host, a pid and a device, and torchrun's failure summary
(`host : X` / `rank : R (local_rank: L)`) does the same. From those rows:

- a rank waits on C+1 when it enqueued work it has not completed (E > C), or on S when only the timeout shows;
- the collective most ranks wait on is the wave front (`nccl.wait_seq`);
- a rank that never enqueued it (E < wait_seq), or is stuck on an earlier one, is behind it: a suspect.

Sequence numbers count per process group, so rows are kept per group and only one group's rows are compared.
Nothing is inferred from a rank that printed nothing: it is listed as silent, never blamed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from collectors.parsers.needles import find_needles
from collectors.parsers.sink import FactSink

# `[PG ID 0 PG GUID 0(default_pg) Rank 3]` (2.4+), `[PG 1 Rank 0]`, `[PG 0 (default_pg) Rank 3]` (2.3),
# `[Rank 3]` (older, and the watchdog line itself, which never names its group).
_LABEL = re.compile(r"\[(?:PG (?:ID )?(?P<pg>\d{1,9})[^\]]{0,80}? )?Rank (?P<rank>\d{1,7})\]")
# The launcher's global-rank prefix, present in logs read from the cluster (a paste has it unwrapped away).
_GLOBAL = re.compile(r"\[rank(?P<rank>\d{1,7})\]:")  # used with .match at a position, so no ^
_POD_PREFIX = re.compile(r"^\[pod/(?P<pod>[\w.-]{1,253})/[\w.-]{1,253}\] ")
_PROGRESS = re.compile(r"last enqueued (?:NCCL )?work: (?P<enq>\d{1,12}), "
                       r"last completed (?:NCCL )?work: (?P<done>\d{1,12})", re.IGNORECASE)
_TIMEOUT_AT = re.compile(r"(?:Timeout at NCCL work|detected by watchdog at work(?: sequence id)?): (?P<seq>\d{1,12})")
_WORK = re.compile(r"WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?OpType=(?P<op>\w{1,40})")
# NCCL: `host:pid:tid [dev] NCCL INFO comm 0x... rank R nranks N cudaDev D ...` (Init START/COMPLETE lines) and,
# since 2.20, `... NCCL INFO comm 0x... rank R nRanks N nNodes K localRanks M localRank L MNNVL 0`.
_COMM = re.compile(r"(?P<host>[^\s:\]]{1,253}):(?P<pid>\d{1,10}):\d{1,10} \[(?P<dev>\d{1,4})\] NCCL INFO "
                   r"(?:\w{1,40} )?comm 0x[0-9a-fA-F]{1,16} rank (?P<rank>\d{1,7}) n[Rr]anks (?P<n>\d{1,7})\b")
_CUDA_DEV = re.compile(r"\bcudaDev (\d{1,4})\b")
# torchrun's failure summary: `host : node-3` then `rank : 11 (local_rank: 3)` then `exitcode : -6 (pid: 2911)`.
_SUMMARY_HOST = re.compile(r"^\s*host\s*:\s*(?P<host>[\w.-]{1,253})\s*$")
_SUMMARY_RANK = re.compile(r"^\s*rank\s*:\s*(?P<rank>\d{1,7}) \(local_rank: (?P<local>\d{1,4})\)")
_SUMMARY_PID = re.compile(r"\(pid: (?P<pid>\d{1,10})\)")

_NEEDLES = ("ast enqueued", "Timeout at NCCL work", "WorkNCCL(", " comm 0x", "(local_rank: ")

# A rank's state relative to the wave front, as the rank table prints it.
WAITING = "waiting"  # enqueued the collective, not completed
NEVER_ENQUEUED = "never-enqueued"  # its last enqueued work is older than the collective the others wait on
BEHIND = "behind"  # stuck on an earlier collective (completed fewer)
PAST = "past"  # already completed it
UNKNOWN = "unknown"  # no progress line
SUSPECT_STATES = (NEVER_ENQUEUED, BEHIND)


@dataclass
class Place:
    """Where a rank runs, and the line that says so."""

    host: str
    line: int
    pid: int | None = None
    device: int | None = None


@dataclass
class RankRow:
    """One rank of one process group, with the line each value was read from."""

    rank: int
    group: str  # process-group id as printed; "" when the lines name none (the default group, or unknown)
    global_rank: int | None = None
    pod: str = ""
    enqueued: int | None = None
    completed: int | None = None
    timeout_seq: int | None = None
    op: str = ""
    line: int = 0  # the latest progress or timeout line
    conflict: bool = False  # two different timeouts with no group named: the groups cannot be told apart
    state: str = UNKNOWN

    def pending(self) -> int | None:
        """The sequence number this rank waits on, when its lines show one."""
        if self.enqueued is not None and self.completed is not None:
            return self.completed + 1 if self.enqueued > self.completed else None
        return self.timeout_seq


@dataclass
class RankTable:
    rows: dict[tuple[str, int], RankRow] = field(default_factory=dict)
    places: dict[int, Place] = field(default_factory=dict)  # global rank -> where it runs
    clashes: set[int] = field(default_factory=set)  # ranks two places claim: their host is not known
    world: tuple[int, int] | None = None  # (ranks in the largest communicator, line)
    last_completed: tuple[int, int] | None = None  # (highest completed sequence number, line)


@dataclass
class Wavefront:
    group: str
    wait_seq: int
    wait_line: int
    op: str
    rows: list[RankRow]
    silent: list[int]  # ranks of the communicator with no progress line

    def ranks(self, *states: str) -> list[RankRow]:
        return [row for row in self.rows if row.state in states]


def read_table(lines: list[str], pod: str = "") -> RankTable:
    """The rank table of a log; `pod` is the pod the whole log came from, when known."""
    table = RankTable()
    found = find_needles(lines, _NEEDLES)
    for index in sorted(found):
        line, n = lines[index], index + 1
        needles = found[index]
        if " comm 0x" in needles:
            _comm(table, line, n)
        if "(local_rank: " in needles:
            _summary(table, lines, index)
        if any(needle in needles for needle in ("ast enqueued", "Timeout at NCCL work", "WorkNCCL(")):
            _progress(table, line, n, pod)
    return table


def _comm(table: RankTable, line: str, n: int) -> None:
    m = _COMM.search(line[:4096])
    if m is None:
        return
    size = int(m.group("n"))
    if table.world is None or size > table.world[0]:
        # A larger communicator than any before: the ranks read so far belonged to a subgroup.
        table.world, table.places, table.clashes = (size, n), {}, set()
    if size < table.world[0]:
        return  # a subgroup's communicator numbers its ranks its own way
    cuda = _CUDA_DEV.search(line)
    _place(table, int(m.group("rank")), Place(m.group("host"), n, int(m.group("pid")),
                                              int(cuda.group(1) if cuda else m.group("dev"))))


def _place(table: RankTable, rank: int, place: Place) -> None:
    known = table.places.get(rank)
    if known is not None and known.host != place.host:
        table.clashes.add(rank)  # two communicators of one size, or two jobs in one paste: do not pick one
    elif known is None:
        table.places[rank] = place


def _summary(table: RankTable, lines: list[str], index: int) -> None:
    rank = _SUMMARY_RANK.match(lines[index])
    if rank is None:
        return
    for back in (1, 2):  # the host line comes right before the rank line, after the time line
        host = _SUMMARY_HOST.match(lines[index - back]) if index >= back else None
        if host:
            nxt = lines[index + 1] if index + 1 < len(lines) else ""
            pid = _SUMMARY_PID.search(nxt)
            _place(table, int(rank.group("rank")), Place(host.group("host"), index + 1 - back,
                                                         int(pid.group("pid")) if pid else None,
                                                         int(rank.group("local"))))
            return


def _progress(table: RankTable, line: str, n: int, pod: str) -> None:
    text = line[:4096]
    label = _LABEL.search(text)
    if label is None:
        return
    group, rank = label.group("pg") or "", int(label.group("rank"))
    prefixed_pod = _POD_PREFIX.match(text)
    prefix = _GLOBAL.match(text, prefixed_pod.end() if prefixed_pod else 0)  # `[pod/p/c] [rank3]:` stacks two
    row = table.rows.setdefault((group, rank), RankRow(rank, group))
    row.global_rank = int(prefix.group("rank")) if prefix else row.global_rank
    row.pod = prefixed_pod.group("pod") if prefixed_pod else (row.pod or pod)
    if progress := _PROGRESS.search(text):
        row.enqueued, row.completed, row.line = int(progress.group("enq")), int(progress.group("done")), n
        if table.last_completed is None or row.completed > table.last_completed[0]:
            table.last_completed = (row.completed, n)
    timeout = _TIMEOUT_AT.search(text)
    work = _WORK.search(text)
    seq = int(timeout.group("seq")) if timeout else (int(work.group("seq")) if work and work.group("seq") else None)
    if work:
        row.op = row.op or work.group("op")
    if seq is not None:
        if row.timeout_seq is not None and row.timeout_seq != seq and not group:
            row.conflict = True
        row.timeout_seq = seq if row.timeout_seq is None else min(row.timeout_seq, seq)
        row.line = row.line or n


def _group_rank(rows: list[RankRow]) -> tuple[int, int, int]:
    waiting = sum(1 for row in rows if row.pending() is not None)
    labelled = 1 if rows[0].group else 0
    return labelled, len(rows), waiting


def wavefront(table: RankTable) -> Wavefront | None:
    """The collective most ranks wait on, and each rank's state against it; None when no rank waits."""
    groups: dict[str, list[RankRow]] = {}
    for row in table.rows.values():
        groups.setdefault(row.group, []).append(row)
    candidates = [rows for rows in groups.values() if any(row.pending() is not None for row in rows)]
    if not candidates:
        return None
    # The group with labelled lines and the most ranks; the default group ("0") wins a tie.
    rows = max(candidates, key=lambda rs: (*_group_rank(rs), rs[0].group == "0"))
    if any(row.conflict for row in rows):
        return None  # one rank timed out at two numbers in unnamed groups: no single wave front to read
    pending = Counter(seq for row in rows if (seq := row.pending()) is not None)
    # Most ranks wait there; on a tie the later collective, since ranks on the earlier one are behind it.
    wait_seq = max(pending, key=lambda seq: (pending[seq], seq))
    for row in rows:
        row.state = _state(row, wait_seq)
    rows.sort(key=lambda row: row.rank)
    waiting = [row for row in rows if row.state == WAITING]
    wait_line = next((row.line for row in waiting if str(wait_seq) in _digits(row)), waiting[0].line)
    # The watchdog line names the op but not the group, so its row may sit in the unnamed group.
    op = next((row.op for row in table.rows.values()
               if row.op and (row.timeout_seq == wait_seq or (row.timeout_seq is None and row.pending() == wait_seq))),
              "")
    return Wavefront(rows[0].group, wait_seq, wait_line, op, rows, _silent(table, rows))


def _digits(row: RankRow) -> set[str]:
    return {str(v) for v in (row.timeout_seq, row.enqueued) if v is not None}


def _state(row: RankRow, wait_seq: int) -> str:
    seq = row.pending()
    if row.enqueued is not None and row.enqueued < wait_seq:
        return NEVER_ENQUEUED
    if seq == wait_seq:
        return WAITING
    if row.completed is not None and row.completed >= wait_seq:
        return PAST
    if seq is not None:
        return BEHIND if seq < wait_seq else PAST
    return UNKNOWN


def _silent(table: RankTable, rows: list[RankRow]) -> list[int]:
    """Ranks of the whole job with no progress line; only for the default group, whose ranks are global."""
    if table.world is None or rows[0].group not in ("", "0"):
        return []
    seen = {row.rank for row in rows}
    if any(rank >= table.world[0] for rank in seen):
        return []  # the rows are not numbered like the communicator NCCL printed
    return [rank for rank in range(table.world[0]) if rank not in seen]


def host_of(table: RankTable, row: RankRow) -> Place | None:
    """Where a row's rank runs, when a line says so and no other line contradicts it."""
    if row.group not in ("", "0") and row.global_rank is None:
        return None  # a subgroup's rank number is not the global rank NCCL and torchrun print
    rank = row.rank if row.global_rank is None else row.global_rank
    return None if rank in table.clashes else table.places.get(rank)


def emit(sink: FactSink, table: RankTable, world: tuple[int, int] | None = None) -> None:
    """nccl.wait_seq, nccl.waiting_ranks, nccl.suspect_ranks, nccl.suspect_pods, nccl.suspect_hosts,
    nccl.silent_ranks and nccl.last_completed_seq, each cited to the line it was read from.

    `world` is the job's size and its line when the log states it otherwise (WORLD_SIZE, a barrier message)
    and NCCL printed no communicator.
    """
    if table.world is None and world is not None:
        table.world = world
    if table.last_completed is not None:
        sink.add("nccl.last_completed_seq", table.last_completed[0], table.last_completed[1])
    front = wavefront(table)
    if front is None:
        return
    sink.add("nccl.wait_seq", front.wait_seq, front.wait_line)
    for row in front.ranks(WAITING):
        sink.add("nccl.waiting_ranks", [row.rank], row.line)
    suspects = front.ranks(*SUSPECT_STATES)
    for row in suspects:
        sink.add("nccl.suspect_ranks", [row.rank], row.line)
        if row.pod:
            sink.add("nccl.suspect_pods", [row.pod], row.line)
        place = host_of(table, row)
        # Without hostNetwork the host NCCL prints is the pod's own hostname, not a node: the node then comes
        # from the pod's object (collectors/joins.py).
        if place is not None and place.host != row.pod:
            sink.add("nccl.suspect_hosts", [place.host], place.line)
    if front.silent and table.world is not None:
        sink.add("nccl.silent_ranks", front.silent, table.world[1])
    elif not suspects and table.world is not None and not front.ranks(UNKNOWN):
        # Every rank of the job is accounted for and none is behind: no rank to blame.
        sink.add("nccl.suspect_ranks", [], front.wait_line)
