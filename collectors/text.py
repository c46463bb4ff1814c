"""Normalising messy pasted text: colours, CRLF, log prefixes."""

from __future__ import annotations

import re

_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-Z\\-_]")

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


def normalise(text: str) -> str:
    """Strip ANSI colours and carriage returns; keep line numbering intact."""
    text = _ANSI.sub("", text)
    return text.replace("\r\n", "\n").replace("\r", "\n")


def strip_prefixes(line: str) -> str:
    """Remove any stack of timestamp/host/facility prefixes in front of a log message."""
    changed = True
    while changed:
        changed = False
        for rx in _PREFIXES:
            m = rx.match(line)
            if m and m.end() > 0:
                line = line[m.end():]
                changed = True
    return line


def excerpt(line: str, limit: int = 200) -> str:
    line = line.strip()
    return line if len(line) <= limit else line[: limit - 1] + "…"
