"""Conntrack counters: conntrack -S (old and new), /proc/net/stat/nf_conntrack, count/max values."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.node import conntrack
from tests.unit.parsers.cited_fixtures import Row, capture_test, rows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "conntrack"



def run(text: str) -> ParseResult:
    return conntrack.parse(Artifact(id="c1", kind=ArtifactKind.CONNTRACK_STATS, content=text))


FIXTURE_CASES: list[tuple[str, list[Row]]] = [
    ("conntrack-S-zero-drops.txt", [("conntrack.drops", 0, 1, 8)]),  # 8 CPUs, nothing dropped
    ("conntrack-S-drops.txt", [("conntrack.drops", 52, 1, 4)]),  # (5+5+0) + 0 + (17+17+4) + (2+2+0)
    ("conntrack-S-v1.4.4.txt", [("conntrack.drops", 2, 1, 2)]),  # older tool with searched/new/delete
    ("proc-net-stat-nf_conntrack.txt", [("conntrack.drops", 86, 2, 5)]),  # hex: 0x1f+0x1f, 0xa+0xa+2, 0, 1+1
    ("sysctl-conntrack.txt", [("conntrack.usage_ratio", 0.999, 3, 5)]),  # 261873 / 262144
]


test_fixture_facts_and_citations = capture_test(run, FIXTURE_CASES, FIXTURES)


def test_zero_drops_is_emitted_as_zero() -> None:
    result = run("cpu=0   \tfound=0 invalid=0 ignore=0 insert=0 insert_failed=0 drop=0 early_drop=0 error=0 "
                 "search_restart=0")
    assert rows(result) == [("conntrack.drops", 0, 1, 1)]


def test_proc_table_with_max_gives_usage_from_entries() -> None:
    table = (FIXTURES / "proc-net-stat-nf_conntrack.txt").read_text(encoding="utf-8")
    text = table + "$ cat /proc/sys/net/netfilter/nf_conntrack_max\n262144\n"
    # entries 0x3ff80 = 262016 on line 2; the max is printed alone on line 7
    assert rows(run(text)) == [("conntrack.drops", 86, 2, 5), ("conntrack.usage_ratio", 0.9995, 2, 7)]


def test_newer_kernel_proc_header() -> None:
    text = "\n".join([
        "entries  clashres found new invalid ignore delete chainlength insert insert_failed drop early_drop "
        "icmp_error  expect_new expect_create expect_delete search_restart",
        "00001000  00000003 00000000 00000000 00000010 00000000 00000000 00000000 00000000 00000004 00000004 "
        "00000001 00000000  00000000 00000000 00000000 00000000",
        "00001000  00000000 00000000 00000000 00000002 00000000 00000000 00000000 00000000 00000000 00000000 "
        "00000000 00000000  00000000 00000000 00000000 00000000",
    ])
    assert rows(run(text)) == [("conntrack.drops", 9, 2, 3)]


def test_cat_commands_and_conntrack_count() -> None:
    text = "\n".join([
        "$ cat /proc/sys/net/netfilter/nf_conntrack_count",
        "131072",
        "$ cat /proc/sys/net/netfilter/nf_conntrack_max",
        "262144",
    ])
    assert rows(run(text)) == [("conntrack.usage_ratio", 0.5, 2, 4)]
    assert rows(run("# conntrack -C\n200000\n/proc/sys/net/netfilter/nf_conntrack_max:250000")) == [
        ("conntrack.usage_ratio", 0.8, 2, 3)]


def test_two_snapshots_give_one_fact_each() -> None:
    snap = (FIXTURES / "conntrack-S-drops.txt").read_text(encoding="utf-8")
    zero = (FIXTURES / "conntrack-S-zero-drops.txt").read_text(encoding="utf-8").splitlines()[:4]
    text = "$ conntrack -S\n" + "\n".join(zero) + "\n$ sleep 60; conntrack -S\n" + snap
    assert rows(run(text)) == [("conntrack.drops", 0, 2, 5), ("conntrack.drops", 52, 7, 10)]


def test_crlf_paste() -> None:
    text = "cpu=0   \tfound=0 insert_failed=1 drop=1 early_drop=0\r\ncpu=1   \tfound=0 insert_failed=0 drop=0 " \
           "early_drop=3\r\n"
    assert rows(run(text)) == [("conntrack.drops", 5, 1, 2)]


def test_cpu_line_without_drop_counters_is_a_problem() -> None:
    result = run("cpu=0   \tfound=0 invalid=3 ignore=0 insert=0")
    assert result.facts == []
    assert result.problems == ["line 1: conntrack counters without drop, early_drop or insert_failed"]


def test_rows_without_header_are_a_problem() -> None:
    result = run("0003ff80  00000000 00000000 00000000 0000002a 0000c1f0\n0003ff80  00000000 00000000 00000000")
    assert result.facts == []
    assert result.problems == [
        "line 1: /proc/net/stat/nf_conntrack rows without their header line; cannot tell which column is which"]


def test_zero_max_is_a_problem() -> None:
    result = run("net.netfilter.nf_conntrack_count = 10\nnet.netfilter.nf_conntrack_max = 0")
    assert result.facts == []
    assert result.problems == ["line 2: nf_conntrack_max is 0; cannot compute table usage"]


@pytest.mark.parametrize("name", [c[0] for c in FIXTURE_CASES])
def test_sniff_recognises_each_capture(name: str) -> None:
    assert conntrack.sniff((FIXTURES / name).read_text(encoding="utf-8")) == 95


def test_sniff_is_proportional_in_a_mixed_paste() -> None:
    text = "cpu=0   \tfound=0 insert_failed=0 drop=0 early_drop=0\n" + "some other line\n" * 3
    assert conntrack.sniff(text) == 24  # 1 of 4 lines
