"""A benchmark tabulated by CPU limit (collectors/parsers/metrics/limit_tables.py, fix round f8): latency that falls
as the limit rises is the CFS quota slowing the requests."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.metrics import limit_tables

# https://github.com/dsx-ai-factory/infra-controller/pull/6036 (description): the REST API at 300 req/s.
INFRA_CONTROLLER_6036 = """\
Benchmarking at a fixed target of 300 requests per second produced the following results:

CPU limit | Throughput | p50 latency | p99 latency | CPU utilization
  ----------|------------|-------------|-------------|----------------
  500m      | 113.8 req/s| 10.90s      | 15.49s      | 100%
  1000m     | 172.5 req/s| 7.84s       | 10.63s      | 51%
  2000m     | 175.3 req/s| 7.49s       | 10.37s      | 18%
"""


def _read(text: str) -> dict[str, object]:
    result = limit_tables.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    assert not result.problems
    return {f.name: f.value for f in result.facts}


def test_latency_that_falls_as_the_limit_rises_is_the_quota_slowing_it() -> None:
    assert _read(INFRA_CONTROLLER_6036) == {"cpu.limit_slowed": True}


# Composed tables, each a near miss of the real one above.
@pytest.mark.parametrize("text", [
    # the latency does not fall: the limit is not what slows it
    "| CPU limit | p99 latency |\n|---|---|\n| 500m | 1.01s |\n| 2000m | 0.98s |\n",
    # no unit on the latency and none in the header: no reading
    "CPU limit | p99 latency\n500m | 15\n2000m | 10\n",
    # one row only: no experiment
    "CPU limit | p99 latency\n500m | 15.49s\n",
    # the first column is no CPU limit (a memory limit)
    "Memory limit | p99 latency\n512Mi | 15s\n2Gi | 1s\n",
])
def test_a_table_that_shows_no_limit_slowing_gives_nothing(text: str) -> None:
    assert _read(text) == {}


def test_a_unit_in_the_header_and_cores_in_the_rows_are_read() -> None:
    text = "CPU limit  p99 latency (ms)\n1 core     480\n4 cores    120\n"
    assert _read(text) == {"cpu.limit_slowed": True}
