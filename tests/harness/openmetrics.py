"""Synthetic metric history as OpenMetrics text, for `promtool tsdb create-blocks-from openmetrics`.

What promtool's backfill needs, and this writer guarantees: timestamps in seconds; every sample of a
family contiguous; each series in time order; counters declared `counter` with `_total` samples; the
text ends with `# EOF`. The history ends at `end` (pass "now"), because an instant query only sees a
series within 5 minutes after its last sample: tests query at `end` explicitly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from collectors.live.base import Window
from collectors.parsers.metrics.promql_samples import escape, format_number

# A constant, or a function of seconds since the start of the history.
Value = float | Callable[[float], float]


def _number(value: float) -> str:
    """Every digit (the parser's format_number keeps 6): a history backfilled for a test is read back exactly."""
    if math.isfinite(value):
        return str(int(value)) if value == int(value) else repr(value)
    return format_number(value)


def _labels(labels: Mapping[str, str]) -> str:
    inner = ",".join(f'{k}="{escape(v)}"' for k, v in labels.items())
    return f"{{{inner}}}" if inner else ""


def _at(value: Value, offset: float) -> float:
    return value(offset) if callable(value) else float(value)


def ramp(start: float, stop: float, span: float) -> Callable[[float], float]:
    """A value rising linearly from `start` to `stop` over `span` seconds."""
    return lambda t: start + (stop - start) * min(1.0, t / span)


def step_at(before: float, after: float, at: float) -> Callable[[float], float]:
    """`before` until `at` seconds into the history, then `after` (a gauge that changed once)."""
    return lambda t: before if t < at else after


def per_second(rate: float) -> Callable[[float], float]:
    """A counter growing at a constant `rate` per second from zero."""
    return lambda t: rate * t


@dataclass
class _Family:
    kind: str
    lines: list[str] = field(default_factory=list)


@dataclass
class History:
    """Metric families sampled every `step` seconds from `end - span` to `end` inclusive."""

    end: int
    span: int = 3600
    step: int = 30
    _families: dict[str, _Family] = field(default_factory=dict)

    @property
    def start(self) -> int:
        return self.end - self.span

    @property
    def window(self) -> Window:
        """The window a triage over exactly this history would use."""
        until = datetime.fromtimestamp(self.end, UTC)
        return Window(since=until - timedelta(seconds=self.span), until=until)

    def _times(self) -> list[int]:
        return list(range(self.start, self.end + 1, self.step))

    def _family(self, name: str, kind: str) -> _Family:
        family = self._families.setdefault(name, _Family(kind))
        if family.kind != kind:
            raise ValueError(f"{name} declared as {family.kind}, now as {kind}")
        return family

    def _series(self, family: _Family, sample: str, labels: Mapping[str, str], value: Value) -> None:
        text = _labels(labels)
        family.lines.extend(f"{sample}{text} {_number(_at(value, t - self.start))} {t}" for t in self._times())

    def gauge(self, name: str, labels: Mapping[str, str], value: Value) -> History:
        self._series(self._family(name, "gauge"), name, labels, value)
        return self

    def counter(self, name: str, labels: Mapping[str, str], value: Value) -> History:
        """`name` without `_total`; `value` is the cumulative count."""
        if name.endswith("_total"):
            raise ValueError(f"counter family {name} must be named without _total")
        self._series(self._family(name, "counter"), name + "_total", labels, value)
        return self

    def histogram(self, name: str, labels: Mapping[str, str], buckets: Mapping[float, Value],
                  total: Value | None = None) -> History:
        """Cumulative bucket counts by upper bound; `+Inf` and `_count` repeat the largest bucket."""
        family = self._family(name, "histogram")
        bounds = sorted(buckets)
        for bound in bounds:
            self._series(family, f"{name}_bucket", {**labels, "le": _number(bound)}, buckets[bound])
        last = buckets[bounds[-1]]
        self._series(family, f"{name}_bucket", {**labels, "le": "+Inf"}, last)
        self._series(family, f"{name}_count", labels, last)
        self._series(family, f"{name}_sum", labels, total if total is not None else 0.0)
        return self

    def render(self) -> str:
        out: list[str] = []
        for name, family in self._families.items():
            out.append(f"# TYPE {name} {family.kind}")
            out.extend(family.lines)
        out.append("# EOF")
        return "\n".join(out) + "\n"
