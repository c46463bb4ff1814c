"""Finding many needles in a long log in one C-speed pass each, shared by the log parsers."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable
from itertools import accumulate


def find_needles(lines: list[str], needles: Iterable[str],
                 skip_repeats: Collection[str] = ()) -> dict[int, list[str]]:
    """0-based line index -> the needles found in that line.

    One C-speed str.find pass per needle over the joined text is several times faster than testing
    every needle against every line in Python, which matters for 200,000-line logs. For needles in
    `skip_repeats`, a line whose text from the needle onwards repeats an earlier line's is skipped:
    NCCL prints the same message once per rank and channel. Only needles whose handlers read nothing
    before the needle and keep first sightings belong there.
    """
    text = "\n".join(lines)
    starts: list[int] | None = None  # line start offsets, built on the first hit
    found: dict[int, list[str]] = {}
    for needle in needles:
        seen: set[str] = set()
        distinct = needle in skip_repeats
        pos = text.find(needle)
        while pos >= 0:
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            rest = text[pos:end] if distinct else ""
            if not distinct or rest not in seen:
                seen.add(rest)
                if starts is None:
                    starts = list(accumulate((len(line) + 1 for line in lines), initial=0))
                found.setdefault(bisect_right(starts, pos) - 1, []).append(needle)
            pos = text.find(needle, end)  # one hit per line is enough
    return found
