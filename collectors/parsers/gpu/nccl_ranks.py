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
A rank of the job that printed no progress line is silent. When every rank that did print waits on the same
collective and only a few are silent, the silent ones are the suspects: the ranks that reached the collective say
so, and a rank that did not is the one that never arrived (PyTorch before 2.2 prints nothing on the straggler).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from collectors.lazy_regex import LazyPattern
from collectors.parsers.sink import FactSink
from collectors.parsers.text.needles import find_needles

# `[PG ID 0 PG GUID 0(default_pg) Rank 3]` (2.4+), `[PG 1 Rank 0]`, `[PG 0 (default_pg) Rank 3]` (2.3),
# `[Rank 3]` (older, and the watchdog line itself, which never names its group).
_LABEL = LazyPattern(r"\[(?:PG (?:ID )?(?P<pg>\d{1,9})[^\]]{0,80}? )?Rank (?P<rank>\d{1,7})\]")
# The launcher's global-rank prefix, present in logs read from the cluster (a paste has it unwrapped away), often
# behind another prefix: a line number, a timestamp, Ray's `(Worker pid=…)`. mpirun's `[job,rank]<stderr>:` and
# srun -l's `rank: ` say the same.
_GLOBAL = LazyPattern(r"\[rank(?P<rank>\d{1,7})\]:|^\[\d{1,9},(?P<mpi>\d{1,7})\]<std(?:out|err)>:"
                      r"|^\s{0,4}(?P<srun>\d{1,7}): ")
_GLOBAL_SPAN = 240  # the prefix sits before the message: only this much of the line is searched
_POD_PREFIX = LazyPattern(r"^\[pod/(?P<pod>[\w.-]{1,253})/[\w.-]{1,253}\] ")
# -1 is what a rank prints when it has enqueued nothing in that group yet.
_PROGRESS = LazyPattern(r"last enqueued (?:NCCL )?work: ?(?P<enq>-?\d{1,12}), ?"
                        r"last completed (?:NCCL )?work: ?(?P<done>-?\d{1,12})", re.IGNORECASE)
_TIMEOUT_AT = LazyPattern(r"(?:Timeout at NCCL work|detected by watchdog at work(?: sequence id)?): (?P<seq>\d{1,12})")
_WORK = LazyPattern(r"WorkNCCL\((?:SeqNum=(?P<seq>\d{1,12}), )?OpType=(?P<op>\w{1,40})")
# NCCL: `host:pid:tid [dev] NCCL INFO comm 0x... rank R nranks N cudaDev D ...` (Init START/COMPLETE lines) and,
# since 2.20, `... NCCL INFO comm 0x... rank R nRanks N nNodes K localRanks M localRank L MNNVL 0`.
_COMM = LazyPattern(r"(?P<host>[^\s:\]]{1,253}):(?P<pid>\d{1,10}):\d{1,10} \[(?P<dev>\d{1,4})\] NCCL INFO "
                    r"(?:\w{1,40} )?comm 0x[0-9a-fA-F]{1,16} rank (?P<rank>\d{1,7}) n[Rr]anks (?P<n>\d{1,7})\b")
_CUDA_DEV = LazyPattern(r"\bcudaDev (\d{1,4})\b")
# torchrun's failure summary: `host : node-3` then `rank : 11 (local_rank: 3)` then `exitcode : -6 (pid: 2911)`.
_SUMMARY_HOST = LazyPattern(r"^\s*host\s*:\s*(?P<host>[\w.-]{1,253})\s*$")
_SUMMARY_RANK = LazyPattern(r"^\s*rank\s*:\s*(?P<rank>\d{1,7}) \(local_rank: (?P<local>\d{1,4})\)")
_SUMMARY_PID = LazyPattern(r"\(pid: (?P<pid>\d{1,10})\)")

