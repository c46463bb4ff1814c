"""The command line's one-line errors. Kept apart from the commands so that `main` can catch them without
importing what the commands need."""

from __future__ import annotations


class UsageError(Exception):
    """A mistake by the user: reported in one line, exit code 2."""


class LiveUsageError(Exception):
    """A user mistake in a live command; the CLI prints it in one line and exits 2."""


class OutputError(Exception):
    """The report cannot be written as asked (for example a misconfigured model for --summary)."""
