"""Which layer is still open? The narrowing question of issue #29, point 6, answered from the findings.

The documents teach narrowing an incident downward, one layer at a time: application, pod (the container runtime),
node (its kernel, memory and disks), network, GPU (seed 000:7-16, 000:33-35). Which hypothesis belongs to which
layer, each layer's question and the one check that closes it are data (playbooks/data/layers.yaml); this module
only reads the statuses the engine gave: it never looks at facts, so a layer opens or closes exactly as the
hypotheses the report shows do.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, get_args

import jinja2

from collectors.catalogs.validated import validated
from collectors.yaml_safe import load_file
from playbooks import templates
from playbooks.loader import CompiledPlaybook
from playbooks.problems import Problem
from playbooks.report import Finding, Layer, Narrowing
from playbooks.templates import check_template, render

LAYERS_FILE = Path(__file__).resolve().parent / "data" / "layers.yaml"
ORDER: tuple[Layer, ...] = get_args(Layer)


@dataclass(frozen=True)
class LayerSpec:
    layer: Layer
    question: str
    check: str  # a Jinja template, as a hypothesis's next checks
    source: tuple[str, ...]
    hypotheses: frozenset[tuple[str, str]]  # (playbook, hypothesis)


def load_layers(path: Path = LAYERS_FILE) -> list[LayerSpec]:
    """The layers in the documents' order; raises ValueError on a malformed file (a packaging error)."""
    return _checked(path, load_file(path))


def _checked(path: Path, data: Any) -> list[LayerSpec]:
    entries = data.get("layers") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise ValueError(f"{path}: expected a mapping with a `layers` list")
    out: list[LayerSpec] = []
    seen: dict[tuple[str, str], str] = {}
    for entry in entries:
        layer = entry.get("layer") if isinstance(entry, dict) else None
        if layer not in ORDER:
            raise ValueError(f"{path}: unknown layer {layer!r}; expected one of {', '.join(ORDER)}")
        by_playbook = entry.get("hypotheses") or {}
        if not isinstance(by_playbook, dict):
            raise ValueError(f"{path}: layer {layer}: `hypotheses` maps a playbook to a list of hypothesis ids")
        pairs: set[tuple[str, str]] = set()
        for playbook, ids in by_playbook.items():
            for hid in ids or []:
                key = (str(playbook), str(hid))
                if key in seen:  # one layer per hypothesis, or the question would contradict itself
                    raise ValueError(f"{path}: {playbook}/{hid} is in both {seen[key]} and {layer}")
                seen[key] = layer
                pairs.add(key)
        check = str(entry.get("check") or "")
        if not check or not str(entry.get("question") or "").endswith("?"):
            raise ValueError(f"{path}: layer {layer}: needs a `question` (ending in ?) and a `check`")
        try:
            check_template(check)
        except jinja2.TemplateError as error:
            raise ValueError(f"{path}: layer {layer}: check: {error}") from error
        out.append(LayerSpec(layer=layer, question=str(entry["question"]), check=check,
                             source=tuple(str(s) for s in entry.get("source") or []), hypotheses=frozenset(pairs)))
    if [spec.layer for spec in out] != list(ORDER):
        raise ValueError(f"{path}: layers must be {', '.join(ORDER)}, in that order")
    return out


@cache
def layers() -> list[LayerSpec]:
    """The bundled layers, read once per process and checked only when their text (or the checks) changed."""
    code = (Path(__file__), Path(templates.__file__), Path(jinja2.__file__))  # jinja2's holds its version
    return validated((LAYERS_FILE,), lambda data: _checked(LAYERS_FILE, data), code)


def _index(specs: list[LayerSpec]) -> dict[tuple[str, str], int]:
    return {pair: n for n, spec in enumerate(specs) for pair in spec.hypotheses}


def open_hypotheses(findings: Iterable[Finding], specs: list[LayerSpec] | None = None) -> dict[Layer, list[str]]:
    """Each open layer (documents' order) with its open hypotheses, `playbook/hypothesis`, in report order.

    Per symptom (finding): a confirmed hypothesis settles its own layer and explains the symptom for every later
    one; a likely or unknown hypothesis in an earlier layer keeps that layer open. A finding set aside as context
    (`aside`) is not the symptom; a pointer that joined another finding (`merged_into`) is that finding's to
    open, though when confirmed it still explains its own symptom. A hypothesis with no layer opens nothing.
    When the report's lead is confirmed, it explains the incident: another finding with no support of its own
    (a playbook that triggered on evidence the lead's symptom shares) opens nothing either.
    """
    specs = layers() if specs is None else specs
    index = _index(specs)
    findings = [f for f in findings if not f.aside]
    lead = next((f for f in findings if any(h.supported for h in f.hypotheses)), None)
    best = max((h for h in lead.hypotheses if h.supported), key=lambda h: h.score) if lead else None
    explained = best is not None and best.status == "confirmed"
    found: dict[int, list[str]] = {}
    for finding in findings:
        if explained and finding is not lead and not any(h.supported for h in finding.hypotheses):
            continue
        where = [(h, index.get((finding.playbook, h.id))) for h in finding.hypotheses]
        settled = min((n for h, n in where if n is not None and h.status == "confirmed"), default=len(specs))
        for h, n in where:
            if n is not None and n < settled and h.status in ("likely", "unknown") and h.merged_into is None:
                found.setdefault(n, []).append(f"{finding.playbook}/{h.id}")
    return {specs[n].layer: found[n] for n in sorted(found)}


def narrowing(findings: list[Finding], variables: dict[str, Any],
              specs: list[LayerSpec] | None = None) -> Narrowing | None:
    """The question for the first open layer and its one closing check, rendered for the report's subject; None
    when every layer is settled (a confirmed hypothesis explains the symptom and nothing before it is open)."""
    specs = layers() if specs is None else specs
    still = open_hypotheses(findings, specs)
    if not still:
        return None
    first = next(spec for spec in specs if spec.layer in still)
    return Narrowing(layer=first.layer, question=first.question, check=render(first.check, variables),
                     hypotheses=still[first.layer], open=list(still), source=list(first.source))


def layer_problems(playbooks: list[CompiledPlaybook], path: Path = LAYERS_FILE) -> list[Problem]:
    """For `playbooks lint`: a hypothesis of these playbooks with no layer (a warning: it never opens one), and a
    line of the file naming a hypothesis these playbooks lack (an error: a typo or a renamed id)."""
    shown = _shown(path)
    try:
        specs = load_layers(path)
    except (ValueError, KeyError, TypeError) as error:
        return [Problem(shown, 1, f"layers file: {error}")]
    text = path.read_text(encoding="utf-8").splitlines()
    index = _index(specs)
    problems: list[Problem] = []
    known: set[tuple[str, str]] = set()
    for playbook in playbooks:
        for h, _ in playbook.spec.walk():
            known.add((playbook.spec.id, h.id))
            if (playbook.spec.id, h.id) not in index:
                problems.append(Problem(shown, 1, f"{playbook.spec.id}/{h.id} has no layer; add it to one of "
                                        f"{', '.join(ORDER)}", "warning"))
    ids = {p.spec.id for p in playbooks}
    for pair in sorted(index):
        if pair[0] in ids and pair not in known:
            line = next((n for n, t in enumerate(text, 1) if pair[1] in t and not t.lstrip().startswith("#")), 1)
            problems.append(Problem(shown, line, f"{pair[0]}/{pair[1]} is not a hypothesis of {pair[0]}"))
    return problems


def _shown(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(LAYERS_FILE.parents[2]))
    except ValueError:
        return str(path)
