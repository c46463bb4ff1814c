"""Alertmanager's v2 API, for the one write the bot makes: a silence someone asked for with the Silence button.

Only used when `silence_button` is on and `alertmanager_url` is set. The bot never writes to the cluster; a silence
is Alertmanager state, created on a person's click and recorded with their Slack name as its author.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta

import httpx
from pydantic import BaseModel, ValidationError

SILENCE_TIMEOUT = 5.0  # seconds; the click has long been acknowledged, but the person waits for the answer


class SilenceError(RuntimeError):
    """Alertmanager refused or could not be reached; the message says which, in words for the person."""


class Silence(BaseModel):
    id: str
    starts_at: datetime
    ends_at: datetime


class _Created(BaseModel):
    silenceID: str


def silence_body(matchers: Mapping[str, str], *, created_by: str, comment: str, starts: datetime,
                 duration: timedelta) -> dict[str, object]:
    """The POST /api/v2/silences body: equality matchers on every label, for `duration` from `starts`."""
    return {
        "matchers": [{"name": k, "value": v, "isRegex": False, "isEqual": True} for k, v in sorted(matchers.items())],
        "startsAt": starts.astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "endsAt": (starts + duration).astimezone(UTC).isoformat().replace("+00:00", "Z"),
        "createdBy": created_by,
        "comment": comment,
    }


def create_silence(base_url: str, matchers: Mapping[str, str], *, created_by: str, comment: str,
                   duration: timedelta = timedelta(hours=1), now: datetime | None = None,
                   client: httpx.Client | None = None) -> Silence:
    """Create a silence and return its id and window. Raises SilenceError with a readable reason."""
    if not matchers:
        raise SilenceError("the alert has no labels to match on, so a silence would mute everything")
    starts = now or datetime.now(UTC)
    body = silence_body(matchers, created_by=created_by, comment=comment, starts=starts, duration=duration)
    url = f"{base_url.rstrip('/')}/api/v2/silences"
    own = client is None
    http = client or httpx.Client(timeout=SILENCE_TIMEOUT)
    try:
        response = http.post(url, json=body)
    except httpx.HTTPError as err:
        raise SilenceError(f"Alertmanager at {base_url} could not be reached ({type(err).__name__})") from None
    finally:
        if own:
            http.close()
    if response.status_code != 200:
        # Alertmanager answers a bad silence with 400 and a one-line reason as a JSON string.
        raise SilenceError(f"Alertmanager refused the silence: HTTP {response.status_code} "
                           f"{response.text.strip()[:200]}")
    try:
        created = _Created.model_validate_json(response.content)
    except ValidationError:
        raise SilenceError("Alertmanager answered without a silence id") from None
    return Silence(id=created.silenceID, starts_at=starts, ends_at=starts + duration)
