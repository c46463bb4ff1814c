"""cgroup cpu.stat, v1 and v2: periods, throttled periods and the throttled ratio."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.node import cpu_stat
from tests.unit.parsers.cited_fixtures import Row, capture_test, rows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "cpu_stat"



def run(text: str) -> ParseResult:
    return cpu_stat.parse(Artifact(id="s1", kind=ArtifactKind.CPU_STAT, content=text))


FIXTURE_CASES: list[tuple[str, list[Row]]] = [
    ("cpu.stat-v2.txt", [  # 173076 / 412087 = 0.42000...
        ("cpu.nr_periods", 412087, 5, 5),
        ("cpu.nr_throttled", 173076, 6, 6),
        ("cpu.throttled_ratio", 0.42, 5, 6),
    ]),
    ("cpu.stat-v1.txt", [  # 411 / 98213 = 0.004184...
        ("cpu.nr_periods", 98213, 1, 1),
        ("cpu.nr_throttled", 411, 2, 2),
        ("cpu.throttled_ratio", 0.0042, 1, 2),
    ]),
    ("cpu.stat-v2-no-quota.txt", [  # no CFS quota: no periods, so nothing can be throttled
        ("cpu.nr_periods", 0, 4, 4),
        ("cpu.nr_throttled", 0, 5, 5),
        ("cpu.throttled_ratio", 0.0, 4, 5),
    ]),
]


test_fixture_facts_and_citations = capture_test(run, FIXTURE_CASES, FIXTURES)


def test_quota_but_never_throttled_gives_zero_ratio() -> None:
    result = run("usage_usec 5000000\nnr_periods 5000\nnr_throttled 0\nthrottled_usec 0")
    assert rows(result) == [
        ("cpu.nr_periods", 5000, 2, 2),
        ("cpu.nr_throttled", 0, 3, 3),
        ("cpu.throttled_ratio", 0.0, 2, 3),
    ]
    assert isinstance(result.facts[-1].value, float)


def test_grep_h_output_for_two_containers() -> None:
    text = "\n".join([
        "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-aa.scope/cpu.stat:nr_periods 100",
        "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-aa.scope/cpu.stat:nr_throttled 25",
        "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-bb.scope/cpu.stat:nr_periods 400",
        "/sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/pod1/cri-containerd-bb.scope/cpu.stat:nr_throttled 4",
    ])
    assert rows(run(text)) == [
        ("cpu.nr_periods", 100, 1, 1),
        ("cpu.nr_throttled", 25, 2, 2),
        ("cpu.throttled_ratio", 0.25, 1, 2),
        ("cpu.nr_periods", 400, 3, 3),
        ("cpu.nr_throttled", 4, 4, 4),
        ("cpu.throttled_ratio", 0.01, 3, 4),
    ]


def test_files_separated_by_headers() -> None:
    text = "==> a/cpu.stat <==\nnr_periods 10\nnr_throttled 5\n\n==> b/cpu.stat <==\nnr_periods 10\nnr_throttled 1\n"
    assert [r for r in rows(run(text)) if r[0] == "cpu.throttled_ratio"] == [
        ("cpu.throttled_ratio", 0.5, 2, 3), ("cpu.throttled_ratio", 0.1, 6, 7)]


def test_crlf_and_trailing_spaces() -> None:
    assert rows(run("nr_periods 8\r\nnr_throttled 2  \r\nthrottled_time 123\r\n")) == [
        ("cpu.nr_periods", 8, 1, 1), ("cpu.nr_throttled", 2, 2, 2), ("cpu.throttled_ratio", 0.25, 1, 2)]


def test_missing_nr_throttled_is_a_problem() -> None:
    result = run("usage_usec 1000\nnr_periods 50")
    assert rows(result) == [("cpu.nr_periods", 50, 2, 2)]
    assert result.problems == ["lines 1-2: cpu.stat without nr_throttled; throttled ratio not computed"]


def test_usage_only_cpu_stat_is_a_problem_not_a_fact() -> None:
    result = run("usage_usec 120934455\nuser_usec 100219870\nsystem_usec 20714585")
    assert result.facts == []
    assert result.problems == [
        "lines 1-3: cpu.stat without nr_periods/nr_throttled (cpu controller not enabled for this cgroup, "
        "or the paste is cut); throttling not read"]


def test_impossible_counts_are_a_problem() -> None:
    result = run("nr_periods 5\nnr_throttled 9")
    assert [f.name for f in result.facts] == ["cpu.nr_periods", "cpu.nr_throttled"]
    assert result.problems == ["line 2: nr_throttled 9 exceeds nr_periods 5; ratio not computed"]


@pytest.mark.parametrize("name", [c[0] for c in FIXTURE_CASES])
def test_sniff_recognises_each_capture(name: str) -> None:
    assert cpu_stat.sniff((FIXTURES / name).read_text(encoding="utf-8")) == 95

