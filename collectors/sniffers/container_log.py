"""Spotting application output (levelled log lines, tracebacks, JSON logs, well-known failures) in a paste, apart
from its parser (collectors/parsers/logs/container_log.py), which loads the training, access-log and NCCL readers."""

from __future__ import annotations

from collectors.lazy_regex import LazyPattern
from collectors.text import normalise

# ---- recognising application output in a paste -------------------------------------------------------

# Shapes of application output, each behind a substring check so most lines cost no regex at all.
_LEVEL_HINTS = ("INFO", "WARN", "ERROR", "DEBUG", "CRITICAL", "FATAL", "level=")
_LEVEL = LazyPattern(r"\b(?:INFO|WARN|WARNING|ERROR|DEBUG|CRITICAL|FATAL)\b|"
                     r"\blevel=(?:info|warn|warning|error|debug|fatal)\b")
_FRAME = LazyPattern(r'^\s*File "[^"]+", line \d+')
_EXCEPTION = LazyPattern(r"^[\w.]+(?:Error|Exception|Exit):")
_JSON_LOG = LazyPattern(r'^\s*\{"(?:level|severity|msg|message|time|ts)"')
# Application failures that need no log-level word to be recognised (a bare "Bus error" line).
_CLAIM_NEEDLES = ("CUDA out of memory", "CUDA error", "OutOfMemoryError", "Bus error", "shared memory",
                  "No space left on device", "name resolution", "no such host", "NXDOMAIN", "Retry", "etrying",
                  "onnection refused", "o such file or directory", "ermission denied", "oad model", "KeyError",
                  "ModuleNotFoundError", "ImportError", "Traceback (most recent call last)")
_STRONG = ("CUDA out of memory", "Traceback (most recent call last)", "is killed by signal: Bus error")


# An event row ("Warning  Unhealthy  1s  kubelet  Readiness probe failed: ... connection refused") quotes the
# application's symptoms but is the events table's to read.
_EVENT_ROW = LazyPattern(r"^\s*(?:\S+\s+){0,2}(?:Warning|Normal)\s+[A-Z][A-Za-z]+\s")


def claims_line(line: str) -> bool:
    """Whether one line of a mixed paste reads like application output."""
    if ("Warning" in line or "Normal" in line) and _EVENT_ROW.match(line):
        return False
    if any([hint in line for hint in _LEVEL_HINTS]) and _LEVEL.search(line):
        return True
    if 'File "' in line and _FRAME.match(line):
        return True
    if (":" in line and _EXCEPTION.match(line)) or ('{"' in line and _JSON_LOG.match(line)):
        return True
    return any([needle in line for needle in _CLAIM_NEEDLES])  # a list is cheaper than a generator here


def sniff(text: str) -> int:
    """0-100 confidence that the text is an application log (kept below the specific kinds)."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:1000] if ln.strip()][:500]
    if not lines:
        return 0
    claimed = sum(1 for ln in lines if claims_line(ln))
    score = round(60 * claimed / len(lines))
    if any(strong in ln for ln in lines for strong in _STRONG):
        score = max(score, 65)
    return min(score, 70)
