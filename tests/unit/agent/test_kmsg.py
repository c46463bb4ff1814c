"""/dev/kmsg records: parsing, reading until EAGAIN, wall-clock filtering, and the journalctl fallback."""

from __future__ import annotations

import os
import stat
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from collectors.agent import kmsg
from collectors.agent.config import AgentSettings
from collectors.agent.errors import AgentError
from collectors.agent.journal import journal_argv
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import kernel

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agent"
TOKEN = "t" * 32
NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
BOOT = NOW - timedelta(seconds=10000)  # the fixture's /proc/uptime


def settings(**overrides: object) -> AgentSettings:
    base: dict[str, object] = {"token": TOKEN, "proc_root": FIXTURES / "proc", "kmsg_path": FIXTURES / "kmsg"}
    return AgentSettings(**(base | overrides))  # type: ignore[arg-type]


def test_records_keep_their_dictionary_lines() -> None:
    records, skipped = kmsg.parse_records([
        "4,1201,9000000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=python, GPU has fallen off the bus.",
        " SUBSYSTEM=pci",
        " DEVICE=+pci:0000:18:00.0",
        "6,1202,9000000150,-,caller=T123;next",
        "garbage",
    ])
    assert [(r.priority, r.seq, r.usec, len(r.lines)) for r in records] == [(4, 1201, 9000000000, 3),
                                                                           (6, 1202, 9000000150, 1)]
    assert skipped == 1


def test_boot_time_from_uptime() -> None:
    assert kmsg.boot_time(FIXTURES / "proc", NOW) == BOOT


def test_since_filters_on_wall_clock() -> None:
    records = kmsg.read_kmsg(FIXTURES / "kmsg")
    kept = kmsg.since(records, BOOT, NOW - timedelta(minutes=30))  # uptime 8200 s onwards
    assert [r.seq for r in kept] == [1201, 1202, 1230, 1231, 1232, 1290]


def test_served_text_is_read_by_the_kernel_parser() -> None:
    log = kmsg.kernel_log(settings(), NOW - timedelta(minutes=30), NOW, 1 << 20)
    assert log.source == "kmsg" and log.boot_time == BOOT
    result = kernel.parse(Artifact(id="k", kind=ArtifactKind.KERNEL_LOG, content=log.text))
    facts = {f.name: f.value for f in result.facts}
    assert facts["xid.codes"] == [79]
    assert facts["gpu.fallen_off_bus"] is True
    assert facts["kernel.oom_memcg"] is True
    assert facts["conntrack.table_full"] is True
    assert kernel.sniff(log.text) >= 85


def test_a_pipe_is_read_until_eagain(tmp_path: Path) -> None:
    """A character device and a FIFO both end a non-blocking read with EAGAIN while a writer is open."""
    fifo = tmp_path / "kmsg"
    os.mkfifo(fifo)
    holder = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    writer = os.open(fifo, os.O_WRONLY)
    try:
        os.write(writer, b"6,1,100,-;first\n SUBSYSTEM=x\n6,2,200,-;second\n")
        assert not stat.S_ISREG(os.stat(fifo).st_mode)
        records = kmsg.read_kmsg(fifo)  # returns instead of blocking for more
    finally:
        os.close(writer)
        os.close(holder)
    assert [r.lines for r in records] == [("6,1,100,-;first", " SUBSYSTEM=x"), ("6,2,200,-;second",)]


def test_unreadable_kmsg_without_fallback_is_a_503_saying_what_is_needed(tmp_path: Path) -> None:
    with pytest.raises(AgentError) as caught:
        kmsg.kernel_log(settings(kmsg_path=tmp_path / "missing"), NOW, NOW, 4096)
    assert caught.value.status == 503
    assert "CAP_SYSLOG" in caught.value.expected


def test_journal_argv_is_fixed_with_an_epoch_since() -> None:
    start = datetime(2026, 11, 22, 5, 30, tzinfo=UTC)
    assert journal_argv(settings(), start) == [
        "/usr/bin/journalctl", "-k", "--no-pager", "--quiet", "--utc", "-o", "short-iso-precise",
        "--since", f"@{int(start.timestamp())}"]


