"""Query parameters: parsed strictly, so a bad value is a 400 that names what was expected."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta

from collectors.agent.errors import bad_request

MAX_LOOKBACK = timedelta(days=7)
DEFAULT_LOOKBACK = timedelta(hours=1)

SINCE_EXPECTED = ("an RFC 3339 time with a zone (2026-11-22T06:00:00Z) or a duration like 90s, 30m, 2h, 1d, "
                  "1h30m; at most 7d back")

_DURATION = re.compile(r"(?:(\d{1,4})d)?(?:(\d{1,5})h)?(?:(\d{1,6})m)?(?:(\d{1,7})s)?")
# RFC 3339 requires a zone; a bare local time would silently mean the agent's zone.
_RFC3339 = re.compile(r"\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d(?:\.\d{1,9})?(?:[Zz]|[+-]\d\d:\d\d)")


def check_known(query: Mapping[str, str], allowed: Iterable[str]) -> None:
    """Reject parameters the endpoint does not take, so a typo is not silently ignored."""
    names = sorted(set(allowed))
    for key in query:
        if key not in names:
            raise bad_request(f"unknown parameter {key[:40]!r}", "parameters: " + (", ".join(names) or "none"))


def parse_duration(text: str) -> timedelta | None:
    m = _DURATION.fullmatch(text)
    if m is None or not any(m.groups()):
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def parse_since(raw: str | None, now: datetime) -> datetime:
    """The start of the window: an absolute RFC 3339 time or a duration back from now."""
    if raw is None or raw == "":
        return now - DEFAULT_LOOKBACK
    text = raw.strip()
    if len(text) > 40:
        raise bad_request("since is too long", SINCE_EXPECTED)
    since = _absolute(text)
    if since is None:
        span = parse_duration(text)
        if span is None:
            raise bad_request(f"cannot read since={raw!r}", SINCE_EXPECTED)
        since = now - span
    if now - since > MAX_LOOKBACK:
        raise bad_request(f"since={raw!r} reaches more than 7 days back", SINCE_EXPECTED)
    return since


def _absolute(text: str) -> datetime | None:
    if _RFC3339.fullmatch(text) is None:
        return None
    # fromisoformat takes at most microseconds; trim nanosecond fractions RFC 3339 allows.
    normal = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("z", "Z").replace("t", "T"))
    try:
        return datetime.fromisoformat(normal).astimezone(UTC)
    except ValueError:
        return None


def parse_max_bytes(raw: str | None, ceiling: int) -> int:
    """A response budget no larger than the agent's own ceiling."""
    if raw is None or raw == "":
        return ceiling
    expected = f"an integer number of bytes from 256 to {ceiling}"
    if not re.fullmatch(r"\d{1,12}", raw.strip()):
        raise bad_request(f"cannot read max_bytes={raw!r}", expected)
    value = int(raw)
    if not 256 <= value <= ceiling:
        raise bad_request(f"max_bytes={value} is out of range", expected)
    return value
