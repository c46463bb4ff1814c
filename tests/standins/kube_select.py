"""Label and field selectors, parsed and matched the way k8s.io/apimachinery does.

Parsing errors are raised as SelectorError with the message the API server puts in its 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from tests.standins.kube_catalog import FieldLabel, Resource


class SelectorError(ValueError):
    """A selector the API server would reject with 400 BadRequest."""


# --- label selectors ------------------------------------------------------------------------------------------------

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_NAME_RE = re.compile(_NAME)
_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_VALUE_RE = re.compile(f"({_NAME})?")
_SPECIAL = set(" \t\n\r,()=!<>")
_SET_OPS = ("in", "notin")


@dataclass(frozen=True)
class LabelRequirement:
    key: str
    op: str  # exists, !, =, !=, in, notin, gt, lt
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.op == "exists":
            return has
        if self.op == "!":
            return not has
        if self.op in ("=", "in"):
            return has and labels[self.key] in self.values
        if self.op in ("!=", "notin"):
            return not has or labels[self.key] not in self.values
        return has and _compare_int(labels[self.key], self.op, self.values[0])


def _compare_int(actual: str, op: str, bound: str) -> bool:
    try:
        value = int(actual)
    except ValueError:
        return False
    return value > int(bound) if op == "gt" else value < int(bound)


def _tokens(text: str) -> list[str]:
    """Identifiers and operators, split the way the apimachinery lexer splits them."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch.isspace():
            i += 1
        elif text.startswith(("==", "!="), i):
            out.append(text[i:i + 2])
            i += 2
        elif ch in _SPECIAL:
            out.append(ch)
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in _SPECIAL:
                j += 1
            out.append(text[i:j])
            i = j
    return out


class _LabelParser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.pos = 0

    def peek(self) -> str:
        return self.toks[self.pos] if self.pos < len(self.toks) else ""

    def take(self) -> str:
        tok = self.peek()
        self.pos += 1
        return tok

    def parse(self) -> list[LabelRequirement]:
        reqs: list[LabelRequirement] = []
        while True:
            reqs.append(self.requirement())
            tok = self.take()
            if tok == "":
                return reqs
            if tok != ",":
                raise SelectorError(f"found '{tok}', expected: ',' or 'end of string'")

    def requirement(self) -> LabelRequirement:
        if self.peek() == "!":
            self.take()
            return LabelRequirement(_valid_key(self.identifier()), "!")
        key = _valid_key(self.identifier())
        op = self.peek()
        if op in ("", ","):
            return LabelRequirement(key, "exists")
        self.take()
        if op in ("=", "=="):
            return LabelRequirement(key, "=", (self.single_value(key),))
        if op == "!=":
            return LabelRequirement(key, "!=", (self.single_value(key),))
        if op in _SET_OPS:
            return LabelRequirement(key, op, self.value_set(key))
        if op in (">", "<"):
            return self.numeric(key, "gt" if op == ">" else "lt")
        raise SelectorError(f"found '{op}', expected: in, notin, =, ==, !=, gt, lt")

    def identifier(self) -> str:
        tok = self.take()
        if tok == "" or tok in _SPECIAL or tok in ("==", "!="):
            raise SelectorError(f"found '{tok}', expected: identifier")
        return tok

    def single_value(self, key: str) -> str:
        tok = self.peek()
        if tok in ("", ","):
            return ""  # "app=" selects an empty value
        return _valid_value(key, self.identifier())

    def value_set(self, key: str) -> tuple[str, ...]:
        if self.take() != "(":
            raise SelectorError("found '', expected: '('")
        values: list[str] = []
        while True:
            tok = self.take()
            if tok == ")":
                if not values:
                    raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
                return tuple(values)
            if tok == ",":
                if not values:
                    values.append("")
                continue
            if tok == "" or tok in _SPECIAL:
                raise SelectorError(f"found '{tok}', expected: ',', ')' or identifier")
            values.append(_valid_value(key, tok))

    def numeric(self, key: str, op: str) -> LabelRequirement:
        tok = self.identifier()
        try:
            int(tok)
        except ValueError:
            raise SelectorError(f"for 'Gt', 'Lt' operators, the value must be an integer: {tok}") from None
        return LabelRequirement(key, op, (tok,))


