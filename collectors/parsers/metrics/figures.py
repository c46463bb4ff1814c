"""Numbers that decide a playbook, read in whatever layout a paste shows them, through the metric alias catalog.

A person pastes `gpu_util : 4.67K`, `num_requests_waiting=184`, vLLM's stats line, a scrape, a table with a header
row or a sentence ("GPU utilization is 0%"). The names come from collectors/catalogs/figures.yaml (each as its
program prints it); this module only knows layouts:
  name: value, name = value      anywhere on a line, several per line
  name value, name{labels} value at the start of a line, or a metric-style name (with `_` or `:`) or labels
  name is/was/stays ... value    a sentence: the fact's parser is `stated:figures`, a weaker standing
  header row over value rows     `|`-, comma- or space-separated, one reading per row (per GPU where a column
                                 says which GPU)
A number can carry an SI suffix (4.67K, 20.19M) and a unit (%, us, ms, s); a unit that does not fit the figure
(MiB for a utilisation) or a value out of its range (a utilisation above 100 %) is not read: never a guess.
Pure, RE2 only, one scan of the text per pattern, so any input is linear time.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache
from itertools import accumulate, islice
from typing import Any

import re2

from collectors.catalogs.figures import Alias, FigureFact, aliases, catalog, name_alternation, normalise
from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

STATED = "stated:figures"
PARSER = "figures"
_MAX_LINE = 4096
_MAX_TABLE_ROWS = 64

_MAX_PAIRS = 2000
_MAX_PROSE = 500
_MAX_HEADERS = 20
_STAT = r"(?:mean|median|avg|average|p\d{2,3})"
# A sentence's verb, then words that only hedge the amount ("stuck at", "around"); "not" is none of them, so
# "GPU util is not 0%" is not read.
_VERB = (r"(?:is|was|are|were|stays|stayed|remains|remained|sits|sat|reaches|reached|hovers|hovering|shows|showed"
         r"|of|at)"
         r"(?:\s+(?:only|just|around|about|at|stuck|always|almost|nearly|constantly|roughly|approximately|consistently)"
         r")*")
_NUMBER = r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?"
_UNIT = r"%|[A-Za-zµ]{1,8}"
# A logfmt or tracing field quotes its value (TGI's span: queue_time="161.45s").
_QUOTE = r"[\"']?"


@dataclass(frozen=True)
class Reading:
    figure: str
    value: float  # in the unit of `unit`
    unit: str  # percent, ratio, count, us, ms, s
    line: int  # 1-based
    block: int
    stated: bool
    subject: str | None


def _compile(pattern: str) -> Any:
    return re2.compile(pattern)  # google-re2 ships no type hints


_VALUE: Any = re2.compile(r"^\s*[~≈]?\s*(" + _NUMBER + r")\s*(" + _UNIT + r")?\s*$")
_CELL_UNIT: Any = re2.compile(r"^(.*?)\s*(?:[\[(]\s*([^\])]{1,12})\s*[\])]|(%))?\s*(?:\([^)]*\))?\s*$")
_GPU_CELL: Any = re2.compile(r"^((?i:gpu(?:-i)?)?)\s*(\d+)$")
_QUESTION_OR_IF: Any = re2.compile(r"(?i)(?:\?\s*$|\b(?:if|whether|unless|should|expect|expected)\b)")
_NEGATED: Any = re2.compile(r"(?i)\b(?:not|no|never|nor|isn't|wasn't|without)\b[^,;]*$")


@cache
def _names() -> Any:
    """Any catalogued name: most texts hold none, and then the pair pattern (the larger) is never compiled."""
    return _compile(r"(?im)(?:^|[^A-Za-z0-9_:])(" + name_alternation() + r")(?:[^A-Za-z0-9_]|$)")


@cache
def _pair_pattern() -> Any:
    return _compile(
        r"(?im)(?:^|[^A-Za-z0-9_:])(?:(" + _STAT + r")[ \t]+)?(" + name_alternation() + r")(\{[^}\n]{0,400}\})?"
        r"[ \t]*(?:[\[(][ \t]*([^\])\n]{1,12})[ \t]*[\])])?[ \t]*(?:" + _STAT + r"[ \t]*)?"
        r"([:=]|[ \t]" + _VERB + r"[ \t]|[ \t])[ \t]*" + _QUOTE
        + r"[~≈]?[ \t]*(" + _NUMBER + r")[ \t]*(" + _UNIT + r")?")


_VALUE_FIRST: Any = None


def _value_first() -> Any:
    """`20% GPU utilization`, `at 0 % GPU-Util`: prose that puts the percentage before the name."""
    global _VALUE_FIRST
    if _VALUE_FIRST is None:
        _VALUE_FIRST = _compile(r"(?im)(?:^|[^\w.,])[~≈]?(\d{1,3}(?:\.\d+)?)[ \t]*%[ \t]+(?:of[ \t]+)?(?:the[ \t]+)?("
                                + name_alternation() + r")(?:[^A-Za-z0-9_]|$)")
    return _VALUE_FIRST


# Printed units and what they say: a scale (SI suffix) or a unit class.
_SI = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}
# Rust's Debug of a Duration (TGI's span fields: queue_time="161.4s") prints ns, µs, ms or s.
_TIME = {"ns": "ns", "us": "us", "µs": "us", "usec": "us", "ms": "ms", "msec": "ms", "s": "s", "sec": "s", "secs": "s",
         "second": "s", "seconds": "s"}
# Memory figures are kept in MiB, the unit nvidia-smi prints them in.
_MEMORY = {"mib": 1.0, "gib": 1024.0, "kib": 1 / 1024}
# Units that name another quantity: a reading with one is not the figure's.
_OTHER = frozenset({"mib", "gib", "kib", "mb", "gb", "kb", "b", "w", "c", "mhz", "ghz", "mbps", "gbps", "tokens",
                    "tok", "min", "minutes", "h", "hours", "x"})


def read(artifact: Artifact) -> ParseResult:
    """Facts from every catalogued figure in the artifact's text; sentences give `stated:figures` facts."""
    text = artifact.content
    lines = text.split("\n")
    sink = FactSink(artifact, lines)
    readings = _readings(text, lines)
    stated_lines: set[int] = set()
    for fact, reading_set in _facts(readings):
        for e in reading_set:
            # A figure joined from several lines quotes each of them.
            joined = " / ".join(x.strip() for x in lines[e.start - 1:e.end] if x.strip())
            quoted = e.text if e.start == e.end else joined
            sink.add(fact.fact, e.value, e.start, e.end, subject=e.subject, text=quoted)
            if e.stated:
                stated_lines.add(e.start)
    result = sink.done()
    result.facts = [replace(f, parser=STATED if f.citation.start in stated_lines else PARSER)
                    for f in result.facts]
    return result


