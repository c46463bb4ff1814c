"""CEL predicates: compile once, evaluate against facts, and find the fact names they test."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from collectors.lazy_regex import LazyPattern
from collectors.vocabulary import VOCABULARY
from playbooks.cel_lib import Context, compile_expression
from playbooks.tolerations import tolerates

_STRING = LazyPattern(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")
_DOTTED = LazyPattern(r"(?<![\w.])[a-z_][a-z0-9_]*(?:\.[a-z_][A-Za-z0-9_]*)+")
# Members that may follow a fact name in a predicate: CEL macros and string/list methods.
_BOUND = LazyPattern(r"\.(?:exists_one|exists|all|map|filter)\(\s*([a-z_]\w*)\s*,")
_METHODS = frozenset(
    {"exists", "exists_one", "all", "map", "filter", "size", "contains", "startsWith", "endsWith", "matches"}
)


class CelError(ValueError):
    """A predicate that does not compile."""


@dataclass(frozen=True)
class Predicate:
    """A CEL predicate, compiled when first needed: `compile_predicate` compiles at once (lint reports what does
    not compile), while a playbook whose text has passed every check (playbooks/checked.py) builds its predicates
    unchecked, so a run compiles only those of the playbooks it evaluates."""

    source: str

    @cached_property
    def program(self) -> Any:
        try:
            return compile_expression(self.source)
        except (ValueError, RuntimeError) as err:
            first = str(err).splitlines()[0] if str(err) else "syntax error"
            raise CelError(first) from None

    @cached_property
    def facts(self) -> tuple[str, ...]:
        """The fact names it tests."""
        return tuple(referenced_names(self.source)[0])

    def evaluate(self, context: Any) -> bool | None:
        """True or False, or None when the evidence it needs is absent (or it does not yield a bool)."""
        try:
            result = self.program.execute(context)
        except (KeyError, RuntimeError, ValueError, TypeError):
            return None
        return result if isinstance(result, bool) else None


def activation(context: dict[str, Any]) -> Any:
    """Facts converted to CEL values once, for the many predicates evaluated against them."""
    out = Context(variables=context)
    out.add_function("tolerates", tolerates)  # pod.tolerations against one node taint (playbooks/tolerations.py)
    return out


def referenced_names(expression: str) -> tuple[list[str], list[str]]:
    """Fact names a predicate tests, and dotted names that are not facts."""
    known: list[str] = []
    unknown: list[str] = []
    code = _STRING.sub('""', expression)
    bound = set(_BOUND.findall(code))  # comprehension variables, e.g. `t` in taints.exists(t, t.startsWith(..))
    for match in _DOTTED.findall(code):
        parts = match.split(".")
        if parts[0] in bound:
            continue
        name = next((".".join(parts[:n]) for n in range(len(parts), 1, -1) if ".".join(parts[:n]) in VOCABULARY),
                    None)
        rest = parts[len(name.split(".")):] if name else parts
        if name is None or len(rest) > 1 or (rest and rest[0] not in _METHODS):
            unknown.append(match)
        elif name not in known:
            known.append(name)
    return known, unknown


def top_level_clauses(expression: str) -> list[str]:
    """The alternatives of a predicate: its text split at every `||` outside brackets and string literals, and
    inside a pair of parentheses that wraps a whole alternative.

    `a || (b && c)` gives ["a", "b && c"]; `(a || b) && c` is one clause; so is an expression without `||`.
    """
    cuts = [i for i, depth in _code(expression) if depth == 0 and expression.startswith("||", i)]
    pieces = [expression[start:end].strip()
              for start, end in zip([0, *(c + 2 for c in cuts)], [*cuts, len(expression)], strict=True)]
    out: list[str] = []
    for piece in pieces:
        wrapped = piece.startswith("(") and all(depth > 0 for i, depth in _code(piece) if 0 < i < len(piece) - 1)
        out.extend(top_level_clauses(piece[1:-1]) if wrapped and len(piece) > 1 else [piece] if piece else [])
    return out


def _code(text: str) -> Iterator[tuple[int, int]]:
    """Each position outside string literals, with the bracket depth after the character there."""
    depth = 0
    quote = ""
    escaped = False
    for i, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
            continue
        if char in "'\"":
            quote = char
            continue
        depth += 1 if char in "([{" else -1 if char in ")]}" else 0
        yield i, depth


def compile_predicate(expression: str) -> Predicate:
    """The predicate, compiled now; raises CelError when it does not compile."""
    predicate = Predicate(expression)
    _ = predicate.program
    return predicate
