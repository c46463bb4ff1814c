"""Reading, validating and compiling playbook files; every problem carries file:line."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import jinja2
from pydantic import ValidationError

from collectors.catalogs.queries import RANGE_METRICS
from collectors.vocabulary import VOCABULARY
from collectors.yaml_safe import yaml_error
from playbooks import checked
from playbooks.cel_expr import CelError, Predicate, compile_predicate, referenced_names, top_level_clauses
from playbooks.files import PLAYBOOK_DIR as PLAYBOOK_DIR
from playbooks.files import playbook_files as playbook_files
from playbooks.model import SYMPTOMS, Chart, Hypothesis, Playbook
from playbooks.problems import PlaybookError as PlaybookError
from playbooks.problems import Problem as Problem
from playbooks.report import Rule
from playbooks.templates import check_template
from playbooks.yaml_lines import LineMap, load_with_lines

_PREDICATES = ("confirm", "likely", "rule_out", "leads")


@dataclass
class CompiledHypothesis:
    spec: Hypothesis
    predicates: dict[str, Predicate]
    children: list[CompiledHypothesis] = field(default_factory=list)
    file: str = ""  # where the hypothesis is written, for the report's trace: playbooks/crash-loop.yaml
    lines: dict[str, int] = field(default_factory=dict)  # predicate key -> its line in that file


@dataclass
class CompiledPlaybook:
    spec: Playbook
    path: str
    trigger: Predicate
    hypotheses: list[CompiledHypothesis]
    trigger_rule: Rule | None = None  # the trigger as the report's trace names it: file, line, CEL on one line
    # The trigger by construction (`derived_trigger`): the predicates of top-level hypotheses that rest on their
    # declared discriminating facts. The playbook runs when its written trigger or any of these holds.
    derived: tuple[Predicate, ...] = ()


def check_file(path: Path, *, trust_checked: bool = False) -> tuple[CompiledPlaybook | None, list[Problem]]:
    """Validate one file; return the compiled playbook only when it has no errors.

    With `trust_checked`, a file whose exact text already passed every check (playbooks.checked) skips the
    schema and the semantic checks: its validated playbook comes from the cache; it is still parsed (for the
    lines its rules cite) and compiled."""
    name = str(path)
    try:
        text = path.read_text(encoding="utf-8")
        data, lines = load_with_lines(text)
    except OSError as err:
        return None, [Problem(name, 1, f"cannot read: {err.strerror or err}")]
    except UnicodeDecodeError:
        return None, [Problem(name, 1, "not UTF-8 text")]
    except yaml_error() as err:
        mark = getattr(err, "problem_mark", None)
        line = mark.line + 1 if mark is not None else 1
        return None, [Problem(name, line, f"YAML syntax: {getattr(err, 'problem', None) or err}")]
    file_key = checked.key(text) if trust_checked else ""
    known = checked.passed(file_key) if trust_checked else None
    try:
        spec = known if known is not None else Playbook.model_validate(data)
    except ValidationError as err:
        return None, [_schema_problem(name, lines, data, dict(e)) for e in err.errors()]
    trusted = known is not None
    problems = [] if trusted else _semantic_problems(spec, path, lines)
    compiled = _compile(spec, name, lines, problems, trusted=trusted)
    if any(p.severity == "error" for p in problems):
        return None, problems
    if trust_checked and not trusted and not problems:
        checked.remember(file_key, spec)
    return compiled, problems


def _schema_problem(name: str, lines: LineMap, data: Any, error: dict[str, Any]) -> Problem:
    """A schema error at its line; a hypothesis without `chart:` is told what to declare."""
    # The chart union's tag (`series` or `none`) is pydantic's, not a key in the file.
    loc = tuple(part for i, part in enumerate(error["loc"])
                if not (i and error["loc"][i - 1] == "chart" and part in ("series", "none")))
    if error["type"] == "missing" and loc[-1:] == ("chart",):
        return Problem(name, lines.line(loc), f"hypothesis {_id_at(data, loc[:-1])!r} declares no chart: add "
                       "`chart:` with the series that shows it (metric, title, unit; the metrics are in "
                       "playbooks/queries/<id>.yaml), or `chart: {none: <why no series can show it>}`")
    return Problem(name, lines.line(loc), f"{'.'.join(map(str, loc)) or 'file'}: {error['msg']}")


def _id_at(data: Any, path: tuple[str | int, ...]) -> str:
    """The `id` of the mapping at path in the raw YAML, or '?' when there is none."""
    node = data
    for part in path:
        try:
            node = node[part]
        except (KeyError, IndexError, TypeError):
            return "?"
    return str(node.get("id", "?")) if isinstance(node, dict) else "?"


def _semantic_problems(spec: Playbook, path: Path, lines: LineMap) -> list[Problem]:
    name = str(path)
    problems: list[Problem] = []
    if spec.id != path.stem:
        problems.append(Problem(name, lines.line(("id",)), f"id {spec.id!r} does not match file name {path.stem!r}"))
    if spec.id not in SYMPTOMS:
        problems.append(Problem(name, lines.line(("id",)), f"unknown symptom {spec.id!r}; expected one of "
                                + ", ".join(SYMPTOMS)))
    declared = {f for h in spec.walk() for f in h[0].discriminating}
    problems += [Problem(name, lines.line(("not_triggering", fact)), f"not_triggering names {fact!r}, which no "
                         "hypothesis of this playbook declares as discriminating")
                 for fact in spec.not_triggering if fact not in declared]
    seen: set[str] = set()
    for h, path_ in _with_paths(spec.hypotheses, ("hypotheses",)):
        where = lines.line(path_)
        if h.id in seen:
            problems.append(Problem(name, where, f"duplicate hypothesis id {h.id!r}"))
        seen.add(h.id)
        if h.confirm is None and h.likely is None:
            problems.append(Problem(name, where, f"hypothesis {h.id!r} is unreachable: no confirm or likely "
                                    "predicate, so it can never hold"))
            for child, _ in _with_paths(h.children, ()):
                problems.append(Problem(name, where, f"hypothesis {child.id!r} is unreachable: its ancestor "
                                        f"{h.id!r} can never hold"))
        if h.see is not None and (h.see not in SYMPTOMS or h.see == spec.id):
            problems.append(Problem(name, lines.line((*path_, "see")), f"see: {h.see!r} is not another playbook; "
                                    f"expected one of {', '.join(s for s in SYMPTOMS if s != spec.id)}"))
        if h.likely is not None:
            problems += _discrimination_problems(h, name, lines.line((*path_, "likely")))
        for fact in h.cite:
            if fact not in VOCABULARY:
                problems.append(Problem(name, lines.line((*path_, "cite")), f"unknown fact {fact!r} in cite"))
        if isinstance(h.chart, Chart):
            problems += _chart_problems(h.id, h.chart, name, lines.line((*path_, "chart")))
        for i, template in enumerate([h.claim, h.falsified_by, *h.next_checks, *h.mitigations]):
            if "{" not in template:
                continue  # no template syntax, nothing that can fail to parse
            try:
                check_template(template)
            except jinja2.TemplateSyntaxError as err:
                problems.append(Problem(name, where, f"template error in {h.id!r} text #{i}: {err.message}"))
    return problems


def _discrimination_problems(h: Hypothesis, name: str, where: int) -> list[Problem]:
    """`likely` may rest only on facts the hypothesis declares as telling it apart: each of its alternatives must
    test one, so that evidence many causes share (a reset, a timeout, any CNI error) never makes it likely alone."""
    assert h.likely is not None
    if not h.discriminating:
        return [Problem(name, where, f"hypothesis {h.id!r} has likely but no discriminating: list the facts that "
                                     "tell it apart from the other causes")]
    problems = [Problem(name, where, f"unknown fact {fact!r} in discriminating of {h.id!r}")
                for fact in h.discriminating if fact not in VOCABULARY]
    tested = set(referenced_names(h.likely)[0])
    problems += [Problem(name, where, f"discriminating fact {fact!r} of {h.id!r} is not tested by its likely")
                 for fact in h.discriminating if fact in VOCABULARY and fact not in tested]
    for clause in top_level_clauses(h.likely):
        try:  # each alternative may run alone, as part of the playbook's derived trigger
            compile_predicate(clause)
        except CelError as err:
            problems.append(Problem(name, where, f"likely of {h.id!r}: alternative {clause!r} does not compile "
                                                 f"alone: {err}"))
        if not set(referenced_names(clause)[0]) & set(h.discriminating):
            problems.append(Problem(name, where, f"likely of {h.id!r} can hold on {clause!r}, which tests none of "
                                                 f"its discriminating facts ({', '.join(h.discriminating)})"))
    return problems


def _chart_problems(hid: str, chart: Chart, name: str, where: int) -> list[Problem]:
    """A chart live triage cannot fetch, in another unit than its query returns, or with a meaningless line."""
    def problem(message: str) -> Problem:
        return Problem(name, where, f"chart of {hid!r}: {message}")

    problems: list[Problem] = []
    series = RANGE_METRICS.get(chart.metric)
    if series is None:
        problems.append(problem(f"{chart.metric} is not fetched as a range query; expected one of "
                                f"{', '.join(sorted(RANGE_METRICS))} (playbooks/queries/<id>.yaml)"))
    elif chart.unit != series.unit:
        problems.append(problem(f"unit {chart.unit!r}, but the range query {series.query} returns {series.unit!r}"))
    if chart.threshold_fact is not None and chart.threshold_fact not in VOCABULARY:
        problems.append(problem(f"unknown fact {chart.threshold_fact!r} as threshold"))
    if chart.threshold is not None and chart.threshold_fact is not None:
        problems.append(problem("give threshold or threshold_fact, not both"))
    limit = {"ratio": 1.0, "percent": 100.0}.get(chart.unit)
    if limit is not None and chart.threshold is not None and not 0 <= chart.threshold <= limit:
        problems.append(problem(f"a {chart.unit} threshold lies in [0, {limit:g}], got {chart.threshold}"))
    lined = chart.threshold is not None or chart.threshold_fact is not None
    if lined and not chart.threshold_label:
        problems.append(problem("a threshold needs threshold_label (what the line is)"))
    if chart.breach == "below" and not lined:
        problems.append(problem("breach: below needs a threshold or threshold_fact to be below"))
    return problems


def _with_paths(hypotheses: list[Hypothesis], base: tuple[str | int, ...]
                ) -> list[tuple[Hypothesis, tuple[str | int, ...]]]:
    out: list[tuple[Hypothesis, tuple[str | int, ...]]] = []
    for index, h in enumerate(hypotheses):
        path = (*base, index)
        out.append((h, path))
        out.extend(_with_paths(h.children, (*path, "children")))
    return out


def _predicate(source: str, file: str, line: int, problems: list[Problem], *, trusted: bool = False
               ) -> Predicate | None:
    """The predicate, checked (it compiles, it names known facts); a trusted file's is compiled when first
    evaluated, as it compiled when its text passed every check."""
    if trusted:
        return Predicate(source)
    try:
        predicate = compile_predicate(source)
    except CelError as err:
        problems.append(Problem(file, line, f"CEL: {err}"))
        return None
    for unknown in referenced_names(source)[1]:
        problems.append(Problem(file, line, f"unknown fact {unknown!r}"))
    return predicate


def _compile(spec: Playbook, file: str, lines: LineMap, problems: list[Problem], *, trusted: bool = False
             ) -> CompiledPlaybook | None:
    trigger = _predicate(spec.trigger, file, lines.line(("trigger",)), problems, trusted=trusted)

    def build(h: Hypothesis, path: tuple[str | int, ...]) -> CompiledHypothesis:
        predicates: dict[str, Predicate] = {}
        where: dict[str, int] = {}
        for key in _PREDICATES:
            source = getattr(h, key)
            if source is not None:
                where[key] = lines.line((*path, key))
                compiled = _predicate(source, file, where[key], problems, trusted=trusted)
                if compiled is not None:
                    predicates[key] = compiled
        children = [build(c, (*path, "children", i)) for i, c in enumerate(h.children)]
        return CompiledHypothesis(h, predicates, children, _shown_path(file), where)

    hypotheses = [build(h, ("hypotheses", i)) for i, h in enumerate(spec.hypotheses)]
    if trigger is None:
        return None
    rule = Rule(file=_shown_path(file), line=lines.line(("trigger",)), cel=" ".join(spec.trigger.split()))
    return CompiledPlaybook(spec, file, trigger, hypotheses, rule)


def derived_trigger(spec: Playbook, hypotheses: list[CompiledHypothesis],
                    shared: frozenset[str]) -> tuple[Predicate, ...]:
    """When a playbook runs whatever its written trigger says: an alternative (top-level `||` clause) of a
    top-level hypothesis's `likely` holds, and it tests a discriminating fact that only this playbook declares.

    Lint makes every clause of a `likely` test a discriminating fact, so this is "a fact that tells one of the
    playbook's causes apart is read, with the value that tells it apart" - derived, never written per playbook.
    Left out, because they tell causes apart without showing this symptom:
    - facts several playbooks declare (`shared`): an Xid or a restart count is a cause behind many symptoms;
    - facts the playbook lists under `not_triggering`, with why (a generic reading many healthy pastes carry);
    - children (explored under their parent; alone, a busy GPU says nothing about a pending pod) and hypotheses
      that point to another playbook (`see:`).
    The mere presence of a fact is not enough: `gpu.util_percent` is read from every nvidia-smi table."""
    quiet = shared | set(spec.not_triggering)
    out: dict[str, Predicate] = {}
    for node in hypotheses:
        if node.spec.see is not None or node.spec.likely is None:
            continue
        telling = set(node.spec.discriminating) - quiet
        for clause in top_level_clauses(node.spec.likely):
            if telling & set(referenced_names(clause)[0]):
                # Compiled when first evaluated: lint compiles every alternative (_likely_problems).
                out.setdefault(" ".join(clause.split()), Predicate(clause))
    return tuple(out.values())


def shared_facts(specs: list[Playbook]) -> frozenset[str]:
    """Discriminating facts that more than one playbook declares."""
    seen: dict[str, int] = {}
    for spec in specs:
        for name in {f for h, _ in spec.walk() for f in h.discriminating}:
            seen[name] = seen.get(name, 0) + 1
    return frozenset(name for name, count in seen.items() if count > 1)


@cache  # asked once per hypothesis, and resolving the path is a system call per folder in it
def _shown_path(file: str) -> str:
    """The file as a reader finds it: relative to the repository for bundled playbooks, else as given."""
    path = Path(file)
    try:
        return str(path.resolve().relative_to(PLAYBOOK_DIR.parent))
    except ValueError:
        return file


def load_playbooks(directory: Path = PLAYBOOK_DIR) -> list[CompiledPlaybook]:
    """All playbooks in a folder; refuses to load any that has an error."""
    loaded: list[CompiledPlaybook] = []
    errors: list[Problem] = []
    for path in playbook_files(directory):
        compiled, problems = check_file(path, trust_checked=True)
        errors.extend(p for p in problems if p.severity == "error")
        if compiled is not None:
            loaded.append(compiled)
    if errors:
        raise PlaybookError(errors)
    return with_derived_triggers(loaded)


def with_derived_triggers(playbooks: list[CompiledPlaybook]) -> list[CompiledPlaybook]:
    """The playbooks, each with the trigger derived from its hypotheses (derived_trigger) beside its own: which
    facts are shared is known only once all are loaded."""
    shared = shared_facts([p.spec for p in playbooks])
    for playbook in playbooks:
        playbook.derived = (symptom_trigger(playbook.spec.id),
                            *derived_trigger(playbook.spec, playbook.hypotheses, shared))
    return playbooks


def symptom_trigger(symptom: str) -> Predicate:
    """A playbook runs when the evidence holds a message that shows its symptom: the catalogs of upstream messages
    (line signals, stated facts, access-log and alert catalogs) name, per entry, the symptom it is evidence of, and
    the parsers report it as `evidence.symptoms`. So "which messages mean this symptom" is data beside the message,
    not a clause written into each playbook's trigger."""
    return Predicate(f'"{symptom}" in evidence.symptoms')  # compiled when first evaluated: fixed text