def _readings(text: str, lines: list[str]) -> list[Reading]:
    names = _names()
    if names.search(text) is None:
        return []  # no catalogued name anywhere: one scan in C, nothing built per line
    starts = [0, *accumulate(len(line) + 1 for line in lines[:-1])]
    blocks = _blocks(lines)
    out: list[Reading] = []
    read_lines: set[int] = set()
    # Budgets: a figure is read from a handful of lines, and the highest reading is what a fact keeps; past these
    # many candidates a paste is a long log or garbage, and reading on would only cost time.
    for m in islice(_pair_pattern().finditer(text), _MAX_PAIRS):
        index = bisect.bisect_right(starts, m.start(2)) - 1
        reading = _pair(m, lines[index], m.start(2) - starts[index], index, blocks[index])
        if reading is not None:
            out.append(reading)
            read_lines.add(index)
    for m in islice(_value_first().finditer(text), _MAX_PROSE):
        index = bisect.bisect_right(starts, m.start(2)) - 1
        if index in read_lines:
            continue
        reading = _stated_value_first(m, lines[index], m.start(1) - starts[index], index, blocks[index])
        if reading is not None:
            out.append(reading)
            read_lines.add(index)
    headers: list[int] = []
    for m in islice(names.finditer(text), _MAX_HEADERS * 20):
        index = bisect.bisect_right(starts, m.start(1)) - 1
        if index not in read_lines and (not headers or headers[-1] != index):
            headers.append(index)
            if len(headers) >= _MAX_HEADERS:
                break
    for index in headers:
        out.extend(_table(lines, index, blocks))
        out.extend(_labelled_row(lines, index, blocks[index]))
    return out


