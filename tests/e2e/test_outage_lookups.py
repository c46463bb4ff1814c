"""After a Slack outage, the poster spends Slack's history lookups (Tier 3, ~50 a minute per workspace) only where
a post may really have gone out, and one lookup settles every waiting post of the channel it reads.

The outbox runs on a real database (SQLite and PostgreSQL), the poster's calls go through slack_sdk to the Slack
stand-in (its limits and error shapes), and a refused connection is a real closed port. The poster's clock is
stepped instead of slept: what is asserted is which Slack calls were made, not how long they took.
"""

from __future__ import annotations

import socket
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from slack_sdk import WebClient
from sqlalchemy import select

from bot.delivery.lookups import LookupBudget
from bot.delivery.poster import Poster
from bot.store import outbox
from bot.store.models import OutboxItem
from tests.harness.fixtures import MigratedStore
from tests.standins.slack_api import SlackFault, SlackStandIn

CHANNEL = "C0OPS"
POSTS = 8


class Clock:
    """The poster's clock, moved by the test; the lookup budget refills on the same clock."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC) - timedelta(minutes=1)

    def __call__(self) -> datetime:
        return self.now

    def seconds(self) -> float:
        return self.now.timestamp()


@pytest.fixture
def slack() -> Iterator[SlackStandIn]:
    with SlackStandIn(channels=(CHANNEL,), burst=50, post_rate_per_channel=50) as standin:
        yield standin


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def queue_posts(store: MigratedStore, clock: Clock) -> None:
    with store.factory.begin() as session:
        for n in range(POSTS):
            outbox.enqueue(session, f"root:{n}", CHANNEL, "chat.postMessage", {"kind": "alert", "text": f"root {n}"},
                           now=clock.now, priority=outbox.PRIORITY_ROOT)


def poster_for(store: MigratedStore, url: str, clock: Clock) -> Poster:
    # No slack_sdk retry handlers: its own retry of a refused connection sleeps about half a second per call, which
    # would only slow the test down; the poster's backoff is what is tested.
    client = WebClient(token="xoxb-test-token", base_url=url, timeout=5, retry_handlers=[])
    return Poster(store.factory, client, clock=clock, lookups=LookupBudget(clock=clock.seconds))


def rows(store: MigratedStore) -> list[OutboxItem]:
    with store.factory() as session:
        return list(session.scalars(select(OutboxItem).order_by(OutboxItem.id)))


def drain(poster: Poster, store: MigratedStore, clock: Clock, steps: int = 120) -> None:
    for _ in range(steps):
        if all(r.status == "sent" for r in rows(store)):
            return
        poster.run_once()
        clock.now += timedelta(seconds=1)
        # The stand-in refills its Tier 3 bucket on the real clock (about one lookup per 1.2 s): a little real time
        # per step lets a lookup that the outage's retries spent come back, at most 6 s in all.
        time.sleep(0.05)
    raise AssertionError([(r.idempotency_key, r.status, r.last_error) for r in rows(store)])


def posted_keys(slack: SlackStandIn) -> Counter[str]:
    return Counter(str(m.extra["metadata"]["event_payload"]["outbox_key"]) for m in slack.messages[CHANNEL])


def lookups(slack: SlackStandIn, status: int | None = None) -> int:
    """History lookups made (answered `status`, if given)."""
    calls = slack.calls_to("conversations.history") + slack.calls_to("conversations.replies")
    return sum(1 for c in calls if status is None or c.status == status)


def test_no_history_lookup_after_a_refused_connection_or_a_429(store: MigratedStore, slack: SlackStandIn) -> None:
    clock = Clock()
    queue_posts(store, clock)
    down = poster_for(store, f"http://127.0.0.1:{closed_port()}/api/", clock)
    for _ in range(6):  # Slack is down: every call is refused before it leaves the machine
        down.run_once()
        clock.now += timedelta(seconds=1)
    refused = rows(store)
    assert sum(r.attempts for r in refused) >= 3
    assert all("Connection refused" in (r.last_error or "") for r in refused if r.attempts)
    assert not any(r.maybe_sent for r in refused)

    slack.set_faults([SlackFault("chat.postMessage", error="ratelimited", retry_after=1, times=3)])
    clock.now += timedelta(minutes=6)  # past every backoff
    poster = poster_for(store, slack.api_url, clock)
    drain(poster, store, clock)

    assert [c.status for c in slack.calls_to("chat.postMessage")].count(429) == 3
    assert lookups(slack) == 0  # neither the refusals nor the 429s can have posted anything
    assert posted_keys(slack) == Counter({f"root:{n}": 1 for n in range(POSTS)})


def test_one_lookup_settles_every_waiting_post_of_the_channel(store: MigratedStore, slack: SlackStandIn) -> None:
    """A proxy answers 503 to everything while Slack behind it posts: each post that was tried may be in Slack.
    When Slack is back, the first retry's read of the channel settles all of them."""
    clock = Clock()
    queue_posts(store, clock)
    slack.set_faults([SlackFault("*", status=503, applied=True)])
    poster = poster_for(store, slack.api_url, clock)
    for _ in range(20):
        poster.run_once()
        clock.now += timedelta(seconds=1)
    maybe = [r.idempotency_key for r in rows(store) if r.maybe_sent]
    assert len(maybe) >= 4, maybe
    assert set(posted_keys(slack)) == set(maybe)  # each tried once; its retries only looked (and got 503s)

    slack.set_faults([])
    assert lookups(slack, 200) == 0
    clock.now += timedelta(minutes=6)
    drain(poster, store, clock)

    # One read of the channel settled every post that may have gone out. (The stand-in's Tier 3 bucket, on the
    # real clock, may first refuse a lookup or two that the outage's retries spent: those read nothing.)
    assert lookups(slack, 200) == 1
    assert posted_keys(slack) == Counter({f"root:{n}": 1 for n in range(POSTS)})  # none twice, none missing
    recovered = [r.idempotency_key for r in rows(store) if (r.result or {}).get("recovered")]
    assert sorted(recovered) == sorted(maybe)
    assert poster.metrics.lookup_settled.labels("found")._value.get() == len(maybe) - 1


def test_posts_that_backed_off_through_an_outage_go_as_soon_as_slack_answers(store: MigratedStore,
                                                                            slack: SlackStandIn) -> None:
    """An outage long enough for the backoff to reach half a minute: once one call succeeds, every waiting post
    goes at the channel's pace, not when its own backoff runs out."""
    clock = Clock()
    queue_posts(store, clock)
    down = poster_for(store, f"http://127.0.0.1:{closed_port()}/api/", clock)
    for _ in range(70):
        down.run_once()
        clock.now += timedelta(seconds=1)
    waiting = rows(store)
    assert max(r.next_attempt_at for r in waiting) - clock.now >= timedelta(seconds=10)  # backed off far

    poster = poster_for(store, slack.api_url, clock)
    drain(poster, store, clock, steps=POSTS + 3)  # one post a second in the channel, from the first success on
    assert posted_keys(slack) == Counter({f"root:{n}": 1 for n in range(POSTS)})
    assert lookups(slack) == 0
