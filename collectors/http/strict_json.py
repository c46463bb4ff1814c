"""Parsing untrusted JSON bodies into values every store and serializer can take.

Python's json module accepts what the rest of the pipeline cannot: nesting deep enough to exhaust the stack
(a RecursionError, so a 500), NaN and Infinity (not JSON; PostgreSQL's jsonb refuses them), numbers too large
for any column, NUL characters (PostgreSQL text refuses them) and lone surrogates (they cannot be encoded to
UTF-8). Each is refused here with a message saying what was expected.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 32
MAX_INT = 2**63 - 1


class BadJson(ValueError):
    """The body is not JSON the bot accepts; the message says why."""


def _int(text: str) -> int:
    if len(text.lstrip("-")) > 19 or abs(value := int(text)) > MAX_INT:
        raise BadJson(f"an integer out of range ({text[:24]}...); expected at most 64-bit integers")
    return value


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise BadJson(f"a number out of range ({text[:24]}); expected finite numbers")
    return value


def _constant(name: str) -> Any:
    raise BadJson(f"{name} is not JSON; expected finite numbers")


def _check_string(value: str) -> None:
    if "\x00" in value:
        raise BadJson("a string contains a NUL character; expected text without NUL")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise BadJson("a string contains an unpaired UTF-16 surrogate escape; expected valid Unicode") from None


def _check_tree(root: Any, max_depth: int) -> None:
    """Depth, keys and strings, checked without recursion (the tree may be as deep as the parser allowed)."""
    stack: list[tuple[Any, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, str):
            _check_string(node)
        elif isinstance(node, dict | list):
            if depth > max_depth:
                raise BadJson(f"nesting deeper than {max_depth} levels; expected at most {max_depth}")
            if isinstance(node, dict):
                for key, value in node.items():
                    _check_string(key)
                    stack.append((value, depth + 1))
            else:
                stack.extend((value, depth + 1) for value in node)


def loads(body: bytes | str, max_depth: int = MAX_DEPTH) -> Any:
    """The parsed value, or BadJson saying what was wrong with it."""
    if isinstance(body, bytes):
        try:
            body = body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise BadJson(f"body is not JSON: not UTF-8 at byte {err.start}") from None
    try:
        value = json.loads(body, parse_int=_int, parse_float=_float, parse_constant=_constant)
    except BadJson:
        raise
    except RecursionError:
        raise BadJson(f"nesting deeper than {max_depth} levels; expected at most {max_depth}") from None
    except ValueError as err:
        raise BadJson(f"body is not JSON: {err}") from None
    _check_tree(value, max_depth)
    return value
