"""The kernel log from /dev/kmsg, filtered by wall-clock time.

/dev/kmsg hands out one record per read(): `prio,seq,usec,flags[,...];message`, followed by optional
` KEY=value` dictionary lines. Opened non-blocking, reads stop at EAGAIN, which is the end of the ring
buffer, so the agent never waits for new messages. The record lines are served unchanged: the kernel
parser reads them, and a person can match them to `dmesg -r`.

Record times are microseconds since boot. Wall time is boot time + usec, with boot time = now - uptime
from /proc/uptime. (printk time does not advance while suspended, uptime does; GPU servers do not sleep.)
A regular file is read the same way, so tests and captured dumps stand in for the device.
"""

from __future__ import annotations

import os
import re
import stat
from collections import deque
from collections.abc import Generator, Iterable, Iterator
from contextlib import closing
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from collectors.agent.config import AgentSettings
from collectors.agent.errors import AgentError
from collectors.agent.journal import journal_kernel_log

_RECORD = re.compile(r"(\d{1,3}),(\d{1,20}),(\d{1,20}),([^;,]*)(?:,[^;]*)?;")
_READ_SIZE = 16 * 1024  # larger than any record (the kernel caps one at 8 KiB with its dictionary)
_FILE_CHUNK = 64 * 1024
_MAX_LINE = 64 * 1024  # a "line" longer than this in a stand-in file is cut: no kmsg record comes close
_DEVICE_CAP = 64 * 1024 * 1024  # the ring buffer is at most a few MiB; a flood must not keep us reading


@dataclass(frozen=True)
class KmsgRecord:
    priority: int  # facility * 8 + level
    seq: int
    usec: int  # microseconds since boot
    lines: tuple[str, ...]  # the record line, then its dictionary lines, as read

    def size(self) -> int:
        """Bytes this record takes when served (each line plus its newline)."""
        return sum(len(line.encode("utf-8")) + 1 for line in self.lines)


@dataclass(frozen=True)
class KernelLog:
    text: str
    source: str  # "kmsg" or "journalctl"
    boot_time: datetime | None
    dropped_bytes: int = 0  # older records left out to keep the answer (and the agent's memory) within budget


def iter_records(lines: Iterable[str]) -> Iterator[KmsgRecord]:
    """Records from kmsg lines as they stream by; lines that are neither record nor dictionary are skipped."""
    current: KmsgRecord | None = None
    for line in lines:
        if line.startswith(" ") and current is not None:
            current = KmsgRecord(current.priority, current.seq, current.usec, (*current.lines, line))
            continue
        m = _RECORD.match(line)
        if m is None:
            continue
        if current is not None:
            yield current
        current = KmsgRecord(int(m.group(1)), int(m.group(2)), int(m.group(3)), (line,))
    if current is not None:
        yield current


def parse_records(lines: Iterable[str]) -> tuple[list[KmsgRecord], int]:
    """Records from kmsg text, and how many lines were neither a record nor a dictionary line."""
    materialised = list(lines)
    records = list(iter_records(materialised))
    used = sum(len(r.lines) for r in records)
    skipped = sum(1 for line in materialised if line.strip()) - used
    return records, skipped


def iter_kmsg(path: Path) -> Generator[KmsgRecord, None, None]:
    """Every record still in the ring buffer (or in a regular file standing in for it), streamed: memory holds
    one read at a time, whatever the size of the file. Opening happens now, so OSError is raised here."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)

    def stream() -> Generator[KmsgRecord, None, None]:
        try:
            lines = _file_lines(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else _device_lines(fd)
            yield from iter_records(lines)
        finally:
            os.close(fd)

    return stream()


def read_kmsg(path: Path) -> list[KmsgRecord]:
    """Every record, as a list (small inputs and tests; the served paths stream with iter_kmsg)."""
    return list(iter_kmsg(path))


def _file_lines(fd: int) -> Iterator[str]:
    pending = b""
    while True:
        chunk = os.read(fd, _FILE_CHUNK)
        if not chunk:
            break
        pending += chunk
        *complete, pending = pending.split(b"\n")
        for raw in complete:
            yield raw[:_MAX_LINE].decode("utf-8", errors="replace")
        if len(pending) > _MAX_LINE:
            pending = pending[:_MAX_LINE]  # a runaway line: keep its start, drop the rest as it streams
    if pending:
        yield pending.decode("utf-8", errors="replace")


def _device_lines(fd: int) -> Iterator[str]:
    total = 0
    overruns = 0
    while total < _DEVICE_CAP and overruns < 1000:
        try:
            chunk = os.read(fd, _READ_SIZE)
        except BlockingIOError:
            break  # EAGAIN: no more records
        except BrokenPipeError:
            # EPIPE: records we had not read yet were overwritten; the next read goes on after them.
            overruns += 1
            continue
        if not chunk:
            break
        total += len(chunk)
        yield from chunk.decode("utf-8", errors="replace").splitlines()


def keep_tail(records: Iterable[KmsgRecord], limit: int) -> tuple[list[KmsgRecord], int]:
    """The newest records that fit in `limit` bytes, and how many bytes of older records were left out.

    Memory stays within about `limit` whatever streams by: older records leave the window as newer ones come.
    """
    window: deque[KmsgRecord] = deque()
    held = 0
    dropped = 0
    for record in records:
        window.append(record)
        held += record.size()
        while held > limit and window:
            old = window.popleft()
            held -= old.size()
            dropped += old.size()
    return list(window), dropped


def boot_time(proc_root: Path, now: datetime) -> datetime:
    """When the node booted: now minus the first field of /proc/uptime."""
    path = proc_root / "uptime"
    try:
        uptime = float(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError) as err:
        raise AgentError(503, f"cannot read {path} to convert kernel timestamps: {err}") from None
    return now - timedelta(seconds=uptime)


def since(records: Iterable[KmsgRecord], boot: datetime, start: datetime) -> Iterator[KmsgRecord]:
    """Records logged at or after `start`, as they stream by."""
    threshold = (start - boot).total_seconds() * 1_000_000
    return (r for r in records if r.usec >= threshold)


def render(records: Iterable[KmsgRecord]) -> str:
    return "".join(line + "\n" for record in records for line in record.lines)


def kernel_log(settings: AgentSettings, start: datetime, now: datetime, limit: int) -> KernelLog:
    """The kernel log since `start`: /dev/kmsg, else journalctl -k when that fallback is enabled.

    At most `limit` bytes of the newest records are kept while the log streams by; what was left out is counted.
    """
    try:
        stream = iter_kmsg(settings.kmsg_path)
    except OSError as err:
        if not settings.journalctl_fallback:
            raise AgentError(
                503, f"cannot read {settings.kmsg_path}: {err.strerror or err}",
                "the agent needs /dev/kmsg mounted and CAP_SYSLOG; or set "
                "TRIAGEBOT_AGENT_JOURNALCTL_FALLBACK=true with the host journal mounted") from None
        return KernelLog(journal_kernel_log(settings, start, limit), "journalctl", None)
    with closing(stream):
        boot = boot_time(settings.proc_root, now)
        records, dropped = keep_tail(since(stream, boot, start), max(0, limit - TAIL_MARKER_ROOM))
    text = render(records)
    if dropped:
        text = tail_marker(dropped, limit) + text
    return KernelLog(text, "kmsg", boot, dropped)


TAIL_MARKER_ROOM = 128  # bytes kept free for the marker line


def tail_marker(dropped: int, limit: int) -> str:
    """The first line of a cut answer: the newest records are kept, the older ones are counted."""
    return f"… {dropped} bytes of older records left out to fit max_bytes={limit}\n"
