"""Building PromQL safely: label matchers from untrusted values, durations, and range-query steps.

Label values come from the cluster (pod, node and namespace names) and from users (a service name), so
every value is escaped twice over where needed: once for the RE2 regex of an `=~` matcher, then for the
double-quoted PromQL string that holds it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

# Prometheus rejects a range query whose (end - start) / step exceeds this many points per series.
MAX_POINTS = 11_000
# A trend needs a few hundred points at most; more only makes the artifact larger.
TARGET_POINTS = 300
MIN_STEP = 15  # seconds: a common scrape interval, below which steps repeat the same sample
# Steps people read easily; a longer window rounds up to whole days.
_NICE_STEPS = (15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)

# RE2 metacharacters; RE2 rejects escapes of letters, digits and spaces, so nothing else is escaped.
_REGEX_SPECIAL = frozenset(r"\.+*?()|[]{}^$")
# Escapes a Go-style PromQL string literal understands.
_STRING_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape_string(value: str) -> str:
    """`value` as the inside of a double-quoted PromQL string (without the quotes)."""
    out: list[str] = []
    for char in value:
        if char in _STRING_ESCAPES:
            out.append(_STRING_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")  # other control characters, which a string may not hold raw
        else:
            out.append(char)
    return "".join(out)


def escape_regex(value: str) -> str:
    """`value` as an RE2 pattern that matches exactly that text (before string escaping)."""
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in value)


def equals(label: str, value: str) -> str:
    return f'{label}="{escape_string(value)}"'


def matches(label: str, pattern: str) -> str:
    """`label=~"pattern"` for an already-built RE2 pattern (string escaping is applied here)."""
    return f'{label}=~"{escape_string(pattern)}"'


def any_of(label: str, values: Iterable[str]) -> str:
    """A matcher for any of the exact values: `=` for one, an escaped alternation for several."""
    unique = sorted(set(values))
    if not unique:
        raise ValueError(f"no values for label {label}")
    if len(unique) == 1:
        return equals(label, unique[0])
    return matches(label, "|".join(escape_regex(v) for v in unique))


def selector(metric: str, *matchers: str) -> str:
    """`metric{m1,m2}`; an empty metric gives a bare `{...}` selector (for `__name__=~` matchers)."""
    return f"{metric}{{{','.join(matchers)}}}"


def duration(seconds: int) -> str:
    """A PromQL duration in the largest unit that divides it exactly, e.g. 21600 -> `6h`."""
    if seconds <= 0:
        raise ValueError(f"duration must be positive, got {seconds}")
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def points(seconds: float, step: int) -> int:
    """How many points a range query over `seconds` with `step` returns per series."""
    return math.floor(seconds / step) + 1


def range_step(seconds: float, target: int = TARGET_POINTS) -> int:
    """A step (seconds) giving at most `target` points per series, never more than MAX_POINTS."""
    target = max(2, min(target, MAX_POINTS))
    needed = max(MIN_STEP, math.ceil(seconds / (target - 1)))
    step = next((s for s in _NICE_STEPS if s >= needed), math.ceil(needed / 86400) * 86400)
    return step
