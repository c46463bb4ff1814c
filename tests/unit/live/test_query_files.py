"""The query files beside the playbooks (playbooks/queries/): their checks, `playbooks lint` on them, the full PromQL
grammar through promtool, and the generic reader of the facts they declare by value."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from collectors.catalogs.queries import (
    MARKERS,
    bundled,
    load_catalog,
    markers_of,
    promql_problems,
    with_samples,
)
from collectors.models import Artifact, ArtifactKind
from collectors.query_facts import declared_facts
from playbooks.query_files import query_problems
from tests.harness.prometheus import require_binary

GOOD = """\
queries:
  - name: gpu-pcie-replays
    promql: max by (Hostname, gpu) (DCGM_FI_DEV_PCIE_REPLAY_COUNTER{<gpus>})
    value: {fact: gpu.pcie_replays}
series:
  DCGM_FI_DEV_PCIE_REPLAY_COUNTER:
    query: gpu-pcie-replays-range
    promql: sum by (Hostname, gpu) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{<gpus>}[<window>]))
    unit: per-second
    counter: true
"""


def write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def test_the_bundled_files_are_clean_and_every_entry_has_a_kebab_name() -> None:
    assert query_problems() == []
    catalog = bundled()
    assert len(catalog.queries) >= 30 and len(catalog.series) >= 60
    assert all(q.file and q.promql for q in catalog.queries)


def test_a_good_file_loads() -> None:
    catalog = load_catalog(Path(__file__).parent / "missing-folder")  # no files: an empty catalog
    assert catalog.queries == () and catalog.series == {}


@pytest.mark.parametrize(("change", "line", "message"), [
    (("<gpus>})\n    value", "<gpu>})\n    value"), 3, "unknown marker <gpu>"),
    (("COUNTER{<gpus>})\n    value", "COUNTER{<gpus>}\n    value"), 3, "unclosed bracket"),
    (("fact: gpu.pcie_replays", "fact: gpu.pcie_replay"), 4, "value needs `fact:` naming a known fact"),
    (("fact: gpu.pcie_replays", "fact: gpu.fallen_off_bus"), 4, "a query's value can only give a number"),
    (("unit: per-second", "unit: per-minute"), 9, "unit 'per-minute'"),
    (("[<window>]", "[5m]"), 8, "a counter is charted as a rate over <window>"),
    (("    counter: true\n", "    counter: true\n    colour: red\n"), 11, "unknown field 'colour'"),
    (("name: gpu-pcie-replays\n", "name: GPU replays\n"), 2, "kebab-case name"),
])
def test_lint_reports_each_problem_at_its_line(tmp_path: Path, change: tuple[str, str], line: int,
                                               message: str) -> None:
    assert change[0] in GOOD
    write(tmp_path, "gpu-xid.yaml", GOOD.replace(*change))
    problems = query_problems(tmp_path)
    assert [(Path(p.file).name, p.line) for p in problems] == [("gpu-xid.yaml", line)]
    assert message in problems[0].message


def test_lint_finds_names_declared_twice_and_files_of_no_playbook(tmp_path: Path) -> None:
    write(tmp_path, "gpu-xid.yaml", GOOD)
    write(tmp_path, "nccl-hang.yaml", GOOD)
    write(tmp_path, "gpu-xidd.yaml", "queries: []\n")
    messages = sorted(f"{Path(p.file).name}:{p.line}: {p.message}" for p in query_problems(tmp_path))
    assert messages[0].startswith("gpu-xidd.yaml:1: gpu-xidd.yaml names no playbook")
    assert "nccl-hang.yaml:2: query gpu-pcie-replays is also declared in gpu-xid.yaml" in messages
    assert "nccl-hang.yaml:6: series DCGM_FI_DEV_PCIE_REPLAY_COUNTER is also declared in gpu-xid.yaml" in messages


def test_lint_reports_broken_yaml_at_its_line(tmp_path: Path) -> None:
    write(tmp_path, "gpu-xid.yaml", "queries:\n  - name: [\n")
    (problem,) = query_problems(tmp_path)
    assert problem.line == 3 and problem.message.startswith("not YAML")


def test_playbooks_lint_reports_query_files(tmp_path: Path) -> None:
    write(tmp_path / "queries", "latency.yaml", GOOD.replace("<gpus>})\n    value", "<gpu>})\n    value"))
    done = subprocess.run([sys.executable, "-m", "bot.cli", "playbooks", "lint", str(tmp_path / "queries")],
                          capture_output=True, text=True, check=False, timeout=120)
    assert done.returncode == 1
    assert "latency.yaml:3: error: unknown marker <gpu>" in done.stdout


@pytest.mark.parametrize(("promql", "expected"), [
    ('sum(rate(x{a="(",<pods>}[5m]))', []),
    ("sum(rate(x[5m])", ["unclosed bracket: expected ')'"]),
    ("x{<pods>}]", ["unbalanced ']'"]),
    ('x{a="b}', ["a string is not closed", "unclosed bracket: expected '}'"]),
    ("x{,<pods>}", ["an empty label matcher (a stray comma in a selector)"]),
])
def test_the_structural_check(promql: str, expected: list[str]) -> None:
    assert promql_problems(promql) == expected


def test_every_entry_is_promql_promtool_parses(tmp_path: Path) -> None:
    """The full grammar: each entry, its markers filled with sample values, as a recording rule promtool checks."""
    promtool = require_binary("promtool")
    catalog = bundled()
    entries = [(q.name, q.promql) for q in catalog.queries] + [(s.query, s.promql) for s in catalog.series.values()]
    assert {m for _, promql in entries for m in markers_of(promql)} <= set(MARKERS)
    rules = [{"record": "triagebot:" + name.replace("-", "_"), "expr": with_samples(promql)}
             for name, promql in entries]
    path = tmp_path / "rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "queries", "rules": rules}]}), encoding="utf-8")
    done = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{len(rules)} rules found" in done.stdout


def _answer(name: str, body: object) -> Artifact:
    return Artifact(id=f"prom-{name}.json", kind=ArtifactKind.PROMETHEUS_QUERY, source="prometheus",
                    command="q", content=json.dumps(body))


def _vector(*values: str) -> dict[str, object]:
    result = [{"metric": {"gpu": str(i)}, "value": [1, v]} for i, v in enumerate(values)]
    return {"status": "success", "data": {"resultType": "vector", "result": result}}


def test_the_generic_reader_takes_the_extreme_the_vocabulary_merges_on(tmp_path: Path) -> None:
    write(tmp_path, "gpu-xid.yaml", GOOD)
    write(tmp_path, "oom-killed.yaml", "queries:\n  - name: free-memory\n    promql: x{<instance>}\n"
                                       "    value: {fact: node.memory_available_ratio, scale: 0.01}\n")
    catalog = load_catalog(tmp_path)
    (replays,) = declared_facts(_answer("gpu-pcie-replays", _vector("3", "212", "NaN")), catalog)
    assert (replays.name, replays.value) == ("gpu.pcie_replays", 212)
    assert replays.citation.artifact == "prom-gpu-pcie-replays.json"
    (free,) = declared_facts(_answer("free-memory", _vector("40", "7.5")), catalog)  # a `min` fact, in percent
    assert free.value == pytest.approx(0.075)


@pytest.mark.parametrize("content", ["not json", "[]", '{"status": "error"}', json.dumps(_vector()),
                                     json.dumps(_vector("NaN", "+Inf"))])
def test_the_generic_reader_gives_nothing_for_an_answer_without_numbers(tmp_path: Path, content: str) -> None:
    write(tmp_path, "gpu-xid.yaml", GOOD)
    artifact = Artifact(id="prom-gpu-pcie-replays.json", kind=ArtifactKind.PROMETHEUS_QUERY, content=content)
    assert declared_facts(artifact, load_catalog(tmp_path)) == []


def test_the_generic_reader_reads_only_queries_that_declare_a_value() -> None:
    assert declared_facts(_answer("gpu-temp-max", _vector("91"))) == []  # the parser reads that one
    assert declared_facts(_answer("gpu-pcie-replays", _vector("1"))) == []  # not a bundled query
