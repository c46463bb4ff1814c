"""Structured logs: one JSON object per line, redacted, and never a request body.

Every record passes the redactor (message, extra fields and traceback), so a secret that reaches a log call by
accident is masked there too. Libraries that log request bodies (slack-bolt on a failed signature check or an
unhandled request) get their bodies cut out by `NoBodies` before formatting. The level comes from
TRIAGEBOT_LOG_LEVEL (default INFO).
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from datetime import UTC, datetime

from collectors.redact import redact_json, redact_text

LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
LEVEL_ENV = "TRIAGEBOT_LOG_LEVEL"
_STANDARD = set(vars(logging.makeLogRecord({})))
# Where slack-bolt puts a request body in its messages: everything from the marker on is dropped.
_BODY = re.compile(r"(?is)(?:\bbody\s*[:=]|\brequest body\b|(?<=Unhandled request )\(|\(signature:).*")


class LogLevelError(ValueError):
    """TRIAGEBOT_LOG_LEVEL names no level."""


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
                 "level": record.levelname.lower(), "logger": record.name,
                 "msg": redact_text(record.getMessage())}
        for key, value in vars(record).items():
            if key not in _STANDARD and not key.startswith("_"):
                entry[key] = redact_json(value)
        if record.exc_info:
            entry["exc"] = redact_text(self.formatException(record.exc_info))
        return json.dumps(entry, default=str)


class NoBodies(logging.Filter):
    """Cut request bodies out of a library's log messages (attached to the loggers that print them)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cut = _BODY.sub("(request body not logged)", message)
        if cut != message:
            record.msg, record.args = cut, None
        return True


def level_from_env(default: str = "INFO") -> str:
    value = os.environ.get(LEVEL_ENV, default).strip().upper()
    if value not in LEVELS:
        raise LogLevelError(f"setting log_level ({LEVEL_ENV}): expected one of {', '.join(LEVELS)}, got {value!r}")
    return value


def body_free(logger: logging.Logger) -> logging.Logger:
    if not any(isinstance(f, NoBodies) for f in logger.filters):
        logger.addFilter(NoBodies())
    return logger


def configure(level: str | None = None) -> None:
    """JSON lines on stderr at `level` (else TRIAGEBOT_LOG_LEVEL); uvicorn's loggers into the same handler."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(NoBodies())  # on the handler: it sees every library's records, child loggers included
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level or level_from_env())
    for name in ("uvicorn", "uvicorn.error"):
        logger = logging.getLogger(name)
        logger.handlers[:] = []
        logger.propagate = True
        body_free(logger)
    # The access log is off (access_log=False) and stays off: a query string can carry what a body would.
    access = logging.getLogger("uvicorn.access")
    access.handlers[:] = []
    access.propagate = False
    access.disabled = True