_PROGRESS_NEEDLES = ("ast enqueued", "Timeout at NCCL work", "WorkNCCL(")
# The start of a progress or timeout message: a terminal that wrapped it leaves its numbers on the next lines.
_OPENERS = ("dump signal", "Watchdog caught", "detected by watchdog")
_NEEDLES = (*_PROGRESS_NEEDLES, *_OPENERS, " comm 0x", "(local_rank: ")
_WRAP_LINES = 2  # how many following (or preceding) lines a wrapped message may spill over
_MIN_WRAP_WIDTH = 60  # a line a terminal wrapped is as wide as the terminal (80 columns or more, less a prefix)

# A rank's state relative to the wave front, as the rank table prints it.
WAITING = "waiting"  # enqueued the collective, not completed
NEVER_ENQUEUED = "never-enqueued"  # its last enqueued work is older than the collective the others wait on
BEHIND = "behind"  # stuck on an earlier collective (completed fewer)
PAST = "past"  # already completed it
UNKNOWN = "unknown"  # no progress line
SILENT = "silent"  # a rank of the job that printed no progress line at all
SUSPECT_STATES = (NEVER_ENQUEUED, BEHIND, SILENT)


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
    sizes: str = ""  # the input sizes of the collective it waits on (Flight Recorder dumps), as printed
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
    read: set[int] = set()  # lines already read as part of a message a terminal wrapped
    for index in sorted(found):
        line, n = lines[index], index + 1
        needles = found[index]
        if " comm 0x" in needles:
            _comm(table, line, n)
        if "(local_rank: " in needles:
            _summary(table, lines, index)
        if index not in read and any(needle in needles for needle in (*_PROGRESS_NEEDLES, *_OPENERS)):
            read.update(_progress(table, lines, index, pod))
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


def _has_numbers(text: str) -> bool:
    return bool(_PROGRESS.search(text) or _TIMEOUT_AT.search(text) or ((w := _WORK.search(text)) and w.group("seq")))


def _partial(text: str) -> bool:
    """A timeout line whose progress half a terminal wrapped off: "... work: 2070, last enqueued " and the rest
    ("NCCL work: 2082, last completed NCCL work: 2069.") on the next line."""
    return _PROGRESS.search(text) is None and "ast enqueued" in text


def _joined(head: str, tail: str) -> str:
    """Two pieces of one wrapped message: cut inside a word or number (no space), or at a space."""
    glued, spaced = head + tail.lstrip(), f"{head} {tail.lstrip()}"
    if _PROGRESS.search(spaced) and not _PROGRESS.search(glued):
        return spaced  # cut at a space the line lost ("last enqueued" / "NCCL work: 2082, ...")
    return glued if _has_numbers(glued) else spaced


def _cut(line: str) -> bool:
    """The line may be the head of a message a terminal wrapped: as wide as a terminal, and not a finished
    sentence (a complete message of another rank ends in a full stop)."""
    line = line.rstrip()
    return len(line) >= _MIN_WRAP_WIDTH and not line.endswith(".")


def _unwrapped(lines: list[str], index: int) -> tuple[str, int, int]:
    """The message at `index` with the pieces a terminal wrapped off it: (text, first index, last index)."""
    text, first, last = lines[index][:4096], index, index
    if _LABEL.search(text) is None:  # the label ended up on a line above
        for back in range(1, _WRAP_LINES + 1):
            if index - back < 0 or _has_numbers(lines[index - back]) or not _cut(lines[index - back]):
                break
            text, first = _joined(lines[index - back][:4096], text), index - back
            if _LABEL.search(text):
                break
    while ((not _has_numbers(text) or _partial(text)) and _cut(lines[last]) and last + 1 < len(lines)
           and last - index < _WRAP_LINES):
        nxt = lines[last + 1][:4096]
        if _LABEL.search(nxt) or not nxt.strip():
            break  # the next message, not the rest of this one
        text, last = _joined(text, nxt), last + 1
    return text, first, last


def _global_rank(text: str, start: int, label_at: int) -> int | None:
    """The launcher's rank prefix in front of the message, when there is one."""
    m = _GLOBAL.search(text[start:min(start + _GLOBAL_SPAN, label_at)])
    if m is None:
        return None
    return int(m.group("rank") or m.group("mpi") or m.group("srun"))