def _valid_key(key: str) -> str:
    prefix, _, name = key.rpartition("/")
    ok = 0 < len(name) <= 63 and _NAME_RE.fullmatch(name) is not None
    if prefix and not (len(prefix) <= 253 and _DNS_SUBDOMAIN_RE.fullmatch(prefix)):
        ok = False
    if not ok:
        raise SelectorError(
            f'unable to parse requirement: key: Invalid value: "{key}": name part must consist of alphanumeric '
            "characters, '-', '_' or '.', and must start and end with an alphanumeric character")
    return key


def _valid_value(key: str, value: str) -> str:
    if len(value) > 63 or not _VALUE_RE.fullmatch(value):
        raise SelectorError(
            f'unable to parse requirement: values[0][{key}]: Invalid value: "{value}": a valid label must be an '
            "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character")
    return value


def parse_labels(text: str) -> list[LabelRequirement]:
    if not text.strip():
        return []
    return _LabelParser(text).parse()


# --- field selectors ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FieldRequirement:
    label: str
    equal: bool
    value: str


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for ch in text:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\":
            current.append(ch)
            escaped = True
        elif ch == sep:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out: list[str] = []
    it = iter(value)
    for ch in it:
        if ch != "\\":
            if ch in ",=":
                raise SelectorError(f"invalid field selector: unescaped {ch!r} in value {value!r}")
            out.append(ch)
            continue
        nxt = next(it, "")
        if nxt not in ("\\", ",", "="):
            raise SelectorError(f"invalid field selector: invalid escape sequence: \\{nxt}")
        out.append(nxt)
    return "".join(out)


def _split_term(term: str) -> tuple[str, str, str] | None:
    for i in range(len(term)):
        for op in ("!=", "==", "="):
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op):]
    return None


def parse_fields(text: str, resource: Resource) -> list[FieldRequirement]:
    reqs: list[FieldRequirement] = []
    for part in _split_unescaped(text, ","):
        if not part:
            continue
        split = _split_term(part)
        if split is None:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        label, op, value = split
        if label not in resource.field_labels:
            raise SelectorError(resource.field_error(label))
        reqs.append(FieldRequirement(label, op != "!=", _unescape(value)))
    return reqs


def field_value(obj: Mapping[str, object], spec: FieldLabel) -> str:
    """A field as the API server's selectable-fields set prints it."""
    cur: object = obj
    for step in spec.path:
        cur = cur.get(step) if isinstance(cur, dict) else None  # dict, not Mapping: abc checks cost 30% of a load
    if spec.kind == "bool":
        return "true" if cur is True else "false"
    if spec.kind == "int":
        return str(cur) if isinstance(cur, int) else "0"
    return cur if isinstance(cur, str) else ""


def field_matcher(reqs: list[FieldRequirement], resource: Resource) -> Callable[[Mapping[str, str]], bool]:
    """A predicate over an object's precomputed selectable fields."""
    def matches(fields: Mapping[str, str]) -> bool:
        return all((fields.get(_canonical(r.label, resource), "") == r.value) == r.equal for r in reqs)
    return matches


def pinned_field(reqs: list[FieldRequirement], resource: Resource, indexed: tuple[str, ...]) -> tuple[str, str] | None:
    """The first `path=value` requirement on an indexed path: the list can start from that index."""
    for r in reqs:
        if r.equal and (path := _canonical(r.label, resource)) in indexed:
            return path, r.value
    return None


def _canonical(label: str, resource: Resource) -> str:
    # Selectable fields are stored under their dotted path, so aliases (spec.host, regarding.name) line up.
    return ".".join(resource.field_labels[label].path)


def selectable_fields(obj: Mapping[str, object], resource: Resource) -> dict[str, str]:
    return {key: field_value(obj, spec) for key, spec in _unique_fields(resource)}


_UNIQUE: dict[int, list[tuple[str, FieldLabel]]] = {}


def _unique_fields(resource: Resource) -> list[tuple[str, FieldLabel]]:
    """Each selectable path once (labels alias paths: spec.host, regarding.name); computed once per resource."""
    found = _UNIQUE.get(id(resource))
    if found is None:
        found = list({".".join(s.path): s for s in resource.field_labels.values()}.items())
        _UNIQUE[id(resource)] = found
    return found
