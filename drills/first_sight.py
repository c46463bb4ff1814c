"""The first-sight ledger: how each batch of unseen real-world cases scored, once, before anything was fixed.

`tests/realworld` is a regression floor: the readers were improved while looking at its failures. Progress is
measured on new batches, collected by someone who does not change the readers, labelled before the tool runs,
and scored exactly once. The ledger is append-only: an entry is never rewritten, and a batch id that is already
in it cannot be scored again (a batch that has been looked at is no longer unseen).
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from collectors.yaml_safe import safe_load
from drills.realworld import CaseResult, accuracy_rows

LEDGER = Path("tests/realworld/first-sight.yaml")


class BatchScore(BaseModel):
    """One batch, scored once."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9.-]*$")
    scored_on: str = Field(description="the date it was scored, YYYY-MM-DD")
    collected_by: str = Field(min_length=1, description="who collected and labelled it (never who fixes readers)")
    version: str = Field(description="the triagebot version that scored it")
    cases: int = Field(ge=1)
    passed: int = Field(ge=0)
    by_symptom: dict[str, list[int]] = Field(default_factory=dict, description="symptom -> [cases, passed]")
    thread_only: list[int] = Field(default_factory=list, description=(
        "[cases, passed] of the cases whose collector marked the cause as absent from the paste"
        " (cause_in_paste: false); they are in cases and passed too"))
    note: str = ""


class LedgerError(ValueError):
    """The ledger cannot be read, or the batch was scored before."""


def load_ledger(path: Path = LEDGER) -> list[BatchScore]:
    if not path.exists():
        return []
    try:
        raw = safe_load(path.read_text(encoding="utf-8")) or []
        return TypeAdapter(list[BatchScore]).validate_python(raw)
    except (OSError, yaml.YAMLError, ValidationError) as err:
        raise LedgerError(f"{path}: not a first-sight ledger ({str(err).splitlines()[0]})") from None


def score_of(batch: str, results: list[CaseResult], collected_by: str, scored_on: str, version: str,
             note: str = "") -> BatchScore:
    rows = accuracy_rows(results)
    apart = [r for r in results if r.cause_in_paste is False]
    return BatchScore(id=batch, scored_on=scored_on, collected_by=collected_by, version=version,
                      cases=len(results), passed=sum(r.passed for r in results), note=note,
                      thread_only=[len(apart), sum(r.passed for r in apart)] if apart else [],
                      by_symptom={symptom: [total, passed] for symptom, total, passed, _ in rows if symptom != "all"})


def record(score: BatchScore, path: Path = LEDGER) -> None:
    """Append the batch's score; refuse a batch that was scored before."""
    earlier = next((b for b in load_ledger(path) if b.id == score.id), None)
    if earlier is not None:
        raise LedgerError(f"batch {score.id} was scored on {earlier.scored_on} ({earlier.passed}/{earlier.cases}); "
                          "a batch is scored once: collect a new one")
    text = yaml.safe_dump([score.model_dump(exclude_defaults=True)], sort_keys=False, allow_unicode=True, width=100)
    with path.open("a", encoding="utf-8") as ledger:  # append only: earlier entries are never rewritten
        ledger.write(text)
