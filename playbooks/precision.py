"""Precision by rule: evidence that many causes share must not make a specific cause likely.

The situations in playbooks/data/generic_evidence.yaml are judged by every playbook, whether or not it would
trigger on them; a hypothesis that holds on one is a lint error unless the situation allows it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from collectors.factset import FactSet
from collectors.models import Citation, Fact
from collectors.vocabulary import VOCABULARY
from playbooks.engine import evaluate, template_variables
from playbooks.loader import CompiledPlaybook, Problem
from playbooks.report import Target

GENERIC_EVIDENCE = Path(__file__).parent / "data" / "generic_evidence.yaml"


class Situation(BaseModel):
    model_config = ConfigDict(extra="forbid")
    id: str
    facts: dict[str, Any] = Field(min_length=1)
    why: str = Field(min_length=1)
    may_hold: dict[str, str] = Field(default_factory=dict)


def load_situations(path: Path = GENERIC_EVIDENCE) -> list[Situation]:
    return TypeAdapter(list[Situation]).validate_python(yaml.safe_load(path.read_text(encoding="utf-8")))


def facts_of(values: dict[str, Any], artifact: str = "situation", subjects: dict[str, str] | None = None) -> FactSet:
    """Facts declared as {name: value}, each cited as one line of a made-up artifact; `subjects` says what a fact
    was read about (`node/gpu-7`), default nothing."""
    out = FactSet()
    for line, (name, value) in enumerate(values.items(), start=1):
        out.add(Fact(name=name, value=value, subject=(subjects or {}).get(name, ""),
                     citation=Citation(artifact=artifact, start=line, end=line), excerpt=f"{name}={value!r}"))
    return out


def generic_problems(playbooks: list[CompiledPlaybook], situations: list[Situation]) -> list[Problem]:
    """Each hypothesis that holds on a situation of generic evidence it is not allowed to hold on."""
    problems: list[Problem] = []
    known = {f"{p.spec.id}/{h.id}" for p in playbooks for h, _ in p.spec.walk()}
    for situation in situations:
        problems += [Problem(str(GENERIC_EVIDENCE), 0, f"situation {situation.id!r}: unknown fact {name!r}")
                     for name in situation.facts if name not in VOCABULARY]
        problems += [Problem(str(GENERIC_EVIDENCE), 0, f"situation {situation.id!r}: may_hold names no hypothesis "
                             f"{key!r}") for key in situation.may_hold
                     if key not in known and key.split("/")[0] in {p.spec.id for p in playbooks}]
    target = Target(namespace="default", pod="pod-0", node="node-0", service="service-0")
    for situation in situations:
        facts = facts_of(situation.facts)
        variables = template_variables(target, facts)
        for playbook in playbooks:
            finding = evaluate(playbook, facts, variables)
            for result in finding.hypotheses:
                key = f"{playbook.spec.id}/{result.id}"
                if result.status in ("confirmed", "likely") and key not in situation.may_hold:
                    line = result.rule.line if result.rule else 0
                    problems.append(Problem(playbook.path, line, f"{result.id!r} is {result.status} on generic "
                                            f"evidence {situation.id!r} ({', '.join(situation.facts)}): "
                                            "it needs a fact that tells it apart"))
    return problems
