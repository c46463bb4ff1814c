"""Merging facts from several artifacts and exposing them to CEL."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.factset import FactSet
from collectors.models import Citation, Fact
from playbooks.cel_expr import activation, compile_predicate


def fact(name: str, value: Any, artifact: str = "a1", line: int = 1) -> Fact:
    return Fact(name=name, value=value, citation=Citation(artifact=artifact, start=line, end=line))


@pytest.mark.parametrize(
    ("name", "values", "merged"),
    [
        ("xid.codes", [[79], [45, 79], [48]], [79, 45, 48]),
        ("kernel.oom_kill", [False, True, False], True),
        ("xid.count", [2, 3], 5),
        ("cpu.throttled_ratio", [0.1, 0.4, 0.2], 0.4),
        ("gpu.visible_count", [8, 7], 7),
        ("pod.phase", ["Pending", "Running"], "Pending"),
        # A bare ErrImagePull row (other) read before the event that says why: the cause wins.
        ("image.pull_error", ["other", "denied-or-missing", "not-found"], "denied-or-missing"),
        ("image.pull_error", ["not-found", "other"], "not-found"),
    ],
)
def test_merge_rules(name: str, values: list[Any], merged: Any) -> None:
    fs = FactSet([fact(name, v, line=i) for i, v in enumerate(values, 1)])
    assert fs.value(name) == merged
    assert len(fs.get(name).sources) == len(values)  # type: ignore[union-attr]


def test_cel_context_nests_names_and_keeps_every_root() -> None:
    ctx = FactSet([fact("container.last_terminated.reason", "OOMKilled")]).cel_context()
    assert ctx["container"] == {"last_terminated": {"reason": "OOMKilled"}, "waiting": {}}
    assert ctx["pod"] == {"status": {}} and ctx["xid"] == {}


@pytest.mark.parametrize(("predicate", "facts", "result"), [
    # A guard on a name two levels down is false, not an error, when nothing under its branch was read, so a
    # negated guard holds and the alternative it guards can still fire.
    ("has(container.last_terminated.reason)", [], False),
    ('!(has(container.last_terminated.reason) && container.last_terminated.reason == "OOMKilled")', [], True),
    ('!(has(container.last_terminated.reason) && container.last_terminated.reason == "OOMKilled")',
     [("container.last_terminated.reason", "OOMKilled")], False),
    ("has(container.last_terminated.exit_code)", [("container.last_terminated.reason", "Error")], False),
    ("has(pod.status.reason)", [("pod.phase", "Failed")], False),
    # An absent name compared directly still gives no answer: the evidence it needs is missing.
    ("container.last_terminated.exit_code == 137", [], None),
])
def test_has_on_a_branch_nothing_was_read_under(predicate: str, facts: list[tuple[str, Any]],
                                                result: bool | None) -> None:
    context = activation(FactSet([fact(n, v) for n, v in facts]).cel_context())
    assert compile_predicate(predicate).evaluate(context) is result


def test_unknown_names_are_ignored() -> None:
    assert FactSet([fact("not.a.fact", 1)]).values() == {}


def test_citation_lists_each_source_once() -> None:
    fs = FactSet([fact("xid.codes", [79], "dmesg", 3), fact("xid.codes", [79], "dmesg", 3),
                  fact("xid.codes", [45], "dcgm", 9)])
    assert fs.get("xid.codes").cite() == "xid.codes = [79, 45] (dmesg:3, dcgm:9)"  # type: ignore[union-attr]
