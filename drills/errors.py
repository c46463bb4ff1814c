"""The one error a drill step raises for a trainee's mistake; its message says what was expected."""

from __future__ import annotations


class DrillError(ValueError):
    """An unknown source or hypothesis, or a step on a finished drill. Surfaces show the message as is."""
