"""Every hypothesis of every playbook, addressable as `playbook/hypothesis`, and resolving what a trainee typed."""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from drills.errors import DrillError
from playbooks.loader import CompiledHypothesis, CompiledPlaybook


@dataclass(frozen=True)
class HypothesisRef:
    playbook: str
    id: str
    parent: str | None
    depth: int
    node: CompiledHypothesis

    @property
    def key(self) -> str:
        return f"{self.playbook}/{self.id}"


def index(playbooks: list[CompiledPlaybook]) -> dict[str, HypothesisRef]:
    """All hypotheses by key, each playbook depth first in declaration order."""
    out: dict[str, HypothesisRef] = {}

    def visit(book: str, node: CompiledHypothesis, parent: str | None, depth: int) -> None:
        ref = HypothesisRef(book, node.spec.id, parent, depth, node)
        out[ref.key] = ref
        for child in node.children:
            visit(book, child, node.spec.id, depth + 1)

    for book in playbooks:
        for node in book.hypotheses:
            visit(book.spec.id, node, None, 0)
    return out


def lineage(refs: dict[str, HypothesisRef], key: str) -> frozenset[str]:
    """The hypothesis, its ancestors and its descendants (keys): all compatible with it being the cause."""
    ref = refs[key]
    related = {key}
    parent = ref.parent
    while parent is not None:
        related.add(f"{ref.playbook}/{parent}")
        parent = refs[f"{ref.playbook}/{parent}"].parent
    stack = [ref.node]
    while stack:
        node = stack.pop()
        for child in node.children:
            related.add(f"{ref.playbook}/{child.spec.id}")
            stack.append(child)
    return frozenset(related)


def resolve(text: str, refs: dict[str, HypothesisRef], *, exact: bool = False) -> HypothesisRef:
    """`playbook/hypothesis`, or a bare id when only one playbook has it, or (unless `exact`) a unique fragment."""
    wanted = text.strip().lower().replace(" ", "-")
    if not wanted:
        raise DrillError("name a hypothesis, e.g. oom-killed/limit-too-low (list them with `hypotheses`)")
    if wanted in refs:
        return refs[wanted]
    ways = [[r for r in refs.values() if r.id == wanted]]
    if not exact:
        ways.append([r for r in refs.values() if wanted in r.key])
    for candidates in ways:
        if len(candidates) == 1:
            return candidates[0]
        if len(candidates) > 1:
            shown = ", ".join(sorted(r.key for r in candidates)[:8])
            raise DrillError(f"{text.strip()!r} is ambiguous: {shown}")
    close = difflib.get_close_matches(wanted, list(refs) + sorted({r.id for r in refs.values()}), n=4, cutoff=0.6)
    hint = f"; did you mean {', '.join(close)}?" if close else ""
    raise DrillError(f"no hypothesis {text.strip()!r}{hint} (list them with `hypotheses`)")
