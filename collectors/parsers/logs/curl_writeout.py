"""curl's write-out lines read through the -w template the paste itself shows.

`curl -w '<template>'` prints the template once per transfer with each %{variable} replaced (curl
src/tool_writeout.c; docs/cmdline-opts/write-out.md). A paste that shows the command and then its output says what
every printed number is, even a bare number a line (`-w %{time_namelookup}\\n` in a loop). The template is turned
into an RE2 pattern for the lines after the command; the name-lookup time (time_namelookup, seconds) gives
dns.lookup_seconds, the slowest one read.
"""

from __future__ import annotations

import re
from typing import Any

import re2

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink

_MAX_LINE = 4096
_MAX_TEMPLATE_LINES = 8
# -w / --write-out and its argument: single- or double-quoted, or one shell word. "@file" templates are not shown.
_OPTION: Any = re2.compile(r"""(?:^|[\s`])(?:-w|--write-out)(?:\s+|=)(?:'([^']*)'|"([^"]*)"|([^\s`'"]+))""")
_VARIABLE = LazyPattern(r"%\{(\w+)\}")
_LOOKUP = "time_namelookup"
# curl prints times in seconds with a decimal point (6 places since 7.61.0, 3 before); other variables are words.
_SECONDS = r"(\d+\.\d+)"
_WORD = r"\S*?"


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    for index, line in enumerate(lines):
        if "-w" not in line and "--write-out" not in line:
            continue
        for m in _OPTION.finditer(line[:_MAX_LINE]):
            template = next((g for g in m.groups() if g is not None), "")
            for pattern in _patterns(template):
                _read_after(sink, lines, index + 1, pattern)
    return sink.done()


def _patterns(template: str) -> list[Any]:
    """One compiled pattern per template line that prints the lookup time, its group the lookup's."""
    # In a shell word or markdown the newline is written \n (or \\n once markdown escaped the backslash).
    text = template.replace("\\\\n", "\n").replace("\\n", "\n").replace("\\t", "\t").replace("\\r", "")
    found: list[Any] = []
    for part in text.split("\n")[:_MAX_TEMPLATE_LINES]:
        names = _VARIABLE.findall(part)
        if _LOOKUP not in names:
            continue
        pieces = _VARIABLE.split(part.strip())
        out = []
        for i, piece in enumerate(pieces):
            if i % 2 == 0:  # literal text: whitespace runs may be padded or collapsed in the paste
                out.append(r"\s*".join(re.escape(w) for w in piece.split()) if piece.strip() else r"\s*")
            else:
                grab = _SECONDS if piece == _LOOKUP and names.index(_LOOKUP) == (i - 1) // 2 else None
                out.append(grab or (r"\d+\.\d+" if piece.startswith("time_") else _WORD))
        found.append(re2.compile(r"^\s*" + r"\s*".join(out) + r"\s*$"))
    return found


def _read_after(sink: FactSink, lines: list[str], start: int, pattern: Any) -> None:
    best: tuple[float, int] | None = None
    for n in range(start, len(lines)):
        m = pattern.match(lines[n][:_MAX_LINE])
        if m is None:
            continue
        seconds = float(m.group(1))
        if best is None or seconds > best[0]:
            best = (seconds, n + 1)
    if best is not None:
        sink.add("dns.lookup_seconds", best[0], best[1],
                 text=f"the slowest name lookup the pasted curl -w output shows: {best[0]} s")
