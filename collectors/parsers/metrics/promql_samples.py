"""A small, forgiving parser for the Prometheus text and OpenMetrics exposition formats.

Only the standard library: prometheus_client is not a dependency, and a pasted scrape is often
cut, indented or mixed with shell prompts, so bad lines are skipped and counted, never raised.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from collectors.lazy_regex import LazyPattern

_NAME = LazyPattern(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
# One `name="value"` pair; Prometheus 3 also allows quoted (UTF-8) label names.
_PAIR = LazyPattern(r'\s*([a-zA-Z_][a-zA-Z0-9_.]*|"(?:[^"\\]|\\.)*")\s*=\s*"((?:[^"\\]|\\.)*)"\s*')
# A quoted metric name inside the braces (Prometheus 3 UTF-8 names): {"my.metric", a="b"}.
_QUOTED = LazyPattern(r'\s*"((?:[^"\\]|\\.)*)"\s*')
_ESCAPE = LazyPattern(r"\\(.)")
_NUMBER = LazyPattern(r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[Ii]nf(?:inity)?|NaN|nan)")
_ESCAPES = {"n": "\n", "\\": "\\", '"': '"'}


@dataclass(frozen=True)
class Sample:
    """One sample: a metric name, its labels and value, and the 1-based lines it was read from."""

    name: str
    labels: Mapping[str, str]
    value: float
    timestamp: float | None = None
    line: int = 0
    end: int = 0  # last line of the evidence when it spans several; 0 means `line`

    @property
    def last_line(self) -> int:
        return self.end or self.line

    def render(self) -> str:
        """The sample as exposition text, for excerpts."""
        inner = ",".join(f'{k}="{escape(v)}"' for k, v in self.labels.items())
        return f"{self.name}{{{inner}}} {format_number(self.value)}" if inner else \
            f"{self.name} {format_number(self.value)}"


@dataclass
class Exposition:
    """What one exposition text held."""

    samples: list[Sample] = field(default_factory=list)
    types: dict[str, str] = field(default_factory=dict)  # metric family -> counter, gauge, histogram ...
    bad_lines: list[int] = field(default_factory=list)
    comment_lines: int = 0  # HELP/TYPE/UNIT lines
    saw_eof: bool = False


def escape(label_value: str) -> str:
    """A label value as exposition text writes it."""
    return label_value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def format_number(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return f"{value:.6g}"


def parse_number(token: str) -> float | None:
    """A sample value or timestamp as Prometheus writes it (NaN, +Inf, exponents); None if not a number."""
    if not _NUMBER.fullmatch(token):
        return None
    try:
        return float(token)
    except ValueError:
        return None


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), "\\" + m.group(1)), text)


def _labels(line: str, pos: int) -> tuple[str | None, dict[str, str], int] | None:
    """Parse `{...}` starting at line[pos] == "{"; returns (quoted name, labels, position after `}`)."""
    labels: dict[str, str] = {}
    quoted_name: str | None = None
    pos += 1
    while True:
        while pos < len(line) and line[pos] in " \t":
            pos += 1
        if pos >= len(line):
            return None
        if line[pos] == "}":
            return quoted_name, labels, pos + 1
        pair = _PAIR.match(line, pos)
        if pair:
            key = pair.group(1)
            labels[_unescape(key[1:-1]) if key.startswith('"') else key] = _unescape(pair.group(2))
            pos = pair.end()
        else:
            name = _QUOTED.match(line, pos)
            if name is None or quoted_name is not None:
                return None
            quoted_name = _unescape(name.group(1))
            pos = name.end()
        if pos < len(line) and line[pos] == ",":
            pos += 1
        elif pos < len(line) and line[pos] != "}":
            return None


def _comment(line: str, out: Exposition) -> None:
    parts = line.split(None, 3)
    if len(parts) >= 2 and parts[1] == "EOF":
        out.saw_eof = True
    elif len(parts) >= 3 and parts[1] in ("HELP", "TYPE", "UNIT"):
        out.comment_lines += 1
        if parts[1] == "TYPE" and len(parts) == 4:
            out.types[parts[2]] = parts[3].strip()


def parse_sample(line: str, lineno: int = 0) -> Sample | None:
    """One sample line, or None when the line is not a sample."""
    line = line.strip()
    match = _NAME.match(line)
    name = match.group(0) if match else ""
    pos = match.end() if match else 0
    labels: dict[str, str] = {}
    if pos < len(line) and line[pos] == "{":
        parsed = _labels(line, pos)
        if parsed is None:
            return None
        quoted, labels, pos = parsed
        name = name or (quoted or "")
    if not name or pos >= len(line) or line[pos] not in " \t":
        return None
    rest = line[pos:].split(" # ", 1)[0].split()  # drop an OpenMetrics exemplar
    if not rest or len(rest) > 2:
        return None
    value = parse_number(rest[0])
    stamp = parse_number(rest[1]) if len(rest) == 2 else None
    if value is None or (len(rest) == 2 and stamp is None):
        return None
    return Sample(name, labels, value, stamp, lineno)


def parse_exposition(lines: Sequence[str]) -> Exposition:
    """Every sample in exposition text; lines are 1-based in the result. Stops at `# EOF`."""
    out = Exposition()
    for index, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("#"):
            _comment(line, out)
            if out.saw_eof:
                break
            continue
        sample = parse_sample(line, index)
        if sample is None:
            out.bad_lines.append(index)
        else:
            out.samples.append(sample)
    return out
