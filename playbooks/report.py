"""The renderer-neutral report: what the engine concluded and the evidence behind it."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from collectors.models import Missing, Target

__all__ = ["ArtifactRef", "Evidence", "Finding", "HypothesisResult", "Missing", "Report", "Status", "Target"]

Status = Literal["confirmed", "likely", "ruled-out", "unknown"]


class Evidence(BaseModel):
    """One cited fact: where it was read and what the line said."""

    fact: str
    value: Any
    artifact: str
    lines: str  # "12" or "12-14"; empty when the whole artifact is cited
    excerpt: str = ""


class HypothesisResult(BaseModel):
    id: str
    status: Status
    score: float
    claim: str
    because: list[str] = Field(default_factory=list)
    falsified_by: str
    next_checks: list[str] = Field(default_factory=list)
    mitigations: list[str] = Field(default_factory=list)
    parent: str | None = None
    evidence: list[Evidence] = Field(default_factory=list)
    needs: list[str] = Field(default_factory=list)  # facts whose absence leaves this unknown
    source: list[str] = Field(default_factory=list)


class Finding(BaseModel):
    playbook: str
    title: str
    hypotheses: list[HypothesisResult]


class ArtifactRef(BaseModel):
    id: str
    kind: str
    source: str
    unavailable: str | None = None
    subject: str = ""
    command: str = ""
    captured_at: datetime | None = None


class Report(BaseModel):
    target: Target
    symptoms: list[str]
    findings: list[Finding]
    facts: dict[str, Any]
    artifacts: list[ArtifactRef]
    missing: list[Missing] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)  # what parsers could not read
    notes: list[str] = Field(default_factory=list)  # what the reader should know, e.g. that nothing was recognised

    def leading(self) -> tuple[Finding, HypothesisResult] | None:
        """The highest-scoring hypothesis that is not ruled out, with its finding."""
        best: tuple[Finding, HypothesisResult] | None = None
        for finding in self.findings:
            for h in finding.hypotheses:
                if h.status != "ruled-out" and (best is None or h.score > best[1].score):
                    best = (finding, h)
        return best

    def to_json(self) -> str:
        return self.model_dump_json(indent=2)
