"""Stable short keys shared by the webhook and the Slack app (thread roots, outbox rows)."""

from __future__ import annotations

import hashlib


def group_id(group_key: str) -> str:
    """A short stable id for an Alertmanager group key (group keys can be kilobytes of label matchers)."""
    return hashlib.sha256(group_key.encode("utf-8")).hexdigest()[:20]
