"""Where a process's time went during a benchmark: on a core, or runnable and waiting for one (Linux schedstat).

`/proc/PID/task/TID/schedstat` holds, per thread, the nanoseconds it ran, the nanoseconds it spent runnable on a
run queue without a core, and the number of times it was put on a core. Summed over a process's threads at the
start and the end of a run, the difference says whether a slow request was slow for its own CPU or for want of a
core. Threads that end during the run drop out of the sum; the processes measured keep theirs (thread pools).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Sched:
    ran: float  # seconds on a core
    waited: float  # seconds runnable but waiting for a core
    slices: int  # times put on a core

    def __sub__(self, other: Sched) -> Sched:
        return Sched(self.ran - other.ran, self.waited - other.waited, self.slices - other.slices)

    def __add__(self, other: Sched) -> Sched:
        return Sched(self.ran + other.ran, self.waited + other.waited, self.slices + other.slices)

    def said(self) -> str:
        per = self.waited / self.slices * 1000 if self.slices else 0.0
        return f"ran {self.ran:.1f} s, waited for a core {self.waited:.1f} s ({per:.2f} ms per wake-up)"


NOTHING = Sched(0.0, 0.0, 0)


def _per_thread(pid: int, name: str) -> list[str]:
    """The text of /proc/PID/task/*/NAME, one per thread still there (none once the process is gone)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return []
    texts: list[str] = []
    for task in tasks:
        try:
            texts.append((task / name).read_text())
        except OSError:
            continue  # the thread ended meanwhile
    return texts


def process(pid: int) -> Sched:
    """The sum over the threads of `pid` (NOTHING once it is gone)."""
    total = NOTHING
    for text in _per_thread(pid, "schedstat"):
        try:
            ran, waited, slices = text.split()[:3]
        except ValueError:
            continue
        total = total + Sched(int(ran) / 1e9, int(waited) / 1e9, int(slices))
    return total


def children(pid: int) -> list[int]:
    """The direct children of `pid`."""
    found: list[int] = []
    for text in _per_thread(pid, "children"):
        try:
            found += [int(p) for p in text.split()]
        except ValueError:
            continue
    return found


def threads(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/task").iterdir()))
    except OSError:
        return 0


def pressure() -> float:
    """Seconds in which at least one task on the machine waited for a core (PSI, /proc/pressure/cpu "some")."""
    try:
        line = Path("/proc/pressure/cpu").read_text().splitlines()[0]
    except (OSError, IndexError):
        return 0.0
    return int(line.rsplit("total=", 1)[1]) / 1e6