# `nvidia-smi --query-gpu=<fields> --format=csv,noheader` prints rows with no header: the command names the columns
# (nvidia-smi --help-query-gpu, drivers 418-580; `nounits` drops the units, leaving each field's own).
_QUERY_GPU: Any = re2.compile(r"--query-gpu[= ]['\"]?([A-Za-z0-9_.,]+)")


def _query_fields(line: str) -> list[str] | None:
    """The columns a `--query-gpu ... --format=csv,noheader` command line names, as the header its rows lack."""
    m = _QUERY_GPU.search(line) if "noheader" in line else None
    return [f for f in m.group(1).split(",") if f] if m else None


def _labelled_row(lines: list[str], index: int, block: int) -> Iterator[Reading]:
    """A table row whose first cell names the figure and whose other cells are its statistics (genai-perf's
    `│ Time To First Token (ms) │ 16.26 │ 12.39 │ ... │` under avg, min, max, p99 ...): each is a reading, but for
    the extremes (min, max, std) when a header names the columns: one request's worst is no tail."""
    line = lines[index][:_MAX_LINE]
    if "|" not in line and "│" not in line:
        return
    cells = [c for c in _split_cells(line) if c]
    if len(cells) < 2:
        return
    m = _CELL_UNIT.match(cells[0])
    name, unit = (m.group(1), m.group(2) or m.group(3)) if m else (cells[0], None)
    entry = _alias(name, line)
    values = [_VALUE.match(c) for c in cells[1:]]
    if entry is None or not all(values):
        return  # a row of words is no row of figures
    header = _stat_header(lines, index, len(cells))
    for n, v in enumerate(values, start=1):
        if header is not None and header[n].lower() in _EXTREMES:
            continue
        reading = _reading(entry, v.group(1), v.group(2) or unit, index, block, False, None)
        if reading is not None:
            yield reading


_EXTREMES = frozenset({"min", "max", "std", "stddev", "minimum", "maximum"})
_STAT_CELL: Any = re2.compile(r"(?i)^(?:avg|average|mean|median|min|max|std|stddev|p\d{1,3}(?:\.\d+)?)$")


def _stat_header(lines: list[str], index: int, width: int) -> list[str] | None:
    """The header over a labelled row: the nearest line above with as many cells, naming statistics."""
    for above in range(index - 1, max(-1, index - 8), -1):
        cells = [c for c in _split_cells(lines[above][:_MAX_LINE]) if c]
        if len(cells) == width and sum(bool(_STAT_CELL.match(c)) for c in cells[1:]) >= 2:
            return cells
    return None


def _blocks(lines: list[str]) -> list[int]:
    """A block number per line: a heading or a blank line starts a new one (a ratio joins one block's figures)."""
    out: list[int] = []
    block = 0
    for line in lines:
        first = line.lstrip()[:1]
        if not first or (first in "#=-" and _starts_block(line)):
            block += 1
        out.append(block)
    return out


def _starts_block(line: str) -> bool:
    """A blank line, a markdown heading (not a scrape's `# HELP` / `# TYPE` comment) or a rule of = or -."""
    stripped = line.strip()
    if not stripped:
        return True
    if stripped[0] == "#":
        rest = stripped.lstrip("#")
        words = rest.split(None, 1)
        return len(stripped) - len(rest) <= 6 and rest[:1] in (" ", "\t") and (
            not words or words[0] not in ("HELP", "TYPE", "UNIT", "EOF"))
    return len(stripped) >= 3 and (set(stripped) <= {"="} or set(stripped) <= {"-"})


