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
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from collectors.agent.config import AgentSettings
from collectors.agent.errors import AgentError
from collectors.agent.journal import journal_kernel_log

_RECORD = re.compile(r"(\d{1,3}),(\d{1,20}),(\d{1,20}),([^;,]*)(?:,[^;]*)?;")
_READ_SIZE = 16 * 1024  # larger than any record (the kernel caps one at 8 KiB with its dictionary)
_READ_CAP = 64 * 1024 * 1024  # the ring buffer is at most a few MiB; a flood must not keep us reading


@dataclass(frozen=True)
class KmsgRecord:
    priority: int  # facility * 8 + level
    seq: int
    usec: int  # microseconds since boot
    lines: tuple[str, ...]  # the record line, then its dictionary lines, as read


@dataclass(frozen=True)
class KernelLog:
    text: str
    source: str  # "kmsg" or "journalctl"
    boot_time: datetime | None


def parse_records(lines: Iterable[str]) -> tuple[list[KmsgRecord], int]:
    """Records from kmsg text, and how many lines were neither a record nor a dictionary line."""
    records: list[KmsgRecord] = []
    skipped = 0
    for line in lines:
        if line.startswith(" ") and records:
            last = records[-1]
            records[-1] = KmsgRecord(last.priority, last.seq, last.usec, (*last.lines, line))
            continue
        m = _RECORD.match(line)
        if m is None:
            skipped += bool(line.strip())
            continue
        records.append(KmsgRecord(int(m.group(1)), int(m.group(2)), int(m.group(3)), (line,)))
    return records, skipped


def read_kmsg(path: Path) -> list[KmsgRecord]:
    """Every record still in the ring buffer (or in a regular file standing in for it)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        data = _read_file(fd) if stat.S_ISREG(os.fstat(fd).st_mode) else _read_device(fd)
    finally:
        os.close(fd)
    records, _ = parse_records(data.decode("utf-8", errors="replace").splitlines())
    return records


def _read_file(fd: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while total < _READ_CAP:
        chunk = os.read(fd, 1024 * 1024)
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _read_device(fd: int) -> bytes:
    chunks: list[bytes] = []
    total = 0
    overruns = 0
    while total < _READ_CAP and overruns < 1000:
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
        chunks.append(chunk if chunk.endswith(b"\n") else chunk + b"\n")
        total += len(chunk)
    return b"".join(chunks)


def boot_time(proc_root: Path, now: datetime) -> datetime:
    """When the node booted: now minus the first field of /proc/uptime."""
    path = proc_root / "uptime"
    try:
        uptime = float(path.read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError) as err:
        raise AgentError(503, f"cannot read {path} to convert kernel timestamps: {err}") from None
    return now - timedelta(seconds=uptime)


def since(records: Iterable[KmsgRecord], boot: datetime, start: datetime) -> list[KmsgRecord]:
    """Records logged at or after `start`."""
    threshold = (start - boot).total_seconds() * 1_000_000
    return [r for r in records if r.usec >= threshold]


def render(records: Iterable[KmsgRecord]) -> str:
    return "".join(line + "\n" for record in records for line in record.lines)


def kernel_log(settings: AgentSettings, start: datetime, now: datetime, limit: int) -> KernelLog:
    """The kernel log since `start`: /dev/kmsg, else journalctl -k when that fallback is enabled."""
    try:
        records = read_kmsg(settings.kmsg_path)
    except OSError as err:
        if not settings.journalctl_fallback:
            raise AgentError(
                503, f"cannot read {settings.kmsg_path}: {err.strerror or err}",
                "the agent needs /dev/kmsg mounted and CAP_SYSLOG; or set "
                "TRIAGEBOT_AGENT_JOURNALCTL_FALLBACK=true with the host journal mounted") from None
        return KernelLog(journal_kernel_log(settings, start, limit), "journalctl", None)
    boot = boot_time(settings.proc_root, now)
    return KernelLog(render(since(records, boot, start)), "kmsg", boot)
