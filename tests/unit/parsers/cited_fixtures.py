"""What every fixture-driven parser test file checks, written once: each expected fact read and cited to its lines,
and every fixture of the parser read without a problem; or each whole capture read into exactly its rows."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from pathlib import Path

import pytest

from collectors.models import ParseResult

Parse = Callable[[str], ParseResult]
Row = tuple[str, object, int, int]  # fact name, value, first cited line, last cited line


def rows(result: ParseResult) -> list[Row]:
    """Each fact as a row, in emission order."""
    return [(f.name, f.value, f.citation.start, f.citation.end) for f in result.facts]


def row_set(result: ParseResult, without: Collection[str] = ()) -> set[Row]:
    """The rows where their order is not the point, but for the facts named `without`; list values as tuples, so
    that rows hash."""
    return {(name, tuple(value) if isinstance(value, list) else value, start, end)
            for name, value, start, end in rows(result) if name not in without}


def cited(result: ParseResult) -> dict[str, list[tuple[object, int, int, str]]]:
    """fact name -> [(value, first line, last line, subject)] in emission order."""
    out: dict[str, list[tuple[object, int, int, str]]] = {}
    for fact in result.facts:
        out.setdefault(fact.name, []).append((fact.value, fact.citation.start, fact.citation.end, fact.subject))
    return out


def fixture_tests(parse: Parse, expected: Sequence[tuple[str, str, object, int, int, str]],
                  fixtures: Path) -> tuple[Callable[..., None], Callable[[str], None]]:
    """The two tests, bound to one parser: `parse` reads a fixture by name; `expected` rows are (fixture, fact,
    value, first line, last line, subject). A test module assigns them to its own `test_` names."""

    @pytest.mark.parametrize(("fixture", "name", "value", "start", "end", "subject"), expected)
    def test_fact_is_read_and_cited(fixture: str, name: str, value: object, start: int, end: int,
                                    subject: str) -> None:
        assert (value, start, end, subject) in cited(parse(fixture)).get(name, [])

    @pytest.mark.parametrize("fixture", sorted(p.name for p in fixtures.iterdir()))
    def test_fixtures_parse_cleanly(fixture: str) -> None:
        assert parse(fixture).problems == []

    return test_fact_is_read_and_cited, test_fixtures_parse_cleanly


def capture_test(run: Parse, cases: Sequence[tuple[str, list[Row]]], fixtures: Path) -> Callable[..., None]:
    """The test of a parser's whole captures: each fixture's text, read by `run`, gives exactly its rows in order and
    no problem. A test module assigns it to its own `test_` name."""

    @pytest.mark.parametrize(("name", "expected"), cases, ids=[c[0] for c in cases])
    def test_fixture_facts_and_citations(name: str, expected: list[Row]) -> None:
        result = run((fixtures / name).read_text(encoding="utf-8"))
        assert rows(result) == expected
        assert result.problems == []

    return test_fixture_facts_and_citations