def _progress(table: RankTable, lines: list[str], index: int, pod: str) -> range:
    """Read one progress or timeout message into its rank's row; the indexes of the lines it spans."""
    text, first, last = _unwrapped(lines, index)
    label = _LABEL.search(text)
    if label is None:
        return range(index, index + 1)
    n = first + 1
    group, rank = label.group("pg") or "", int(label.group("rank"))
    prefixed_pod = _POD_PREFIX.match(text)
    prefix = _global_rank(text, prefixed_pod.end() if prefixed_pod else 0, label.start())
    row = table.rows.setdefault((group, rank), RankRow(rank, group))
    row.global_rank = prefix if prefix is not None else row.global_rank
    row.pod = prefixed_pod.group("pod") if prefixed_pod else (row.pod or pod)
    if progress := _PROGRESS.search(text):
        row.enqueued, row.completed, row.line = int(progress.group("enq")), int(progress.group("done")), n
        if table.last_completed is None or row.completed > table.last_completed[0]:
            # Cited where the number is: a wrapped message may carry it on its second line.
            done = f"work: {progress.group('done')}"
            at = next((i + 1 for i in range(last, first - 1, -1) if done in lines[i]), n)
            table.last_completed = (row.completed, at)
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
    return range(first, last + 1)


def _fold_unnamed(table: RankTable) -> None:
    """Put the watchdog's unnamed rows (`[Rank R] Watchdog caught ...` names no group) into their group.

    A rank's unnamed timeout belongs to the named group where the same rank waits on that number; when the log
    names only one group, to that group. Otherwise it stays apart, as before.
    """
    named = {group for group, _ in table.rows if group}
    for (group, rank), row in list(table.rows.items()):
        if group or row.timeout_seq is None or row.conflict:
            continue
        homes = [g for g in named if (g, rank) in table.rows
                 and row.timeout_seq in (table.rows[(g, rank)].pending(), table.rows[(g, rank)].timeout_seq)]
        home = homes[0] if len(homes) == 1 else (next(iter(named)) if len(named) == 1 else None)
        if home is None:
            continue
        target = table.rows.get((home, rank))
        if target is None:
            row.group = home
            table.rows[(home, rank)] = row
        elif target.pending() in (None, row.timeout_seq):
            target.timeout_seq = target.timeout_seq if target.timeout_seq is not None else row.timeout_seq
            target.op = target.op or row.op
            target.global_rank = target.global_rank if target.global_rank is not None else row.global_rank
            target.pod = target.pod or row.pod
        else:
            continue
        del table.rows[("", rank)]


def _group_rank(rows: list[RankRow]) -> tuple[int, int, int]:
    waiting = sum(1 for row in rows if row.pending() is not None)
    labelled = 1 if rows[0].group else 0
    return labelled, len(rows), waiting


def wavefront(table: RankTable) -> Wavefront | None:
    """The collective most ranks wait on, and each rank's state against it; None when no rank waits."""
    _fold_unnamed(table)
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
    silent = _silent(table, rows)
    if _blame_silent(rows, silent):
        cite = table.world[1] if table.world is not None else wait_line
        rows += [RankRow(rank, rows[0].group, line=cite, state=SILENT) for rank in silent]
        rows.sort(key=lambda row: row.rank)
    return Wavefront(rows[0].group, wait_seq, wait_line, op, rows, silent)


def _blame_silent(rows: list[RankRow], silent: list[int]) -> bool:
    """Silent ranks are the suspects when every rank that printed waits on the one collective and they are few:
    the ranks that reached it said so, and the ones that did not never arrived."""
    waiting = sum(1 for row in rows if row.state == WAITING)
    spoke = [row for row in rows if row.state != UNKNOWN]
    return bool(silent) and all(row.state == WAITING for row in spoke) and 2 * len(silent) < waiting


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


_MIN_FOR_GAPS = 3  # a gap in fewer printed ranks is more likely a cut paste than a silent rank


