"""Validating what users type before it reaches a selector, a query or a file name."""

from __future__ import annotations

import re
from datetime import timedelta

_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DURATION = re.compile(r"^(\d+)([smhd])$")
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
MAX_SINCE = timedelta(days=7)


class InvalidInput(ValueError):
    """A name or value that is not what Kubernetes or triagebot accepts; the message says what is."""


def namespace(name: str) -> str:
    if len(name) > 63 or not _LABEL.match(name):
        raise InvalidInput(f"namespace {name!r} is not a valid name: expected lower-case letters, digits and '-', "
                           "starting and ending with a letter or digit, at most 63 characters")
    return name


def object_name(name: str, what: str = "name") -> str:
    if len(name) > 253 or not _SUBDOMAIN.match(name):
        raise InvalidInput(f"{what} {name!r} is not a valid Kubernetes name: expected lower-case letters, digits, "
                           "'-' and '.', at most 253 characters")
    return name


def target_name(text: str) -> tuple[str, str]:
    """SERVICE, or pod/NAME, node/NAME, job/NAME: returns (kind, name)."""
    kind, _, name = text.partition("/") if "/" in text else ("service", "", text)
    if kind not in ("service", "svc", "pod", "node", "job", "deployment", "deploy", "statefulset", "sts"):
        raise InvalidInput(f"unknown target kind {kind!r}: expected SERVICE, pod/NAME, node/NAME or job/NAME")
    kind = {"svc": "service", "deploy": "deployment", "sts": "statefulset"}.get(kind, kind)
    return kind, object_name(name, kind)


def duration(text: str, limit: timedelta = MAX_SINCE) -> timedelta:
    """'30m', '2h', '1d' and the like, at most `limit`."""
    match = _DURATION.match(text.strip())
    if not match:
        raise InvalidInput(f"duration {text!r} is not understood: expected a number and a unit, like 30m, 2h or 1d")
    value = timedelta(seconds=int(match.group(1)) * _UNITS[match.group(2)])
    if value <= timedelta(0) or value > limit:
        raise InvalidInput(f"duration {text!r} is out of range: expected more than 0 and at most {limit}")
    return value
