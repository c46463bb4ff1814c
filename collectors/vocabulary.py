"""The documented fact vocabulary: every name a parser may emit or a playbook may test."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from collectors.vocab import alerts, kernel, kubernetes, metrics, nccl
from collectors.vocab.spec import FactSpec, FactType
from collectors.yaml_safe import load_file

_DOMAINS: list[tuple[str, list[FactSpec]]] = [
    ("Kubernetes objects, events and kubelet", kubernetes.FACTS),
    ("Kernel log, conntrack and cgroups", kernel.FACTS),
    ("NCCL and distributed training", nccl.FACTS),
    ("Metrics, NVML and application logs", metrics.FACTS),
    ("Alerts", alerts.FACTS),
]

_PRODUCERS = Path(__file__).parent / "vocab" / "producers.yaml"


def _with_producers(domains: list[tuple[str, list[FactSpec]]]) -> list[tuple[str, list[FactSpec]]]:
    producers = load_file(_PRODUCERS) or {}
    return [(title, [replace(s, kinds=tuple(producers.get(s.name, ()))) for s in specs]) for title, specs in domains]


_DOMAINS = _with_producers(_DOMAINS)
VOCABULARY: dict[str, FactSpec] = {spec.name: spec for _, specs in _DOMAINS for spec in specs}

# The CEL context is a nested map, so one name may not also be the prefix of another.
ROOTS: frozenset[str] = frozenset(name.split(".")[0] for name in VOCABULARY)
# Every map a name passes through below its root ("container.last_terminated" of
# "container.last_terminated.reason"): the context holds them even when empty, so that `has()` of a name under them
# is false, not an error, when nothing under them was read.
BRANCHES: tuple[str, ...] = tuple(sorted({".".join(name.split(".")[:n]) for name in VOCABULARY
                                          for n in range(2, name.count(".") + 1)}))


def spec(name: str) -> FactSpec | None:
    return VOCABULARY.get(name)


def conforms(value: object, fact_type: FactType) -> bool:
    """Whether a value has the declared type (bool is not an int here)."""
    if fact_type == "bool":
        return isinstance(value, bool)
    if fact_type == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if fact_type == "float":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if fact_type == "str":
        return isinstance(value, str)
    if fact_type == "list[str]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value)


def render_markdown() -> str:
    """docs/facts.md, generated from the vocabulary modules."""
    out = [
        "# Fact vocabulary",
        "",
        "Generated from `collectors/vocab/` by `triagebot facts --markdown`; do not edit by hand.",
        "Parsers emit only these names; playbook predicates (CEL) may only test these names.",
        "`merge` says how values from several artifacts combine into the single value a playbook sees.",
        "`read from` lists the kinds of evidence that produce the fact, most direct first",
        "(`collectors/vocab/producers.yaml`).",
        "",
    ]
    for title, specs in _DOMAINS:
        out += [f"## {title}", "", "| fact | type | merge | meaning | example | read from |",
                "|---|---|---|---|---|---|"]
        for s in specs:
            example = f"`{s.example}`" if s.example else ""
            kinds = ", ".join(s.kinds)
            out.append(f"| `{s.name}` | {s.type} | {s.merge} | {s.meaning} | {example} | {kinds} |")
        out.append("")
    return "\n".join(out)
