"""An incident's key always fits its column and leads back to the root of its alert group's episode."""

from __future__ import annotations

import pytest

from bot.keys import alert_root_key, episode_incident_key, incident_root_key

SHORT = '{}:{alertname="KubePodCrashLooping", namespace="shop"}'
LONG = '{}/{}:{namespace="' + "x" * 1000 + '", pod="trainer-0"}'  # group_by over long label values


@pytest.mark.parametrize("group_key", [SHORT, LONG])
@pytest.mark.parametrize("episode", [1, 2, 7])
def test_an_incident_leads_back_to_its_root(group_key: str, episode: int) -> None:
    key = episode_incident_key(group_key, episode)
    assert len(key) <= 300  # incidents.key is VARCHAR(300): PostgreSQL refuses longer
    assert incident_root_key(key) == alert_root_key(group_key, episode)


def test_short_first_episodes_keep_their_old_key() -> None:
    # Rows stored by an older bot keep matching.
    assert episode_incident_key(SHORT, 1) == f"alert:{SHORT}"
    assert episode_incident_key(LONG, 1).startswith("alert-episode:")
