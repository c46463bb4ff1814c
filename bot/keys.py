"""Stable short keys shared by the webhook and the Slack app (thread roots, outbox rows, incidents)."""

from __future__ import annotations

import hashlib

EPISODE_PREFIX = "alert-episode:"


def group_id(group_key: str) -> str:
    """A short stable id for an Alertmanager group key (group keys can be kilobytes of label matchers)."""
    return hashlib.sha256(group_key.encode("utf-8")).hexdigest()[:20]


def alert_root_key(group_key: str, episode: int) -> str:
    """The outbox key of an alert group's root message in firing episode `episode` (1, 2, ...)."""
    gid = group_id(group_key)
    # The first episode keeps the key it had before episodes existed, so rows queued by an older bot still match.
    return f"alert:{gid}:root" if episode <= 1 else f"alert:{gid}:e{episode}:root"


# incidents.key is VARCHAR(300); a group key can be 4 KiB (group_by over long label values).
_INCIDENT_KEY_ROOM = 300


def episode_incident_key(group_key: str, episode: int) -> str:
    """The incident of one firing episode: "alert:<groupKey>" for the first, "alert-episode:<id>:<n>" after, and
    for a first episode whose group key would not fit the column."""
    if episode <= 1 and len(group_key) + len("alert:") <= _INCIDENT_KEY_ROOM:
        return f"alert:{group_key}"
    return f"{EPISODE_PREFIX}{group_id(group_key)}:{max(episode, 1)}"


def incident_root_key(incident_key: str) -> str:
    """The outbox key of the message an incident's thread hangs off."""
    if incident_key.startswith(EPISODE_PREFIX):
        gid, _, episode = incident_key.removeprefix(EPISODE_PREFIX).rpartition(":")
        return f"alert:{gid}:root" if episode == "1" else f"alert:{gid}:e{episode}:root"
    if incident_key.startswith("alert:"):
        return alert_root_key(incident_key.removeprefix("alert:"), 1)
    return f"{incident_key}:root"
