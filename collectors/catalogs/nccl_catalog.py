"""The NCCL / PyTorch distributed message catalog (nccl.yaml): result codes the parser reads, message shapes
the tests render."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from collectors.catalogs.upstream import UpstreamWording
from collectors.catalogs.validated import validated
from collectors.vocabulary import VOCABULARY

_CATALOG = Path(__file__).parent / "nccl.yaml"


class ResultCode(BaseModel):
    """One ncclResult_t value, as NCCL numbers it and as PyTorch prints it."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    code: int = Field(ge=1)
    value: str = Field(pattern=r"^[a-z]+(-[a-z]+)*$")  # the nccl.result_codes value
    enum: str = Field(pattern=r"^nccl[A-Z]\w+$")
    text: str = Field(min_length=1)  # the start of ncclGetErrorString's text
    versions: str = Field(min_length=1)


class Message(UpstreamWording):
    """One message shape, with the source that prints it and the facts it must give."""

    facts: dict[str, Any] = Field(min_length=1)

    def render(self) -> str:
        return self.template.format(**self.sample)


class Catalog(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    result_codes: tuple[ResultCode, ...] = Field(min_length=1)
    messages: tuple[Message, ...] = Field(min_length=1)


@cache
def catalog() -> Catalog:
    """The catalog, loaded and checked once per process: unknown facts are an error."""
    loaded = validated((_CATALOG,), Catalog.model_validate)
    unknown = sorted({name for m in loaded.messages for name in m.facts if name not in VOCABULARY})
    if unknown:
        raise ValueError(f"{_CATALOG.name}: unknown facts {unknown}")
    return loaded


def result_codes() -> tuple[ResultCode, ...]:
    return catalog().result_codes
