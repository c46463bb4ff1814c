"""Load generators' summaries (collectors/catalogs/load_reports.yaml), rendered as each tool prints them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.catalogs.load_reports import catalog
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.metrics import load_reports


def facts_of(text: str) -> dict[str, object]:
    result = load_reports.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))
    assert result.problems == []
    return {f.name: f.value for f in result.facts}


# The request count each rendered line goes with, for the tools that print the count on a line of its own.
_BEFORE = {"ab": "Complete requests:      1000\n", "wrk": "  1000 requests in 30.00s, 1.20MB read\n"}


@pytest.mark.parametrize(("tool", "role", "render"),
                         [(e.tool, e.role, r) for e in catalog().entries for r in e.render if e.role != "requests"])
def test_every_rendered_line_is_read(tool: str, role: str, render: str) -> None:
    text = _BEFORE.get(tool, "") + render.replace("<CODE>", "503").replace("<N>", "50")
    facts = facts_of(text)
    if role in ("status_count", "status_counts"):  # 50 of 200 and 50 of 100 responses were 503
        assert facts["http.error_statuses"] == [503]
        assert facts["http.error_ratio"] == 0.5
    elif role == "non_2xx":
        assert facts["http.error_ratio"] == 0.05
    else:
        assert facts["http.error_ratio"] == 0.5


def test_hey_rows_end_at_the_next_section() -> None:
    text = ("Status code distribution:\n  [200]\t950 responses\n  [503]\t30 responses\n  [500]\t20 responses\n\n"
            "Error distribution:\n  [3]\tGet http://x: dial tcp: connection refused\n")
    assert facts_of(text) == {"http.error_ratio": 0.05, "http.error_statuses": [503, 500]}


def test_vegeta_counts_a_response_with_no_status_as_failed() -> None:
    assert facts_of("Status Codes  [code:count]              0:535  200:665\n") == {"http.error_ratio": 0.4458}


@pytest.mark.parametrize("healthy", [
    "Status code distribution:\n  [200]\t5000 responses\n",
    "Status code distribution:\n  [200]\t6442 responses\n  [404]\t2 responses\n",
    "Status Codes  [code:count]                      200:30000  \n",
    "Complete requests:      1000\nFailed requests:        0\n",
    "  2478 requests in 30.00s, 0.99MB read\nRequests/sec:     82.60\n",
    "     http_req_failed................: 0.00%   ✓ 0         ✗ 1459\n",
])
def test_a_healthy_run_shows_no_errors(healthy: str) -> None:
    assert facts_of(healthy).get("http.error_ratio", 0.0) == 0.0
    assert "http.error_statuses" not in facts_of(healthy)


def test_a_status_row_outside_hey_s_heading_is_not_read() -> None:
    assert facts_of("  [503]\t30 responses\n") == {}


@settings(max_examples=50, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("[]:0123456789 \nStatus code distribution responses%.")), max_size=300))
def test_garbage_never_raises(text: str) -> None:
    load_reports.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))


# Real pastes, verbatim, cut at whole lines.
REAL = [
    # https://github.com/rakyll/hey/issues/276 (comment of 2022-03-25): a site answering mostly 503.
    ("Status code distribution:\n  [200]\t12 responses\n  [503]\t188 responses\n",
     {"http.error_ratio": 0.94, "http.error_statuses": [503]}),
    # https://github.com/tsenart/vegeta/issues/283: 502s, and status 0 for requests that got no response.
    ("Success       [ratio]                  74.64%\n"
     "Status Codes  [code:count]             200:252095  502:343  0:85306\n",
     {"http.error_ratio": 0.2536, "http.error_statuses": [502]}),
    # https://github.com/rakyll/hey/issues/283: a healthy run.
    ("Status code distribution:\n  [200]\t250 responses\n", {"http.error_ratio": 0.0}),
]


@pytest.mark.parametrize(("text", "expected"), REAL)
def test_real_pastes(text: str, expected: dict[str, object]) -> None:
    assert facts_of(text) == expected


def test_a_run_with_no_response_gives_no_latency() -> None:
    # vegeta's report of a run whose every request failed before an answer (the name did not resolve): its
    # percentiles time the failures, so the p99 a line signal read is dropped; a run with answers keeps it.
    from collectors.models import Citation, Fact

    report = ("Requests      [total, rate, throughput]         30000, 500.02, 0.00\n"
              "Latencies     [min, mean, 50, 90, 95, 99, max]  "
              "47.403µs, 1.563ms, 1.476ms, 1.853ms, 2.308ms, 4.46ms, 17.11ms\n"
              "Success       [ratio]                           0.00%\n"
              "Status Codes  [code:count]                      0:30000  \n")
    silent: list[int] = []
    load_reports.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=report), silent)
    assert silent == [4]
    p99 = Fact(name="latency.p99_seconds", value=0.00446, subject="s", citation=Citation(artifact="a", start=2, end=2))
    assert load_reports.without_failed_timings([p99], silent) == []
    answered: list[int] = []
    load_reports.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=report.replace("0:30000", "0:10 200:29990")),
                      answered)
    assert answered == []
    assert load_reports.without_failed_timings([p99], answered) == [p99]


# k6's checks block (grafana/k6 js/summary.js summarizeCheck), rendered with sample values: a check that names the
# status it expects says how many responses had it.
@pytest.mark.parametrize(("name", "passes", "fails", "ratio", "statuses"), [
    ("is status 504", 4, 482, 0.0082, [504]),          # a check expecting a 5xx that passed: those were 5xx
    ("status was 502", 10, 90, 0.1, [502]),
    ("status is 200", 474, 12, 0.0247, None),          # a check expecting a 2xx that failed: the rest were not
    ("response code was 201", 90, 10, 0.1, None),
])
def test_a_k6_check_naming_a_status_counts_the_responses(
        name: str, passes: int, fails: int, ratio: float, statuses: list[int] | None) -> None:
    pct = 100 * passes // (passes + fails)
    facts = facts_of(f"     ✗ {name}\n      ↳  {pct}% — ✓ {passes} / ✗ {fails}\n")
    assert facts["http.error_ratio"] == ratio
    assert facts.get("http.error_statuses") == statuses


@pytest.mark.parametrize("text", [
    # Checks on anything but one status say nothing of statuses.
    "     ✗ response time < 200ms\n      ↳  53% — ✓ 10974 / ✗ 9618\n",
    "    ✗ body is VM 0/1/2\n      ↳  71% — ✓ 19985 / ✗ 7997\n",
    "     ✗ status is 200 or 201\n      ↳  90% — ✓ 90 / ✗ 10\n",
    # A result line with no check above it.
    "      ↳  50% — ✓ 1 / ✗ 1\n",
])
def test_a_k6_check_on_anything_else_gives_no_error_rate(text: str) -> None:
    assert facts_of(text) == {}
