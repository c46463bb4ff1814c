"""What every catalog entry derived from an upstream program says about where its wording comes from."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class UpstreamWording(BaseModel):
    """A message as a program prints it: the project, the file and the releases that print it, and a template with
    sample values that a test renders and reads back."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    id: str = Field(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$")
    project: str = Field(min_length=1)
    file: str = Field(min_length=1)
    versions: str = Field(min_length=1)
    template: str = Field(min_length=1)
    sample: dict[str, Any] = Field(default_factory=dict)
