"""The playbook schema: a trigger and a tree of hypotheses with CEL predicates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag

from collectors.catalogs.queries import SERIES_KEY, Unit

# The symptom ids are the bundled playbook files: adding a playbook is adding its YAML, nothing else to list.
SYMPTOMS: tuple[str, ...] = tuple(sorted(p.stem for p in Path(__file__).parent.glob("*.yaml")
                                         if not p.name.startswith("_")))
KEBAB = r"^[a-z0-9]+(-[a-z0-9]+)*$"


class Chart(BaseModel):
    """The series that shows a hypothesis: drawn under the report when the hypothesis leads."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    metric: str = Field(pattern=SERIES_KEY, description="The series live triage fetches for it: a key of "
                        "playbooks/queries/<id>.yaml (a metric name, or a metric with one label matcher).")
    title: str = Field(min_length=1, description="What the series shows, in words (the chart's title).")
    unit: Unit = Field(description="How values read on the axis; the unit the series' range query returns.")
    threshold: float | None = Field(None, description="The line the rule compares against, in the series' unit.")
    threshold_fact: str | None = Field(None, description="A fact whose value is the line instead (e.g. the memory "
                                       "limit in bytes).")
    threshold_label: str = Field("", description="What the line is, e.g. 'confirm: throttled >= 25%'.")
    breach: Literal["above", "below"] = Field("above", description="The side of the line the rule fires on; the "
                                              "incident window is shaded from the first sample on that side.")


class NoChart(BaseModel):
    """A hypothesis no metric can show (a typo in an image tag), and why: the report then has no chart."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    none: str = Field(min_length=20, description="Why no series shows this hypothesis, in a sentence.")


def _chart_form(value: Any) -> str:
    """`{none: ...}` is the no-chart form; anything else is read as a series (and its errors say so)."""
    return "none" if isinstance(value, dict) and "none" in value else "series"


# Every hypothesis declares its chart: a series, or the reason there is none (`playbooks lint` says which is
# missing). A tagged union, so a broken series declaration is reported against the series form alone.
ChartDeclaration = Annotated[Annotated[Chart, Tag("series")] | Annotated[NoChart, Tag("none")],
                             Discriminator(_chart_form)]


class Hypothesis(BaseModel):
    """One explanation of the symptom, and how evidence decides it."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=KEBAB, description="Stable kebab-case id; drills use it as ground truth.")
    claim: str = Field(min_length=1, description="What is wrong, in one sentence (Jinja, rendered per subject).")
    confirm: str | None = Field(None, description="CEL: evidence that directly shows the hypothesis holds.")
    likely: str | None = Field(None, description="CEL: evidence that supports it without proving it.")
    rule_out: str | None = Field(None, description="CEL: evidence that shows it does not hold.")
    discriminating: list[str] = Field(
        default_factory=list,
        description="Facts that tell this hypothesis apart from the others: every clause of `likely` must test one "
                    "(lint), so a generic error that many causes share never makes it likely on its own.")
    cite: list[str] = Field(default_factory=list, description="Facts to quote as evidence whenever present.")
    leads: str | None = Field(None, description="CEL: the evidence weighs most for this cause of all the causes "
                                                "it names (e.g. it rules out the most nodes); ranks the hypothesis "
                                                "first among those of its status, before the prior.")
    prior: float = Field(0.5, ge=0, le=1, description="Orders hypotheses that share a status; 1 = most common.")
    falsified_by: str = Field(min_length=1, description="The observation that would prove the claim wrong.")
    confirm_note: str | None = Field(None, min_length=20,
                                     description="For a hypothesis without `confirm` (it can reach likely at "
                                                 "most): the observation that would confirm it, where the "
                                                 "documents name one, and why no parser reads it yet; or that "
                                                 "they name none.")
    next_checks: list[str] = Field(default_factory=list, description="Commands or PromQL (Jinja templates).")
    mitigations: list[str] = Field(default_factory=list)
    source: list[str] = Field(min_length=1, description="Citations: seed lines or public references.")
    see: str | None = Field(None, pattern=KEBAB,
                            description="Another playbook that owns this cause; when it runs too, this hypothesis "
                                        "joins its finding instead of competing with it.")
    never_leads: str | None = Field(None, min_length=20,
                                    description="Why this hypothesis can never lead a report, in a sentence: a "
                                                "pointer (`see:`) whose facts always start the playbook it points "
                                                "to, or a consequence whose every signal confirms a rival. Incident "
                                                "coverage asks no recorded incident of it (docs/incidents.md).")
    same_node: bool = Field(False, description="Node evidence (kernel, Xid, ECC) confirms this only when it is "
                                               "about the pod's own node; evidence from an unnamed node makes "
                                               "it likely at most.")
    chart: ChartDeclaration = Field(description="The series that shows this hypothesis when it leads, or "
                                    "`{none: <why>}` when no metric can.")
    children: list[Hypothesis] = Field(default_factory=list, description="Explored when this one holds.")


class Playbook(BaseModel):
    """One symptom's hypothesis tree."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    id: str = Field(pattern=KEBAB, description="The symptom id; also the file name.")
    title: str
    summary: str = ""
    trigger: str = Field(description="CEL: when this playbook applies.")
    sources: list[str] = Field(description="Artifact kinds this playbook reads.")
    not_triggering: dict[str, str] = Field(
        default_factory=dict,
        description="Discriminating facts that must not run the playbook on their own, each with why: the playbook "
                    "also runs when a top-level hypothesis's likely holds on a discriminating fact only it declares "
                    "(docs/playbooks.md, 'Triggers by construction'), and some such facts are read from healthy "
                    "pastes too.")
    hypotheses: list[Hypothesis] = Field(min_length=1)

    def walk(self) -> list[tuple[Hypothesis, Hypothesis | None]]:
        """Every hypothesis with its parent, depth first, in declaration order."""
        out: list[tuple[Hypothesis, Hypothesis | None]] = []

        def visit(h: Hypothesis, parent: Hypothesis | None) -> None:
            out.append((h, parent))
            for child in h.children:
                visit(child, h)

        for h in self.hypotheses:
            visit(h, None)
        return out
