"""Which notification is news (bot.webhook.ordering), and the texts a storm and a cut message show
(bot.delivery.words)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from bot.delivery.words import CUT_MARK, fitted_text, rollup_summary
from bot.webhook.ordering import merge
from bot.webhook.payload import Alert

T0 = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)
NOW = T0 + timedelta(hours=1)
ZERO = datetime(1, 1, 1, tzinfo=UTC)


def alert(status: str, starts: datetime | None, ends: datetime | None = None, fp: str = "a") -> Alert:
    return Alert(status=status, labels={"alertname": "X"}, startsAt=starts, endsAt=ends or ZERO, fingerprint=fp)


def apply(*notifications: list[Alert]) -> list[tuple[str, bool]]:
    """(group status, absorbed) after each notification, in delivery order."""
    states: dict[str, Any] = {}
    seen = []
    for n, alerts in enumerate(notifications):
        done = merge(states, alerts, NOW + timedelta(seconds=n))
        states = done.states
        seen.append((done.status, done.absorbed))
    return seen


FIRE = [alert("firing", T0)]
RESOLVE = [alert("resolved", T0, T0 + timedelta(minutes=4))]
REFIRE = [alert("firing", T0 + timedelta(minutes=9))]


@pytest.mark.parametrize(("deliveries", "expected"), [
    ([FIRE, RESOLVE], [("firing", False), ("resolved", False)]),
    # The firing delivered late, after its resolution: absorbed, the group stays resolved.
    ([RESOLVE, FIRE], [("resolved", False), ("resolved", True)]),
    ([FIRE, RESOLVE, FIRE], [("firing", False), ("resolved", False), ("resolved", True)]),
    # An HA pair: every notification twice.
    ([FIRE, FIRE, RESOLVE, RESOLVE], [("firing", False), ("firing", True), ("resolved", False), ("resolved", True)]),
    # A real re-fire has a later startsAt: news, even after the resolution.
    ([FIRE, RESOLVE, REFIRE], [("firing", False), ("resolved", False), ("firing", False)]),
    # The old episode's resolution delivered after the re-fire: absorbed.
    ([FIRE, REFIRE, RESOLVE], [("firing", False), ("firing", False), ("firing", True)]),
], ids=["in-order", "late-firing", "late-firing-after", "ha-pair", "re-fire", "late-resolution"])
def test_stale_and_duplicate_notifications_change_nothing(deliveries: list[list[Alert]],
                                                          expected: list[tuple[str, bool]]) -> None:
    assert apply(*deliveries) == expected


def test_a_group_is_firing_while_any_of_its_alerts_is() -> None:
    both = [alert("firing", T0, fp="a"), alert("firing", T0, fp="b")]
    one_left = [alert("resolved", T0, T0 + timedelta(minutes=1), fp="a"), alert("firing", T0, fp="b")]
    stale = [alert("firing", T0, fp="a")]  # an old notification that only knew alert a firing
    assert apply(both, one_left, stale) == [("firing", False), ("firing", False), ("resolved", True)]


def test_an_alert_without_a_start_is_dated_by_its_arrival() -> None:
    assert apply([alert("firing", None)], [alert("resolved", None)]) == [("firing", False), ("resolved", False)]


def test_a_later_end_of_the_same_instance_is_news() -> None:
    later = [alert("resolved", T0, T0 + timedelta(minutes=6))]
    assert apply(RESOLVE, later, RESOLVE) == [("resolved", False), ("resolved", False), ("resolved", True)]


def test_text_over_the_limit_is_cut_with_a_mark_and_nothing_half_written() -> None:
    assert fitted_text("short") == ("short", False)
    text, cut = fitted_text("x" * 2990 + " &amp; " + "y" * 100, limit=3000)
    assert cut and text.endswith(CUT_MARK) and len(text) <= 3000 and "&am" not in text.replace("&amp;", "")
    fenced, _ = fitted_text("```\n" + "z" * 5000, limit=3000)
    assert fenced.count("```") % 2 == 0


def test_the_rollup_line_names_the_storm() -> None:
    def group(name: str, namespace: str, n: int, status: str = "firing") -> dict[str, Any]:
        return {"status": status, "alerts": [{"status": status, "labels": {"alertname": name,
                                                                          "namespace": namespace}}] * n}

    groups = [group("KubePodCrashLooping", "ml", 5)] * 4 + [group("KubePodCrashLooping", "shop", 1)] + \
        [group("TargetDown", "mon", 2)] * 6 + [group("NodeNotReady", "", 3, status="resolved")]
    text = rollup_summary(groups)
    assert text.startswith(":rotating_light: *33 alerts in 12 groups*; top KubePodCrashLooping x21 in ml")
    assert "1 of 12 groups resolved" in text
    assert "<" not in rollup_summary([group("<!channel>", "x", 1)])
