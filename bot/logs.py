"""Structured logs for the bot: JSON lines, redacted, no request bodies (collectors/jsonlog.py)."""

from __future__ import annotations

from collectors.jsonlog import JsonFormatter, NoBodies, body_free, configure

__all__ = ["JsonFormatter", "NoBodies", "body_free", "configure"]
