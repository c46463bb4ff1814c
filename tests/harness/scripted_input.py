"""A terminal user who types the given lines, then ends the input (Ctrl-D)."""

from __future__ import annotations

from collections.abc import Callable, Iterable


def scripted(lines: Iterable[str]) -> Callable[[str], str]:
    feed = iter(lines)

    def input_fn(prompt: str) -> str:
        try:
            return next(feed)
        except StopIteration:
            raise EOFError from None

    return input_fn
