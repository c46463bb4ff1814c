"""What every metric rule shares: samples indexed by name, and facts derived from them with their lines."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from collectors.parsers.metrics.promql_samples import Sample


@dataclass(frozen=True)
class Derived:
    """A fact read from metrics: name, value, the lines it rests on, and a readable excerpt."""

    name: str
    value: object
    start: int
    end: int
    text: str


Rule = Callable[["Index"], list["Derived"]]


class Index:
    """Samples grouped by metric name, dropping NaN so no rule has to think about it."""

    def __init__(self, samples: Iterable[Sample]) -> None:
        self.by_name: dict[str, list[Sample]] = defaultdict(list)
        for sample in samples:
            if not math.isnan(sample.value):
                self.by_name[sample.name].append(sample)

    def get(self, *names: str) -> list[Sample]:
        out: list[Sample] = []
        for name in names:
            out.extend(self.by_name.get(name, ()))
        return out


def label_key(sample: Sample, names: Sequence[str]) -> tuple[str, ...]:
    return tuple(sample.labels.get(n, "") for n in names)


def derive_fact(name: str, value: object, *used: Sample, text: str | None = None) -> Derived:
    start = min(s.line for s in used)
    end = max(s.last_line for s in used)
    return Derived(name, value, start, end, text or " / ".join(s.render() for s in used))


def finite(samples: Iterable[Sample]) -> list[Sample]:
    return [s for s in samples if math.isfinite(s.value)]


def highest(name: str, samples: list[Sample], as_int: bool = False) -> list[Derived]:
    samples = finite(samples)
    if not samples:
        return []
    best = max(samples, key=lambda s: s.value)
    return [derive_fact(name, int(best.value) if as_int else float(best.value), best)]