def fake_journalctl(tmp_path: Path, body: str, code: int = 0) -> Path:
    """A stand-in journalctl that records its argv and prints `body`."""
    script = tmp_path / "journalctl"
    script.write_text(
        f"#!{sys.executable}\nimport sys, pathlib\n"
        f"pathlib.Path({str(tmp_path / 'argv')!r}).write_text('\\n'.join(sys.argv[1:]))\n"
        f"sys.stdout.write({body!r})\nsys.stderr.write('journal error\\n')\nsys.exit({code})\n")
    script.chmod(0o755)
    return script


def test_journalctl_fallback_runs_the_fixed_argv(tmp_path: Path) -> None:
    line = "2026-11-22T05:59:01.000000+00:00 gpu-node-2 kernel: NVRM: Xid (PCI:0000:18:00): 79, pid=0\n"
    script = fake_journalctl(tmp_path, line * 3)
    config = settings(kmsg_path=tmp_path / "no-kmsg", journalctl_fallback=True, journalctl_path=script)
    start = NOW - timedelta(minutes=5)
    log = kmsg.kernel_log(config, start, NOW, 4096)
    assert log.source == "journalctl" and log.text == line * 3
    assert (tmp_path / "argv").read_text().split("\n") == journal_argv(config, start)[1:]


def test_journalctl_output_is_read_only_up_to_the_budget(tmp_path: Path) -> None:
    script = fake_journalctl(tmp_path, "x" * 100_000)
    config = settings(kmsg_path=tmp_path / "no-kmsg", journalctl_fallback=True, journalctl_path=script)
    assert len(kmsg.kernel_log(config, NOW, NOW, 1000).text) == 1001


def test_journalctl_failure_is_a_503(tmp_path: Path) -> None:
    script = fake_journalctl(tmp_path, "", code=1)
    config = settings(kmsg_path=tmp_path / "no-kmsg", journalctl_fallback=True, journalctl_path=script)
    with pytest.raises(AgentError) as caught:
        kmsg.kernel_log(config, NOW, NOW, 1000)
    assert caught.value.status == 503
    assert caught.value.message == "journalctl -k failed with exit status 1: journal error"


@pytest.mark.skipif(not os.access("/dev/kmsg", os.R_OK), reason="/dev/kmsg is not readable here")
def test_the_real_dev_kmsg_is_read_to_the_end_without_blocking() -> None:
    started = time.monotonic()
    records = kmsg.read_kmsg(Path("/dev/kmsg"))
    assert time.monotonic() - started < 5
    assert records and records[0].lines[0].split(";", 1)[0].count(",") >= 3
    assert [r.seq for r in records] == sorted(r.seq for r in records)


def _flood(path: Path, megabytes: int) -> int:
    """A kmsg stand-in of `megabytes` MiB: one OOM line per record, the last one an Xid."""
    line = "3,{seq},{usec},-;Memory cgroup out of memory: Killed process 4242 (python) " + "x" * 120 + "\n"
    count = megabytes * 1024 * 1024 // (len(line) + 10)
    with path.open("w") as out:
        for seq in range(count):
            out.write(line.format(seq=seq, usec=9_000_000_000 + seq))
        out.write(f"4,{count},{9_000_000_000 + count},-;NVRM: Xid (PCI:0000:18:00): 79, GPU has fallen off the bus.\n")
    return count


def test_a_huge_kmsg_is_streamed_in_bounded_memory_and_keeps_the_newest_records(tmp_path: Path) -> None:
    import tracemalloc

    kmsg_file = tmp_path / "kmsg"
    count = _flood(kmsg_file, 30)
    limit = 64 * 1024
    tracemalloc.start()
    try:
        result = kmsg.kernel_log(settings(kmsg_path=kmsg_file), NOW - timedelta(days=7), NOW, limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # 30 MiB streamed through; what was held at once is the tail window plus one read, not the file.
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes"
    assert len(result.text.encode()) <= limit
    assert result.text.rstrip("\n").endswith("GPU has fallen off the bus.")  # the newest record is kept
    assert result.text.startswith("… ") and result.dropped_bytes > 29 * 1024 * 1024
    assert f"3,{count - 1}," in result.text


def test_a_runaway_line_is_cut_while_streaming(tmp_path: Path) -> None:
    kmsg_file = tmp_path / "kmsg"
    kmsg_file.write_text("6,1,9000000000,-;" + "y" * (8 * 1024 * 1024) + "\n6,2,9000000001,-;after\n")
    records = kmsg.read_kmsg(kmsg_file)
    assert [r.seq for r in records] == [1, 2]
    assert len(records[0].lines[0]) <= 64 * 1024
