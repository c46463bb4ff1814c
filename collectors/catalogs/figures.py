"""The metric alias catalog (figures.yaml): every name a program prints a deciding number under, and its fact."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from collectors.catalogs.validated import validated
from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "figures.yaml"

Unit = Literal["percent", "ratio", "count", "us", "ms", "s", "tokens_per_s", "mib"]


class Alias(BaseModel):
    """One program's names for one figure."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    figure: str = Field(pattern=r"^[a-z0-9_]+$")
    names: tuple[str, ...] = Field(min_length=1)
    context: tuple[str, ...] = ()
    unit: Unit
    program: str = Field(min_length=1)
    source: str = Field(min_length=1)
    versions: str = Field(min_length=1)
    render: tuple[str, ...] = Field(min_length=1)


class FigureFact(BaseModel):
    """A fact read from one figure, or from the ratio of two read in the same block."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    fact: str
    figure: str | None = None
    ratio: tuple[str, str] | None = None  # a / b
    share: tuple[str, str] | None = None  # a / (a + b): failed over failed and succeeded
    # A ratio of two figures one program prints on one line (a stats line): pair them line by line, so a line that
    # shows only one of them (SGLang's prefill line has #running-req and no throughput) does not count.
    same_line: bool = False
    # A figure that, read above zero on a line, leaves that line out of the ratio (vLLM's prompt throughput: a
    # window that also prefilled does not time decoding alone).
    without: str | None = None
    # One ratio per line holding both figures (one GPU's row of a table), not a block's sums: each GPU's share.
    each_line: bool = False
    unit: Unit

    @model_validator(mode="after")
    def _known(self) -> FigureFact:
        if self.fact not in VOCABULARY:
            raise ValueError(f"figures catalog: unknown fact {self.fact}")
        if sum(x is not None for x in (self.figure, self.ratio, self.share)) != 1:
            raise ValueError(f"figures catalog: {self.fact} needs exactly one of figure, ratio or share")
        return self


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    entries: tuple[Alias, ...]
    facts: tuple[FigureFact, ...]

    @model_validator(mode="after")
    def _figures_exist(self) -> Catalog:
        known = {e.figure for e in self.entries}
        for f in self.facts:
            used = [f.figure] if f.figure else list(f.ratio or f.share or ())
            used += [f.without] if f.without else []
            missing = [u for u in used if u not in known]
            if missing:
                raise ValueError(f"figures catalog: {f.fact} reads figures no entry gives: {missing}")
        return self


def normalise(name: str) -> str:
    """The key a printed name is matched by: lower case, letters and digits only."""
    return "".join(c for c in name.lower() if c.isalnum())


@cache
def catalog() -> Catalog:
    return validated((_CATALOG,), Catalog.model_validate)


@cache
def aliases() -> dict[str, tuple[Alias, ...]]:
    """Normalised name -> the entries that print it (one name can need context to say which)."""
    out: dict[str, list[Alias]] = {}
    for entry in catalog().entries:
        for name in entry.names:
            out.setdefault(normalise(name), []).append(entry)
    return {k: tuple(v) for k, v in out.items()}


def _name_pattern(name: str) -> str:
    # Words of the name with any run of separators between them: `GPU-Util`, `gpu_util`, `GPU Util` alike.
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name) if w]
    return r"[ \t_.:/-]*".join(re.escape(w) for w in words)


@cache
def name_alternation() -> str:
    """One RE2 alternation of every name, longest first so `gpu_util` does not stop `gpu_utilization` short."""
    names = sorted({n for e in catalog().entries for n in e.names}, key=lambda n: (-len(normalise(n)), n))
    return "|".join(_name_pattern(n) for n in names)
