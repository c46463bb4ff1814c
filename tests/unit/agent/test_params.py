"""Query parameters: what the agent accepts, and the 400s that say what it expected instead."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from collectors.agent.errors import AgentError
from collectors.agent.params import check_known, parse_duration, parse_max_bytes, parse_since

NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.mark.parametrize(("raw", "expected"), [
    ("30m", NOW - timedelta(minutes=30)),
    ("90s", NOW - timedelta(seconds=90)),
    ("1h30m", NOW - timedelta(minutes=90)),
    ("7d", NOW - timedelta(days=7)),
    ("2026-11-22T05:00:00Z", datetime(2026, 11, 22, 5, tzinfo=UTC)),
    ("2026-11-22T07:00:00+02:00", datetime(2026, 11, 22, 5, tzinfo=UTC)),
    ("2026-11-22T05:00:00.123456789Z", datetime(2026, 11, 22, 5, 0, 0, 123456, tzinfo=UTC)),
    (None, NOW - timedelta(hours=1)),
    ("", NOW - timedelta(hours=1)),
])
def test_since_accepts_times_and_durations(raw: str | None, expected: datetime) -> None:
    assert parse_since(raw, NOW) == expected


@pytest.mark.parametrize("raw", ["yesterday", "30", "-5m", "8d", "2026-11-22T05:00:00", "2026-11-22",
                                 "1m; rm -rf /", "2026-13-40T99:99:99Z", "x" * 100, "2026-11-01T00:00:00Z"])
def test_bad_since_is_a_400_that_says_what_was_expected(raw: str) -> None:
    with pytest.raises(AgentError) as caught:
        parse_since(raw, NOW)
    assert caught.value.status == 400
    assert "RFC 3339" in caught.value.expected and "30m" in caught.value.expected


def test_durations() -> None:
    assert parse_duration("1d2h3m4s") == timedelta(days=1, hours=2, minutes=3, seconds=4)
    assert parse_duration("") is None
    assert parse_duration("m") is None


@pytest.mark.parametrize(("raw", "value"), [(None, 4096), ("", 4096), ("256", 256), ("4096", 4096)])
def test_max_bytes(raw: str | None, value: int) -> None:
    assert parse_max_bytes(raw, 4096) == value


@pytest.mark.parametrize("raw", ["0", "255", "4097", "1e6", "-1", "ten", "99999999999999"])
def test_bad_max_bytes(raw: str) -> None:
    with pytest.raises(AgentError) as caught:
        parse_max_bytes(raw, 4096)
    assert caught.value.status == 400
    assert caught.value.expected == "an integer number of bytes from 256 to 4096"


def test_unknown_parameters_are_rejected() -> None:
    check_known({"since": "1h"}, ("since", "max_bytes"))
    with pytest.raises(AgentError) as caught:
        check_known({"sinse": "1h"}, ("since", "max_bytes"))
    assert caught.value.body() == {"error": "unknown parameter 'sinse'", "expected": "parameters: max_bytes, since"}
