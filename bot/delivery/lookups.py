"""When the poster may look in Slack's history, and whether it needs to.

A post that failed may still have been made, and the retry then looks for it (`conversations.history` or
`conversations.replies`) before posting again. Those methods are Slack's Tier 3: about 50 calls a minute for the
whole workspace. After an outage hundreds of posts wait, so the lookups are spent only where they can find
something, and one lookup settles every waiting post of the channel or thread it reads (bot/delivery/poster.py).
"""

from __future__ import annotations

import socket
import threading
import time
import urllib.error
from collections.abc import Callable

from slack_sdk.errors import SlackApiError

# Below Slack's 50 a minute, so the budget runs out here, not as 429s that hold the channel back.
LOOKUPS_PER_MINUTE = 40.0
LOOKUP_BURST = 8
# chat.getPermalink is Tier 4 (100+ a minute): its own budget, below that (bot/delivery/permalinks.py).
PERMALINKS_PER_MINUTE = 80.0
PERMALINK_BURST = 10


def may_have_reached_slack(err: BaseException) -> bool:
    """Whether a failed call may have taken effect. A refused connection or an unknown host never left this
    machine, and Slack's own refusals (429, `ok: false`) say that nothing was done; a 5xx page from a proxy or a
    timeout after the request went out says nothing either way."""
    if isinstance(err, SlackApiError):
        return bool(err.response.status_code >= 500)
    reason = err.reason if isinstance(err, urllib.error.URLError) else err
    return not isinstance(reason, (ConnectionRefusedError, socket.gaierror))


class LookupBudget:
    """A token bucket for this process's history lookups; a 429 on a lookup empties it until its Retry-After."""

    def __init__(self, per_minute: float = LOOKUPS_PER_MINUTE, burst: int = LOOKUP_BURST,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.rate = per_minute / 60.0
        self.burst = float(burst)
        self.clock = clock
        self._tokens = self.burst
        self._at = clock()
        self._lock = threading.Lock()

    def take(self) -> float:
        """0 when a lookup may go now (and it is counted), else the seconds until one may."""
        with self._lock:
            now = self.clock()
            self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
            self._at = now
            if self._tokens >= 1.0:
                self._tokens -= 1.0
                return 0.0
            return (1.0 - self._tokens) / self.rate

    def hold(self, seconds: float) -> None:
        """Slack said to wait: no lookup for `seconds`."""
        with self._lock:
            now = self.clock()
            self._tokens = min(self._tokens, 0.0) - max(0.0, seconds) * self.rate
            self._at = now
