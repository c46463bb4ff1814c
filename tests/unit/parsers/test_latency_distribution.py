"""Load testers' cumulative latency distributions (redis-benchmark, fortio): the p99 they give."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.metrics import latency_distribution


def _p99(text: str) -> list[tuple[float, int]]:
    result = latency_distribution.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))
    return [(f.value, f.citation.start) for f in result.facts if f.name == "latency.p99_seconds"]


def test_redis_benchmark_s_first_bound_at_99_percent_is_the_p99() -> None:
    # kubernetes/kubernetes#3734 (https://github.com/kubernetes/kubernetes/issues/3734), redis-benchmark 2.x.
    text = ("====== INCR ======\n"
            "  10000 requests completed in 0.67 seconds\n"
            "95.61% <= 4 milliseconds\n"
            "98.83% <= 5 milliseconds\n"
            "99.02% <= 6 milliseconds\n"
            "99.25% <= 7 milliseconds\n")
    assert _p99(text) == [(0.006, 5)]


def test_each_run_gives_its_own_p99_and_the_hdr_form_is_read() -> None:
    # Rendered as redis-benchmark 6.2+ prints its hdr histogram ("%.3f%% <= %.3f milliseconds (cumulative count %lld)").
    text = ("50.000% <= 0.207 milliseconds (cumulative count 50210)\n"
            "99.000% <= 0.415 milliseconds (cumulative count 99010)\n"
            "100.000% <= 1.007 milliseconds (cumulative count 100000)\n"
            "12.00% <= 1 milliseconds\n"
            "99.50% <= 40 milliseconds\n")
    assert _p99(text) == [(0.000415, 2), (0.04, 5)]


def test_fortio_s_target_line_is_read_in_seconds() -> None:
    # Rendered as fortio's histogram prints its percentiles ("# target %g%% %.6g").
    assert _p99("# target 50% 0.00123\n# target 99% 0.0123\n") == [(0.0123, 2)]


def test_a_distribution_that_never_reaches_99_percent_and_other_shares_give_nothing() -> None:
    assert _p99("72.41% <= 3 milliseconds\n95.61% <= 4 milliseconds\n") == []
    assert _p99("GPU util 99% <= limit\n99.9% of requests <= 5 ms\n") == []


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=400))
def test_never_raises_on_garbage(text: str) -> None:
    assert all(v >= 0 for v, _ in _p99(text))
