"""Removing secrets from evidence before it leaves the process (Slack, files, an LLM).

Redaction keeps every line in place, so citations into a redacted artifact still point at the right line.
"""

from __future__ import annotations

import re

from collectors.models import Artifact

MASK = "<redacted>"

_SECRET_NAME = r"[A-Za-z0-9_.\-]*(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|" \
               r"CREDENTIALS?|AUTH|SESSION_?KEY|COOKIE|DSN|CONN(?:ECTION)?_?STRING)[A-Za-z0-9_.\-]*"

_RULES: list[tuple[re.Pattern[str], str]] = [
    # Authorization headers and bearer tokens.
    (re.compile(r"(?i)(authorization\s*[:=]\s*\"?(?:bearer|basic|token)\s+)[^\s\"',]+"), r"\1" + MASK),
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9\-._~+/]{8,}=*"), r"\1" + MASK),
    # Kubernetes env in JSON: {"name": "DB_PASSWORD", "value": "..."} on one line or two.
    (re.compile(r'(?i)("name"\s*:\s*"' + _SECRET_NAME + r'"\s*,\s*"value"\s*:\s*")[^"]*(")'), r"\1" + MASK + r"\2"),
    # NAME=value, NAME: value, "NAME": "value" (env dumps, describe output, YAML, configs).
    (re.compile(r"(?i)(\b" + _SECRET_NAME + r"\b[\"']?\s*[:=]\s*[\"']?)(?!<redacted>)[^\s\"',}]+"), r"\1" + MASK),
    # Credentials inside URLs and connection strings: scheme://user:password@host.
    (re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^/\s:@]*:)[^@\s/]+(@)"), r"\1" + MASK + r"\2"),
    # Well-known token shapes.
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MASK),
    (re.compile(r"\bxapp-[A-Za-z0-9-]{10,}"), MASK),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), MASK),
    (re.compile(r"\bAKIA[0-9A-Z]{16}\b"), MASK),
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK),
]

# Kubernetes env in JSON printed with indent: the value sits on the line after the name.
_ENV_NAME_LINE = re.compile(r'(?i)"name"\s*:\s*"' + _SECRET_NAME + r'"\s*,?\s*$')
_ENV_VALUE_LINE = re.compile(r'^(\s*"value"\s*:\s*")[^"]*(")')
_YAML_NAME_LINE = re.compile(r"(?i)^\s*-?\s*name\s*:\s*\"?" + _SECRET_NAME + r"\"?\s*$")
_YAML_VALUE_LINE = re.compile(r"^(\s*value\s*:\s*)(\S.*)$")
_KEY_BEGIN = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")
_KEY_END = re.compile(r"-----END [A-Z ]*PRIVATE KEY-----")


def redact_text(text: str) -> str:
    """The text with secrets masked, line for line."""
    lines = text.split("\n")
    out: list[str] = []
    in_key = False
    previous_names_secret = False
    for line in lines:
        if in_key:
            in_key = _KEY_END.search(line) is None
            out.append(line if not in_key else MASK)
            continue
        if _KEY_BEGIN.search(line):
            in_key = _KEY_END.search(line) is None
            out.append(line)
            continue
        if previous_names_secret:
            line = _ENV_VALUE_LINE.sub(r"\1" + MASK + r"\2", line)
            line = _YAML_VALUE_LINE.sub(r"\1" + MASK, line)
        for pattern, replacement in _RULES:
            line = pattern.sub(replacement, line)
        previous_names_secret = bool(_ENV_NAME_LINE.search(line) or _YAML_NAME_LINE.search(line))
        out.append(line)
    return "\n".join(out)


def redact(artifact: Artifact) -> Artifact:
    """The artifact with its content and command redacted."""
    if not artifact.content and not artifact.command:
        return artifact
    return artifact.model_copy(update={"content": redact_text(artifact.content),
                                       "command": redact_text(artifact.command)})
