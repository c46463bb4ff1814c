"""The one-pass needle scan finds exactly what a line-by-line `in` test finds, caps included."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.parsers.text import needles as needles_module
from collectors.parsers.text.needles import find_needles, scan, utf8

# A small alphabet makes needles, overlaps and repeats likely; "é" and "\ud800" test the byte offsets.
ALPHABET = st.sampled_from([*"abX :\n", "é", "\ud800"])
NEEDLES = st.lists(st.text(ALPHABET.filter(lambda c: c != "\n"), min_size=1, max_size=3), min_size=1, max_size=5)


def _naive(text: str, needles: list[str]) -> set[tuple[int, str]]:
    return {(i, n) for i, line in enumerate(text.split("\n")) for n in needles if n in line}


@settings(max_examples=300, deadline=None)
@given(st.text(ALPHABET, max_size=200), NEEDLES)
def test_scan_finds_each_needle_on_each_line_once(text: str, needles: list[str]) -> None:
    hits = list(scan(utf8(text), needles))
    assert {(h.line, h.needle) for h in hits} == _naive(text, needles)
    assert len(hits) == len({(h.line, h.needle) for h in hits})
    for h in hits:  # the offset points at the needle itself
        assert utf8(text)[h.at:].startswith(utf8(h.needle))


@settings(max_examples=200, deadline=None)
@given(st.text(ALPHABET, max_size=200), NEEDLES, st.integers(min_value=1, max_value=4))
def test_a_capped_needle_stops_after_its_first_lines(text: str, needles: list[str], cap: int) -> None:
    hits = list(scan(utf8(text), needles, per_needle=cap))
    expected = _naive(text, needles)
    for needle in set(needles):
        lines = sorted(line for line, n in expected if n == needle)[:cap]
        assert sorted(h.line for h in hits if h.needle == needle) == lines


def test_overlapping_needles_that_start_together_are_all_found() -> None:
    hits = list(scan(utf8("NVRM: Xid 79, GPU has fallen off the bus\nXid 13"), ["Xid ", "Xid 79", "Xid"]))
    assert sorted((h.line, h.needle) for h in hits) == [
        (0, "Xid"), (0, "Xid "), (0, "Xid 79"), (1, "Xid"), (1, "Xid ")]


def test_find_needles_keeps_the_callers_order_and_skips_repeated_tails() -> None:
    lines = ["rank 0 NET/IB : Using mlx5_0", "rank 1 NET/IB : Using mlx5_0", "Bootstrap NET/IB : Using mlx5_1"]
    found = find_needles(lines, ["NET/IB", "Bootstrap"], skip_repeats={"NET/IB"})
    assert found == {0: ["NET/IB"], 2: ["NET/IB", "Bootstrap"]}


@settings(max_examples=300, deadline=None)
@given(st.text(ALPHABET, max_size=200), NEEDLES, st.one_of(st.none(), st.integers(min_value=1, max_value=4)))
def test_a_short_text_searched_by_find_gives_what_the_alternation_gives(
        text: str, needles: list[str], cap: int | None) -> None:
    by_find = list(scan(utf8(text), needles, per_needle=cap))
    with patch.object(needles_module, "_FIND_BUDGET", -1):  # every text takes the RE2 alternation
        by_alternation = list(scan(utf8(text), needles, per_needle=cap))
    assert by_find == by_alternation  # the same hits, offsets and order