def _alias(name: str, line: str) -> Alias | None:
    for entry in aliases().get(normalise(name), ()):
        if not entry.context or _has_word(line, entry.context):
            return entry
    return None


def _has_word(line: str, words: tuple[str, ...]) -> bool:
    """One of `words` on the line as a word of its own (case ignored)."""
    lower = line.lower()
    for word in words:
        w = word.lower()
        at = lower.find(w)
        while at >= 0:
            before = lower[at - 1] if at else " "
            after = lower[at + len(w)] if at + len(w) < len(lower) else " "
            if not before.isalnum() and not after.isalnum():
                return True
            at = lower.find(w, at + 1)
    return False


def _pair(m: Any, line: str, col: int, index: int, block: int) -> Reading | None:
    name, labels, bracket_unit, sep, number, unit = m.group(2, 3, 4, 5, 6, 7)
    entry = _alias(name, line[:_MAX_LINE])
    if entry is None:
        return None
    stated = sep.strip() not in (":", "=", "")
    if stated and (_unsure(line, col, col + m.end() - m.start(2)) or (entry.unit != "count" and not _known(unit))):
        # A sentence says its unit ("is 0%", "was 60 s"); a bare number after "is" may be anything.
        return None
    if sep.strip() == "" and not stated:
        # `name value` is a layout only where the name starts the line or is a metric name: in prose "GPU util 0"
        # may be anything ("why is GPU util 0 ...").
        at_start = not line[:col].strip(" \t>*#|`-")
        if not (at_start or labels or "_" in name or ":" in name):
            return None
    subject = _label_subject(labels or "")
    return _reading(entry, number, unit or bracket_unit, index, block, stated, subject)


def _stated_value_first(m: Any, line: str, col: int, index: int, block: int) -> Reading | None:
    entry = _alias(m.group(2), line[:_MAX_LINE])
    if entry is None or entry.unit not in ("percent", "ratio") or _unsure(line, col, col + m.end(2) - m.start(1)):
        return None
    return _reading(entry, m.group(1), "%", index, block, True, None)


def _known(unit: str | None) -> bool:
    return bool(unit) and (unit == "%" or unit in _SI or unit in _TIME or (unit or "").lower() in _TIME)


def _unsure(line: str, start: int, end: int) -> bool:
    """A question, a condition or a negation around a stated figure: not an observation."""
    before = line[max(0, start - 80):start]
    after = line[end:end + 200].split(".")[0]
    return bool(_QUESTION_OR_IF.search(before + " " + after) or _NEGATED.search(before[-24:]))


def _label_subject(labels: str) -> str | None:
    m = re2.search(r'(?:^|[{,\s])(?:gpu|GPU)="?(\d+)"?', labels)
    return f"gpu {m.group(1)}" if m else None


def _reading(entry: Alias, number: str, unit: str | None, index: int, block: int, stated: bool,
             subject: str | None) -> Reading | None:
    try:
        value = float(number.replace(",", ""))
    except ValueError:
        return None
    kind: str = entry.unit
    if unit:
        u = unit.strip()
        if u in _SI:
            value *= _SI[u]
        elif u == "%":
            kind = "percent"
        elif u.lower() in _TIME or u in _TIME:
            if entry.unit not in ("us", "ms", "s"):
                return None
            kind = _TIME.get(u, _TIME.get(u.lower(), kind))
            if kind == "ns":
                value, kind = value / 1000, "us"
        elif entry.unit == "tokens_per_s" and u.lower().split("/")[0] in ("tokens", "token", "tok"):
            pass  # "0.4 tokens/s", "(token/s)": the figure's own unit
        elif entry.unit == "mib" and u.lower() in _MEMORY:
            value *= _MEMORY[u.lower()]  # nvidia-smi prints MiB; a person may write GiB
        elif u.lower() in _OTHER:
            return None
        # any other word ("reqs", "and") says nothing about the number
    if kind != entry.unit and {kind, entry.unit} not in ({"percent", "ratio"},) and not (
            kind in ("us", "ms", "s") and entry.unit in ("us", "ms", "s")):
        return None
    if kind == "ratio" and 1 < value <= 100:
        kind = "percent"  # a 0-1 gauge some recording rule or person printed in percent
    if value < 0 or (kind == "percent" and value > 100) or (kind == "ratio" and value > 1):
        return None
    return Reading(entry.figure, value, kind, index + 1, block, stated, subject)


