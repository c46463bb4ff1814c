"""The fixed hour the query-plan tests plan over, so a plan's times are the same in every run."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from collectors.live.base import Window

UNTIL = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)
HOUR = Window.last(timedelta(hours=1), UNTIL)
