"""Normalising messy pasted text: colours, CRLF, log prefixes."""

from __future__ import annotations

import re
from collections.abc import Sequence

from collectors.lazy_regex import LazyPattern

# The escape byte itself, or as rsyslog writes it: its `$EscapeControlCharactersOnReceive` (on by default, rsyslog
# 3.x-8.x, runtime/parser.c) turns each control character into `#` and three octal digits, so a coloured line that
# went through syslog reads `#033[2m#033[33m(raylet)#033[0m`.
_ANSI = LazyPattern(r"(?:\x1b|#033)\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")

# Prefixes seen in front of kernel and service log messages, outermost first:
#   syslog:        "Nov 22 06:01:02 gpu-node-2 kernel: "
#   journalctl:    "Nov 22 06:01:02 gpu-node-2 kernel: " / ISO "2026-11-22T06:01:02+0000 host kernel: "
#   dmesg:         "[12345.678901] "      dmesg -T: "[Sun Nov 22 06:01:02 2026] "
#   /dev/kmsg:     "4,1234,5678901,-;"    collectors: "host: kern: warning: [ts]: "
_PREFIXES = [
    re.compile(r"^(?:<\d+>)?[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \S+ [\w\-./]+(?:\[\d+\])?: "),
    re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? \S+ [\w\-./]+(?:\[\d+\])?: "),
    re.compile(r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? "),
    re.compile(r"^\S+: (?:kern|kernel): (?:emerg|alert|crit|err|warning|warn|notice|info|debug)\s*: "),
    re.compile(r"^\d+,\d+,\d+,[-c+]*;"),
    re.compile(r"^\[ *\d+\.\d+\]:? ?"),
    re.compile(r"^\[[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4}\]:? ?"),
    re.compile(r"^(?:kern|kernel) *:(?:emerg|alert|crit|err|warn|warning|notice|info|debug) *: "),
]


# A table copied out of a rendered web page (an old issue tracker, a forum) keeps its column padding as HTML
# non-breaking spaces, written out as the entity when the page's source was copied.
_NBSP = LazyPattern(r"&nbsp;|&#160;|&#xa0;", re.IGNORECASE)


def normalise(text: str) -> str:
    """Strip ANSI colours and carriage returns, and read spelt-out non-breaking spaces as spaces; keep line
    numbering intact."""
    text = _ANSI.sub("", text)
    if "&" in text:
        text = _NBSP.sub(" ", text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_prefixes(line: str, extra: Sequence[re.Pattern[str]] = ()) -> str:
    """Remove any stack of timestamp/host/facility prefixes in front of a log message; a reader's `extra` prefixes
    are tried each time the common ones are all off."""
    while True:
        before = common = line
        while (line := _strip_once(line, _PREFIXES)) != common:
            common = line
        line = _strip_once(line, extra)
        if line == before:
            return line


def _strip_once(line: str, prefixes: Sequence[re.Pattern[str]]) -> str:
    for rx in prefixes:
        m = rx.match(line)
        if m and m.end() > 0:
            line = line[m.end():]
    return line


# An excerpt keeps the cited line whole up to this length: a reader must see the words a rule matched, so the
# renderers (bot/render/evidence.py) shorten around those words, never here at a fixed column.
EXCERPT_LIMIT = 2000
_CONTEXT = 200  # characters kept either side of the matched words when a line is longer than that
_WORD_SPLIT = LazyPattern(r"[\s_\-/]+")


def find_spans(text: str, value: object, most: int = 4) -> list[tuple[int, int]]:
    """Where a fact's value shows in the line it was read from, as (start, end) offsets, in order.

    Values are written as the source wrote them or normalised (`untolerated-taint` for "untolerated taint",
    79 for "Xid ... 79,"), so a value is looked for as written, then word by word with any separator between.
    A boolean names no words; a value not in the line gives no span (the line is then shown from its start)."""
    items = value if isinstance(value, list) else [value]
    found: list[tuple[int, int]] = []
    lowered = text.lower()
    for item in items:
        if isinstance(item, bool) or item is None:
            continue
        word = str(item).strip()
        if not word:
            continue
        if isinstance(item, (int, float)):
            m = re.search(rf"(?<![\w.]){re.escape(word)}(?![\w])", text)
            span = m.span() if m else None
        else:
            at = lowered.find(word.lower())
            span = (at, at + len(word)) if at >= 0 else None
            if span is None and len(parts := [p for p in _WORD_SPLIT.split(word) if p]) > 1:
                # Escaped words only, a bounded line: no backtracking to speak of.
                m = re.search(r"[\s_\-/]*".join(re.escape(p) for p in parts), text, re.IGNORECASE)
                span = m.span() if m else None
        if span is not None and span not in found:
            found.append(span)
    return sorted(found)[:most]


def excerpt(line: str, limit: int = EXCERPT_LIMIT, value: object = None) -> str:
    """The cited line, stripped; a line longer than `limit` keeps the words the value names with context."""
    line = line.strip()
    if len(line) <= limit:
        return line
    # Only words are centred on: a number (a rank, a count) matches too many places in a long line to say which.
    words = [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str)]
    spans = find_spans(line, words)
    start = max(0, spans[0][0] - _CONTEXT) if spans else 0
    end = min(len(line), max(start + limit - 2, spans[-1][1] + _CONTEXT if spans else 0))
    return ("…" if start else "") + line[start:end] + ("…" if end < len(line) else "")