def _silent(table: RankTable, rows: list[RankRow]) -> list[int]:
    """Ranks of the whole job with no progress line; only for the default group, whose ranks are global.

    Without the job's size, a number missing below the highest rank that printed is still a rank of the job
    (ranks are numbered 0..N-1), once enough ranks printed for the gap to mean something.
    """
    if rows[0].group not in ("", "0"):
        return []
    seen = {row.rank for row in rows}
    if table.world is None:
        size = max(seen) + 1
        return [r for r in range(size) if r not in seen] if len(seen) >= _MIN_FOR_GAPS else []
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
    if front.silent:
        sink.add("nccl.silent_ranks", front.silent, table.world[1] if table.world is not None else front.wait_line)
    elif not suspects and table.world is not None and not front.ranks(UNKNOWN):
        # Every rank of the job is accounted for and none is behind: no rank to blame.
        sink.add("nccl.suspect_ranks", [], front.wait_line)
    differ = _differing(front)
    if differ is not None:
        sink.add("nccl.collectives_differ", differ[0], differ[1])


def _differing(front: Wavefront) -> tuple[bool, int] | None:
    """Whether the ranks that wait wait on different collectives (number, op or sizes), and the line to cite.

    A rank that never enqueued the collective waits on nothing, so it does not count: that is a straggler, not
    a mismatch. None when fewer than two ranks wait.
    """
    waiting = [row for row in front.rows if row.state in (WAITING, BEHIND) and row.pending() is not None]
    if len(waiting) < 2:
        return None
    seqs = {row.pending() for row in waiting}
    ops = {row.op for row in waiting if row.op}
    sizes = {row.sizes for row in waiting if row.sizes}
    odd = next((row for row in waiting if row.pending() != front.wait_seq), None)
    if odd is not None or len(seqs) > 1:
        return True, odd.line if odd is not None else front.wait_line
    if len(ops) > 1 or len(sizes) > 1:
        first = waiting[0]
        other = next(row for row in waiting
                     if (row.op and row.op != first.op) or (row.sizes and row.sizes != first.sizes))
        return True, other.line
    return False, front.wait_line


def merge(tables: list[tuple[RankTable, int]]) -> RankTable:
    """One table from several logs (one per rank, say), each given with the line offset of its first line, so
    every line number in the result is a line of the logs laid end to end."""
    out = RankTable()
    sizes = [t.world[0] for t, _ in tables if t.world is not None]
    size = max(sizes) if sizes else None
    for table, offset in tables:
        if table.world is not None and table.world[0] == size and out.world is None:
            out.world = (size, table.world[1] + offset)
        if table.last_completed is not None and (out.last_completed is None
                                                 or table.last_completed[0] > out.last_completed[0]):
            out.last_completed = (table.last_completed[0], table.last_completed[1] + offset)
        if table.world is None or table.world[0] == size:  # a subgroup's communicator numbers ranks its own way
            for rank, place in table.places.items():
                _place(out, rank, Place(place.host, place.line + offset, place.pid, place.device))
            out.clashes |= table.clashes
        for key, row in table.rows.items():
            shifted = RankRow(row.rank, row.group, row.global_rank, row.pod, row.enqueued, row.completed,
                              row.timeout_seq, row.op, row.sizes, row.line + offset if row.line else 0, row.conflict)
            known = out.rows.get(key)
            if known is None:
                out.rows[key] = shifted
            else:
                _fill(known, shifted)
    return out


def _fill(known: RankRow, more: RankRow) -> None:
    """A rank read in two logs: what the first left unknown, the second gives."""
    if known.enqueued is None and more.enqueued is not None:
        known.enqueued, known.completed, known.line = more.enqueued, more.completed, more.line
    if more.timeout_seq is not None:
        if known.timeout_seq is not None and known.timeout_seq != more.timeout_seq and not known.group:
            known.conflict = True
        known.timeout_seq = more.timeout_seq if known.timeout_seq is None else min(known.timeout_seq,
                                                                                    more.timeout_seq)
    known.op, known.sizes, known.pod = known.op or more.op, known.sizes or more.sizes, known.pod or more.pod
    known.global_rank = known.global_rank if known.global_rank is not None else more.global_rank
    known.line = known.line or more.line
    known.conflict = known.conflict or more.conflict
