"""Finding many needles in a long log in one linear pass, shared by the log parsers and the line-signal layer."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from functools import cache, lru_cache
from typing import Any, NamedTuple

import re2


class Hit(NamedTuple):
    line: int  # 0-based
    needle: str
    at: int  # byte offset of the needle in the scanned UTF-8 text


def utf8(text: str) -> bytes:
    """The text as RE2 reads it; a lone surrogate from a badly decoded paste is kept, not an error."""
    return text.encode("utf-8", "surrogatepass")


def scan(data: bytes, needles: Collection[str], per_needle: int | None = None) -> Iterator[Hit]:
    """Each line holding each needle, once per line and needle, in order of position.

    One RE2 alternation of all the needles finds them in a single linear pass, however many there are (a
    `str.find` pass per needle reads a 200,000-line log once per needle). A needle seen on `per_needle` lines
    stops being looked for: the pattern is rebuilt without it.
    """
    live = {n for n in needles if n}
    if not live:
        return
    if len(data) * len(live) <= _FIND_BUDGET:
        yield from _scan_by_find(data, live, per_needle)
        return
    starting = _by_first_byte(frozenset(live))
    counts: dict[str, int] = {}
    # The line being read (0-based), where it ends (its newline, or the end), and the needles already found on it.
    # Matches come in order of position, so the line number is the newlines counted so far: C-speed counts, and no
    # table of every line's end (which was a second copy of a big log's size in small objects).
    line, end, counted = -1, -1, 0
    here: set[str] = set()
    pattern = _alternation(frozenset(live))
    match = pattern.search(data)
    while match is not None:
        at = match.start()
        if at > end:
            line += data.count(b"\n", counted, at) + (1 if line < 0 else 0)
            counted = at
            end = data.find(b"\n", at)
            end, here = len(data) if end < 0 else end, set()
        new = False
        # Several needles can start where the match does ("Xid " and "Xid 79"); the alternation reports one.
        for needle, raw in starting[data[at]]:
            if needle in live and needle not in here and data.startswith(raw, at):
                here.add(needle)
                new = True
                yield Hit(line, needle, at)
                counts[needle] = counts.get(needle, 0) + 1
                if per_needle is not None and counts[needle] >= per_needle:
                    live.discard(needle)
                    if not live:
                        return
                    pattern = _alternation(frozenset(live))
        if new:
            match = pattern.search(data, at + 1)
            continue
        # Only needles this line already gave start here. Look for the others up to the line's end, then move on:
        # a 10 MB line repeating one message is read once, not once per repeat.
        others = live - here
        match = _alternation(frozenset(others)).search(data, at + 1, end) if others else None
        if match is None and end < len(data):
            match = pattern.search(data, end + 1)


# A short text is searched with one `bytes.find` pass per needle: for a one-line paste, compiling the alternation of a
# few hundred needles cost more than the whole search (issue #27); past this many bytes read, one RE2 pass is cheaper.
_FIND_BUDGET = 1 << 20


def _scan_by_find(data: bytes, live: set[str], per_needle: int | None) -> Iterator[Hit]:
    """What scan yields, found by `bytes.find`: each needle's first place on each line, in order of position (ties
    in the needles' sorted order, as the alternation's table reads them)."""
    found: list[tuple[int, str]] = []
    for needle in live:
        raw = utf8(needle)
        at = data.find(raw)
        while at >= 0:
            found.append((at, needle))
            end = data.find(b"\n", at)
            at = data.find(raw, end + 1) if end >= 0 else -1
    found.sort()
    counts: dict[str, int] = {}
    line, counted = 0, 0
    for at, needle in found:
        if per_needle is not None:
            if counts.get(needle, 0) >= per_needle:
                continue
            counts[needle] = counts.get(needle, 0) + 1
        line += data.count(b"\n", counted, at)
        counted = at
        yield Hit(line, needle, at)


def lines_holding(text: str, needles: Collection[str], per_needle: int | None = None) -> dict[int, set[str]]:
    """Each line (0-based) of the lower-cased text that holds any of the (lower-case) needles, with those it holds."""
    found: dict[int, set[str]] = {}
    for hit in scan(utf8(text.lower()), needles, per_needle):
        found.setdefault(hit.line, set()).add(hit.needle)
    return found


@lru_cache(maxsize=256)
def _alternation(needles: frozenset[str]) -> Any:  # google-re2 ships no type hints
    return re2.compile(b"|".join(re2.escape(utf8(n)) for n in sorted(needles)))


@cache
def _by_first_byte(needles: frozenset[str]) -> tuple[tuple[tuple[str, bytes], ...], ...]:
    table: list[list[tuple[str, bytes]]] = [[] for _ in range(256)]
    for needle in sorted(needles):
        raw = utf8(needle)
        table[raw[0]].append((needle, raw))
    return tuple(tuple(row) for row in table)


def find_needles(lines: list[str], needles: Iterable[str],
                 skip_repeats: Collection[str] = ()) -> dict[int, list[str]]:
    """0-based line index -> the needles found in that line, in the order `needles` gives them.

    For needles in `skip_repeats`, a line whose text from the needle onwards repeats an earlier line's is
    skipped: NCCL prints the same message once per rank and channel. Only needles whose handlers read nothing
    before the needle and keep first sightings belong there.
    """
    order = {needle: i for i, needle in enumerate(dict.fromkeys(needles))}
    data = utf8("\n".join(lines))
    seen: dict[str, set[bytes]] = {}
    found: dict[int, list[str]] = {}
    for hit in scan(data, order):
        if hit.needle in skip_repeats:
            end = data.find(b"\n", hit.at)
            rest = data[hit.at:len(data) if end < 0 else end]
            if rest in seen.setdefault(hit.needle, set()):
                continue
            seen[hit.needle].add(rest)
        found.setdefault(hit.line, []).append(hit.needle)
    for needles_here in found.values():
        needles_here.sort(key=order.__getitem__)
    return found
