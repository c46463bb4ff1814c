"""The one guard around every parser call (collectors.parsers.contract.guarded): a parser's bug costs its own
reading, says which parser failed with which exception, and never hides running out of memory."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers import registry
from collectors.parsers.contract import guarded

XID = "[1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus."


def broken(_: Artifact) -> ParseResult:
    raise KeyError("status")


def test_a_parser_that_raises_gives_a_problem_naming_itself_and_the_exception() -> None:
    result = guarded(broken, Artifact(id="a", kind=ArtifactKind.KERNEL_LOG, content="x"))
    assert result.facts == []
    assert result.problems == ["internal: test_parser_guard parser failed on kernel-log: KeyError: 'status'"]


def test_running_out_of_memory_is_not_turned_into_a_problem() -> None:
    def exhausted(_: Artifact) -> ParseResult:
        raise MemoryError

    with pytest.raises(MemoryError):
        guarded(exhausted, Artifact(id="a", kind=ArtifactKind.KERNEL_LOG, content="x"))


def test_through_the_registry_a_broken_parser_costs_only_its_own_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.PARSERS, ArtifactKind.KERNEL_LOG, broken)
    result = registry.parse_artifact(Artifact(id="a", kind=ArtifactKind.KERNEL_LOG, source="paste", content=XID))
    assert [p for p in result.problems if "KeyError" in p] == [
        "internal: test_parser_guard parser failed on kernel-log: KeyError: 'status'"]
    # The pasted text is still read for its signals: the Xid line is not lost with the structural parser.
    assert {f.name: f.value for f in result.facts}.get("gpu.fallen_off_bus") is True


def test_a_line_handed_from_the_signals_to_a_broken_parser_costs_only_that_parser(
        monkeypatch: pytest.MonkeyPatch) -> None:
    text = XID + "\nsome prose about it"
    healthy = registry.parse_artifact(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))
    handed = {f.parser.split(" ")[0] for f in healthy.facts if "(" in f.parser}
    assert handed, healthy.facts  # the Xid line is handed to a line parser, so breaking it below means something
    for kind, name in registry.NAMES.items():
        if name in handed:
            monkeypatch.setitem(registry.PARSERS, kind, broken)
    result = registry.parse_artifact(Artifact(id="a", kind=ArtifactKind.TEXT, content=text))
    assert not [f for f in result.facts if f.parser.split(" ")[0] in handed]
    assert [f for f in result.facts if f.parser.startswith("signal")] == [
        f for f in healthy.facts if f.parser.startswith("signal")]
