"""Precision by rule: `likely` rests on declared discriminating facts, and generic evidence makes nothing likely."""

from __future__ import annotations

from pathlib import Path

import pytest

from playbooks.cel_expr import top_level_clauses
from playbooks.loader import check_file, load_playbooks
from playbooks.precision import Situation, generic_problems, load_situations

HEADER = "id: nccl-hang\ntitle: t\ntrigger: 'nccl.watchdog_timeout'\nsources: [nccl-log]\nhypotheses:\n"


def hypothesis(likely: str, discriminating: str | None) -> str:
    declared = f"    discriminating: {discriminating}\n" if discriminating is not None else ""
    return (f"  - id: network-blocked\n    claim: c\n    likely: '{likely}'\n{declared}"
            "    falsified_by: f\n    source: [s]\n    chart: {none: nothing exports the bootstrap's sockets.}\n")


@pytest.mark.parametrize(
    ("expression", "clauses"),
    [
        ("a", ["a"]),
        ("a || (b && c)", ["a", "b && c"]),
        ("(a || b)", ["a", "b"]),
        ("(a || b) && (c)", ["(a || b) && (c)"]),
        ('"x||y" in z || q', ['"x||y" in z', "q"]),
        ("'it\\'s || not' in z", ["'it\\'s || not' in z"]),
        ("x.exists(e, e == 1 || e == 2) || y", ["x.exists(e, e == 1 || e == 2)", "y"]),
        ("(a) || ((b) || c)", ["a", "b", "c"]),
    ],
)
def test_clauses_split_only_at_top_level_or(expression: str, clauses: list[str]) -> None:
    assert top_level_clauses(expression) == clauses


@pytest.mark.parametrize(
    ("likely", "declared", "needle"),
    [
        ('"timeout" in nccl.errors', None, "has likely but no discriminating"),
        ('"timeout" in nccl.errors || netpol.restricts_pods', "[netpol.restricts_pods]",
         "can hold on '\"timeout\" in nccl.errors', which tests none of its discriminating facts"),
        ("netpol.restricts_pods", "[netpol.restricts_pods, nccl.errors]",
         "discriminating fact 'nccl.errors' of 'network-blocked' is not tested by its likely"),
        ("netpol.restricts_pods", "[netpol.nope]", "unknown fact 'netpol.nope' in discriminating"),
    ],
)
def test_likely_must_rest_on_declared_discriminating_facts(tmp_path: Path, likely: str, declared: str | None,
                                                           needle: str) -> None:
    path = tmp_path / "nccl-hang.yaml"
    path.write_text(HEADER + hypothesis(likely, declared), encoding="utf-8")
    compiled, problems = check_file(path)
    assert compiled is None
    assert [p.line for p in problems if needle in p.message] == [8], [str(p) for p in problems]


def test_a_likely_whose_every_clause_tests_a_declared_fact_passes(tmp_path: Path) -> None:
    path = tmp_path / "nccl-hang.yaml"
    path.write_text(HEADER + hypothesis('netpol.restricts_pods && "timeout" in nccl.errors',
                                        "[netpol.restricts_pods]"), encoding="utf-8")
    compiled, problems = check_file(path)
    assert compiled is not None, [str(p) for p in problems]


def test_generic_evidence_is_caught_where_a_rule_rests_on_it(tmp_path: Path) -> None:
    """A rule that declares a generic fact as discriminating passes the clause check; the situations catch it."""
    path = tmp_path / "nccl-hang.yaml"
    path.write_text(HEADER + hypothesis('"connection-reset" in nccl.errors', "[nccl.errors]"), encoding="utf-8")
    compiled, problems = check_file(path)
    assert compiled is not None and not problems
    reset = Situation(id="reset", facts={"nccl.errors": ["connection-reset"]}, why="a peer died")
    refused = Situation(id="refused", facts={"nccl.errors": ["connection-refused"]}, why="w")
    found = generic_problems([compiled], [reset, refused])
    assert [(p.line, p.message.split(" (")[0]) for p in found] == [
        (8, "'network-blocked' is likely on generic evidence 'reset'")]
    allowed = Situation(id="reset", facts={"nccl.errors": ["connection-reset"]}, why="w",
                        may_hold={"nccl-hang/network-blocked": "its claim is the generic reading"})
    assert generic_problems([compiled], [allowed]) == []


def test_situations_name_known_facts_and_hypotheses() -> None:
    typo = Situation(id="typo", facts={"nccl.erors": ["timeout"]}, why="w", may_hold={"nccl-hang/nope": "w"})
    messages = [p.message for p in generic_problems(load_playbooks(), [typo])]
    assert "situation 'typo': unknown fact 'nccl.erors'" in messages
    assert "situation 'typo': may_hold names no hypothesis 'nccl-hang/nope'" in messages


def test_no_bundled_hypothesis_holds_on_generic_evidence() -> None:
    situations = load_situations()
    assert len(situations) >= 10
    assert [str(p) for p in generic_problems(load_playbooks(), situations)] == []
