"""What a fact name means, its type, and how values from several artifacts combine."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

FactType = Literal["str", "int", "float", "bool", "list[str]", "list[int]"]

# How values from several artifacts or subjects combine into one value per name:
# first: the first value seen (artifacts are read in order); any/all: boolean or/and;
# union: list union keeping first-seen order; max/min/sum: numeric; specific: the first value that is not the
# catch-all "other" (a bare ErrImagePull row says a pull failed, not why; the event that says why must win).
Merge = Literal["first", "any", "all", "union", "max", "min", "sum", "specific"]


@dataclass(frozen=True)
class FactSpec:
    name: str
    type: FactType
    meaning: str
    merge: Merge = "first"
    example: str = ""
    kinds: tuple[str, ...] = ()  # evidence kinds that produce it, most direct first (producers.yaml)
