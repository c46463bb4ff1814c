"""Training-loop output that says whether the GPU waits for its input: step timings and loader warnings.

Training scripts time each iteration and, inside it, how long fetching the next batch took. When fetching takes
most of the iteration, the GPU sits idle between batches whatever nvidia-smi sampled: the input side (storage,
decoding, augmentation) is the bottleneck. The formats are the ones the common training loops print
(collectors/catalogs/train_logs.yaml names each with its source); the last line of a format in the paste is
read, since early iterations include warm-up. PyTorch Lightning's warning that a DataLoader has few workers is
read as the configuration it reports.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from collectors.parsers.sink import FactSink
from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "train_logs.yaml"
# A line longer than this is not a step line; it is not searched (keeps the work per line bounded).
_MAX_LINE = 4_000


@dataclass(frozen=True)
class StepFormat:
    """A step line: `hint` is a cheap substring test; `pattern` has groups `time` and `data` (seconds)."""

    id: str
    hint: str
    pattern: re.Pattern[str]


@cache
def _catalog() -> tuple[tuple[StepFormat, ...], tuple[str, ...], tuple[re.Pattern[str], ...]]:
    raw = load_file(_CATALOG)
    steps = tuple(StepFormat(e["id"], e["hint"], re.compile(e["pattern"])) for e in raw["step_timings"])
    warnings = tuple(str(w) for e in raw["few_workers_warnings"] for w in e["needles"])
    suggested = tuple(re.compile(e["suggested"]) for e in raw["few_workers_warnings"] if e.get("suggested"))
    return steps, warnings, suggested


def step_formats() -> tuple[StepFormat, ...]:
    return _catalog()[0]


def few_workers_needles() -> tuple[str, ...]:
    return _catalog()[1]


def suggested_workers(lines: list[str]) -> int | None:
    """The worker count a few-workers warning suggests, from its line and the two after it (None if unsaid)."""
    text = " ".join(line[:_MAX_LINE] for line in lines[:3])
    for rx in _catalog()[2]:
        if (m := rx.search(text)) is not None:
            return int(m.group("n") or m.group("m"))
    return None


def data_wait(line: str) -> float | None:
    """Share of an iteration spent waiting for the batch, from one step line (None if it is not one)."""
    if len(line) > _MAX_LINE:
        return None
    for fmt in step_formats():
        if fmt.hint in line and (m := fmt.pattern.search(line)) is not None:
            total, data = float(m.group("time")), float(m.group("data"))
            if total <= 0 or data > total * 1.05:  # data time is part of the iteration; anything else is misread
                return None
            return round(min(data / total, 1.0), 3)
    return None


def emit(sink: FactSink, lines: list[str]) -> None:
    """train.data_wait_ratio from the last step line; train.loader_few_workers from the first warning."""
    last: tuple[float, int] | None = None
    warned: int | None = None
    needles = few_workers_needles()
    for n, line in enumerate(lines, start=1):
        if (ratio := data_wait(line)) is not None:
            last = (ratio, n)
        if warned is None and any(needle in line for needle in needles):
            warned = n
    if last is not None:
        sink.add("train.data_wait_ratio", last[0], last[1])
    if warned is not None:
        sink.add("train.loader_few_workers", True, warned)
        if (count := suggested_workers(lines[warned - 1:warned + 2])) is not None:
            sink.add("train.loader_workers_suggested", count, warned)
