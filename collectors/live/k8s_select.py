"""Label and field selectors evaluated on this side, with the API server's semantics, for the watch cache.

Only the forms triage itself sends are understood: labels `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`,
`k`, `!k`; fields `path=v`, `path==v`, `path!=v` over the fields the cache indexes. Anything else is `None`
from the parsers, and the caller asks the API server instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

_SET = re.compile(r"^\s*(!?)([A-Za-z0-9._/-]+)\s*(?:\s(in|notin)\s*\(([^()]*)\)|(==|=|!=)\s*([A-Za-z0-9._-]*))?\s*$")


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # = != in notin exists !exists
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.op == "exists":
            return present
        if self.op == "!exists":
            return not present
        if self.op in ("=", "in"):
            return present and labels[self.key] in self.values
        return not present or labels[self.key] not in self.values  # != and notin match a missing key


def _split(text: str) -> list[str]:
    """Terms separated by commas outside parentheses."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def parse_labels(text: str) -> list[Requirement] | None:
    """A label selector's requirements (all must hold), or None for a form not understood here."""
    out: list[Requirement] = []
    for term in _split(text):
        m = _SET.match(term)
        if m is None:
            return None
        bang, key, set_op, set_values, op, value = m.groups()
        if bang and (set_op or op):
            return None
        if set_op:
            out.append(Requirement(key, set_op, frozenset(v.strip() for v in set_values.split(",") if v.strip())))
        elif op:
            out.append(Requirement(key, "!=" if op == "!=" else "=", frozenset([value])))
        else:
            out.append(Requirement(key, "!exists" if bang else "exists", frozenset()))
    return out


def parse_fields(text: str, known: frozenset[str]) -> list[Requirement] | None:
    """A field selector over the indexed fields `known`, or None when it names any other field."""
    out: list[Requirement] = []
    for term in _split(text):
        for op in ("!=", "==", "="):
            if op in term:
                key, value = (s.strip() for s in term.split(op, 1))
                break
        else:
            return None
        if key not in known or "\\" in value:
            return None
        out.append(Requirement(key, "!=" if op == "!=" else "=", frozenset([value])))
    return out


def matcher(labels: list[Requirement], fields: list[Requirement]) -> Callable[[Mapping[str, str], Mapping[str, str]],
                                                                               bool]:
    """A predicate over (labels, fields) of one object."""
    def matches(obj_labels: Mapping[str, str], obj_fields: Mapping[str, str]) -> bool:
        return all(r.matches(obj_labels) for r in labels) and all(_field(r, obj_fields) for r in fields)

    return matches


def _field(req: Requirement, fields: Mapping[str, str]) -> bool:
    # A field always exists (empty when unset): spec.nodeName= selects unscheduled pods.
    value = fields.get(req.key, "")
    return value in req.values if req.op == "=" else value not in req.values