def _split_cells(line: str) -> list[str]:
    # rich's box tables (genai-perf, vllm bench's successors) draw their columns with │ and ┃.
    line = line.replace("`", "").replace("│", "|").replace("┃", "|").strip()
    if "|" in line:
        cells = line.strip("|").split("|")
    elif "," in line:
        cells = line.split(",")
    else:
        # A run of dashes standing alone between wide gaps is a cell that holds no value (reportseff's and seff's
        # "---"), not a separator: it keeps the row's cells under their header.
        line = _EMPTY_CELL.sub(r"\1-\2", line)
        cells = re2.split(r"\t|\s*-{2,}\s*|\s{2,}", line)
    return [c.strip() for c in cells]


_EMPTY_CELL: Any = re2.compile(r"(^|\s{2,})-{2,}(\s{2,}|$)")


def _table(lines: list[str], index: int, blocks: list[int]) -> Iterator[Reading]:
    header = _query_fields(lines[index][:_MAX_LINE]) or _split_cells(lines[index][:_MAX_LINE].lstrip("#"))
    if len(header) < 2:
        return
    columns: dict[int, tuple[Alias, str | None]] = {}
    gpu_column: int | None = None
    for n, cell in enumerate(header):
        m = _CELL_UNIT.match(cell)
        name, unit = (m.group(1), m.group(2) or m.group(3)) if m else (cell, None)
        if normalise(name) in ("gpu", "index", "idx", "gpuid", "gpuindex", "entity"):
            gpu_column = n
            continue
        entry = _alias(name, lines[index])
        if entry is not None:
            columns[n] = (entry, unit)
    if not columns:
        return
    for row_index in range(index + 1, min(len(lines), index + 1 + _MAX_TABLE_ROWS)):
        row = lines[row_index][:_MAX_LINE]
        if not row.strip(" |-=+:`\t"):
            if row.strip():
                continue  # a rule under the header
            return
        cells = _split_cells(row)
        if len(cells) != len(header):
            if row_index == index + 1 and not any(c.isdigit() for c in row):
                continue  # a second header row of units or ids (dcgmi dmon's "Id", nvidia-smi dmon's "# Idx W C")
            return
        subject = None
        if gpu_column is not None:
            m = _GPU_CELL.match(cells[gpu_column])
            # A MIG instance (dcgmi's "GPU-I 1") is not the whole GPU of the same number.
            subject = f"{(m.group(1) or 'gpu').lower()} {m.group(2)}" if m else None
        for n, (entry, unit) in columns.items():
            m = _VALUE.match(cells[n])
            if m is None:
                continue
            reading = _reading(entry, m.group(1), m.group(2) or unit, row_index, blocks[row_index], False, subject)
            if reading is not None:
                yield reading


_TO_SECONDS = {"us": 1e-6, "ms": 1e-3, "s": 1.0}


def _in_seconds(reading: Reading) -> float:
    """A time in seconds; any other reading (a count, a rate) as it is."""
    return reading.value * _TO_SECONDS[reading.unit] if reading.unit in _TO_SECONDS else reading.value


