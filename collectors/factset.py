"""Combining facts from many artifacts into one value per name, keeping every citation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.models import Fact, is_stated
from collectors.vocabulary import BRANCHES, ROOTS, VOCABULARY


@dataclass
class MergedFact:
    name: str
    value: Any
    sources: list[Fact] = field(default_factory=list)

    def cite(self) -> str:
        """A one-line citation: `name = value (a3:12, a5:40)`."""
        labels = list(dict.fromkeys(f.citation.label() for f in self.sources))
        shown = ", ".join(labels[:4]) + (f", +{len(labels) - 4} more" if len(labels) > 4 else "")
        return f"{self.name} = {format_value(self.value)} ({shown})"


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:.3g}"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return str(value)


def _combine(merge: str, old: Any, new: Any) -> Any:
    if merge == "any":
        return bool(old) or bool(new)
    if merge == "all":
        return bool(old) and bool(new)
    if merge == "union":
        return old + [v for v in new if v not in old]
    if merge == "max":
        return max(old, new)
    if merge == "min":
        return min(old, new)
    if merge == "sum":
        return old + new
    if merge == "specific" and old == "other":
        return new
    return old  # "first"


class FactSet:
    """Facts by name. Unknown names are ignored: parsers are tested against the vocabulary."""

    def __init__(self, facts: list[Fact] | None = None) -> None:
        self._merged: dict[str, MergedFact] = {}
        self._stated = 0  # facts read from what a person wrote in words (collectors.models.is_stated)
        self._observed: FactSet | None = None
        for fact in facts or []:
            self.add(fact)

    def add(self, fact: Fact) -> None:
        spec = VOCABULARY.get(fact.name)
        if spec is None:
            return
        self._observed = None
        self._stated += is_stated(fact)
        value = list(fact.value) if isinstance(fact.value, list) else fact.value
        current = self._merged.get(fact.name)
        if current is None:
            self._merged[fact.name] = MergedFact(fact.name, value, [fact])
            return
        current.value = _combine(spec.merge, current.value, value)
        current.sources.append(fact)

    @property
    def has_stated(self) -> bool:
        return self._stated > 0

    def observed(self) -> FactSet:
        """The facts without those only stated in words: what a rule would conclude from program output alone."""
        if not self._stated:
            return self
        if self._observed is None:
            self._observed = FactSet([f for m in self._merged.values() for f in m.sources if not is_stated(f)])
        return self._observed

    def get(self, name: str) -> MergedFact | None:
        return self._merged.get(name)

    def value(self, name: str, default: Any = None) -> Any:
        merged = self._merged.get(name)
        return default if merged is None else merged.value

    def __contains__(self, name: str) -> bool:
        return name in self._merged

    def names(self) -> list[str]:
        return sorted(self._merged)

    def values(self) -> dict[str, Any]:
        return {name: self._merged[name].value for name in sorted(self._merged)}

    def cel_context(self) -> dict[str, Any]:
        """Nested maps for CEL; every root and branch exists so `has(x.y.z)` works and absent names stay absent."""
        context: dict[str, Any] = {root: {} for root in ROOTS}
        for branch in BRANCHES:
            root, _, rest = branch.partition(".")
            node = context[root]
            for part in rest.split("."):
                node = node.setdefault(part, {})
        for name, merged in self._merged.items():
            node = context
            parts = name.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = merged.value
        return context
