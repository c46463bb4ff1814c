"""SlackReach: one log line a minute while Slack cannot be reached, /healthz's words, and the resume hook
(issue 28, point 4). The clock is injected: no sleeps."""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from urllib.error import URLError

import pytest

from bot.delivery.slack_reach import SlackReach, is_transport_error

REFUSED = URLError(ConnectionRefusedError(111, "Connection refused"))


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "triagebot.slack_reach"]


def test_one_line_a_minute_while_unreachable_then_one_when_back(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="triagebot.slack_reach")
    clock = Clock()
    reach = SlackReach(clock=clock, wall=lambda: datetime(2026, 11, 28, 9, 0, tzinfo=UTC))
    resumed: list[set[int]] = []
    reach.when_back(resumed.append)
    for second in range(0, 150, 2):  # a failed call every 2 s for 2.5 minutes: 75 failures
        clock.now = float(second)
        reach.failed(REFUSED, item_id=second % 6)
    said = lines(caplog)
    assert said == [
        "Slack API unreachable (URLError: [Errno 111] Connection refused): alerts are still stored and their posts "
        "queued; checking again every 10s",
        "Slack API still unreachable since 2026-11-28T09:00:00Z (31 failed calls; last: URLError: [Errno 111] "
        "Connection refused)",
        "Slack API still unreachable since 2026-11-28T09:00:00Z (61 failed calls; last: URLError: [Errno 111] "
        "Connection refused)"]
    assert reach.status() == ("unreachable since 2026-11-28T09:00:00Z (75 failed calls; last: URLError: "
                              "[Errno 111] Connection refused)")
    reach.answered()
    reach.answered()  # already up: nothing more
    assert lines(caplog)[3:] == ["Slack API reachable again after 0s; posting resumes (3 queued posts retried now)"]
    assert resumed == [{0, 2, 4}]
    assert reach.status() == "ok"


def test_a_failure_just_after_recovery_does_not_add_a_line(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="triagebot.slack_reach")
    clock = Clock()
    reach = SlackReach(clock=clock)
    reach.failed(REFUSED)
    reach.answered()
    clock.now = 5.0
    reach.failed(REFUSED)  # a call that was in flight when Slack came back
    assert len(lines(caplog)) == 1
    assert reach.status().startswith("unreachable since ")


def test_transport_errors_are_oserrors_and_answers_are_not() -> None:
    from slack_sdk.errors import SlackClientError

    assert is_transport_error(REFUSED) and is_transport_error(TimeoutError()) \
        and is_transport_error(ConnectionResetError())
    assert not is_transport_error(SlackClientError("an answer")) and not is_transport_error(ValueError())