@dataclass(frozen=True)
class Emitted:
    value: object
    start: int
    end: int
    stated: bool
    subject: str | None = None
    text: str | None = None  # None: the cited line itself


def _convert(reading: Reading, unit: str) -> float | None:
    if unit == reading.unit:
        return reading.value
    if unit == "percent" and reading.unit == "ratio":
        return reading.value * 100
    if unit == "ratio" and reading.unit == "percent":
        return reading.value / 100
    if unit in _TO_SECONDS and reading.unit in _TO_SECONDS:
        return reading.value * _TO_SECONDS[reading.unit] / _TO_SECONDS[unit]
    return None


def _facts(readings: list[Reading]) -> Iterator[tuple[FigureFact, list[Emitted]]]:
    by_figure: dict[str, list[Reading]] = {}
    for r in readings:
        by_figure.setdefault(r.figure, []).append(r)
    for fact in catalog().facts:
        out: list[Emitted] = []
        if fact.figure is not None:
            for r in by_figure.get(fact.figure, ()):
                value = _convert(r, fact.unit)
                if value is not None:
                    shown = int(value) if fact.unit == "count" else round(value, 4)
                    out.append(Emitted(shown, r.line, r.line, r.stated, r.subject))
        elif fact.ratio is not None:
            num, den = by_figure.get(fact.ratio[0], []), by_figure.get(fact.ratio[1], [])
            if fact.same_line or fact.without or fact.each_line:
                num, den = _on_lines(num, den, by_figure.get(fact.without or "", []),
                                     fact.same_line or fact.each_line)
            out = (_line_ratios(num, den) if fact.each_line
                   else _ratios(num, den, bounded=fact.unit == "ratio"))
        elif fact.share is not None:
            out = _ratios(by_figure.get(fact.share[0], []), by_figure.get(fact.share[1], []), share=True)
        if out:
            yield fact, out


def _on_lines(num: list[Reading], den: list[Reading], without: list[Reading],
              same_line: bool) -> tuple[list[Reading], list[Reading]]:
    """The readings of the lines a ratio may use: with `same_line`, lines holding both figures, the second above
    zero (a window whose requests all finished times no request); never a line where the `without` figure reads
    above zero."""
    left_out = {r.line for r in without if r.value > 0}
    keep = ({r.line for r in num} & {r.line for r in den if r.value > 0}) if same_line else {r.line for r in num + den}
    keep -= left_out
    return [r for r in num if r.line in keep], [r for r in den if r.line in keep]


def _line_ratios(numerators: list[Reading], denominators: list[Reading]) -> list[Emitted]:
    """num / den on each line that holds both (one GPU's row): a share of one thing, never above 1."""
    den = {r.line: r for r in denominators}
    out: list[Emitted] = []
    for r in numerators:
        d = den.get(r.line)
        if d is not None and d.value > 0 and r.value <= d.value:
            out.append(Emitted(round(r.value / d.value, 4), r.line, r.line, r.stated or d.stated, r.subject))
    return out


def _ratios(numerators: list[Reading], denominators: list[Reading], share: bool = False,
            bounded: bool = True) -> list[Emitted]:
    """num / den per block (summed over the block's readings, as a scrape's label sets add up); with `share`,
    num / (num + den). A `bounded` ratio (a share of time) above 1 is a misreading and is dropped; a rate per
    request (tokens per second per running request) is not bounded."""
    out: list[Emitted] = []
    blocks = sorted({r.block for r in numerators} & {r.block for r in denominators})
    for block in blocks:
        num = [r for r in numerators if r.block == block]
        den = [r for r in denominators if r.block == block]
        top = sum(_in_seconds(r) for r in num)
        bottom = sum(_in_seconds(r) for r in den) + (top if share else 0.0)
        if bottom <= 0 or ((share or bounded) and top > bottom):
            continue
        lines = [r.line for r in num + den]
        out.append(Emitted(round(top / bottom, 4), min(lines), max(lines), any(r.stated for r in num + den)))
    return out
