"""Parsed data remembered by content hash (collectors/parsed_cache.py): what comes back is what the parse gave, a
changed text is parsed again, and a cache that is off, broken or cannot hold the value is simply not used."""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

import pytest

from collectors.parsed_cache import remembered
from playbooks.templates import compile_template
from playbooks.yaml_lines import load_with_lines


class Counting:
    def __init__(self, value: Any = None) -> None:
        self.calls = 0
        self.value = value

    def __call__(self, text: str) -> Any:
        self.calls += 1
        return self.value if self.value is not None else {"text": text, "lines": [1, 2.5, None, True]}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path))
    return tmp_path


def test_a_text_is_parsed_once_and_comes_back_equal(cache: Path) -> None:
    parse = Counting()
    first = remembered("test", "a: 1", parse)
    again = remembered("test", "a: 1", parse)
    assert again == first == {"text": "a: 1", "lines": [1, 2.5, None, True]}
    assert parse.calls == 1
    assert len(list((cache / "parsed").iterdir())) == 1


def test_another_text_or_kind_is_parsed_again(cache: Path) -> None:
    parse = Counting()
    remembered("test", "a: 1", parse)
    remembered("test", "a: 2", parse)
    remembered("other", "a: 1", parse)
    assert parse.calls == 3


def test_a_broken_cache_file_is_parsed_again(cache: Path) -> None:
    parse = Counting()
    remembered("test", "a: 1", parse)
    for path in (cache / "parsed").iterdir():
        path.write_bytes(b"\xff\x00 not marshal")
    assert remembered("test", "a: 1", parse)["text"] == "a: 1"
    assert parse.calls == 2


def test_caching_off_and_values_marshal_cannot_keep(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dated = Counting({"when": datetime.date(2026, 11, 29)})  # a YAML date
    assert remembered("test", "when: 2026-11-29", dated) == {"when": datetime.date(2026, 11, 29)}
    assert not (cache / "parsed").exists() or not list((cache / "parsed").iterdir())
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", "")
    parse = Counting()
    remembered("test", "a: 1", parse)
    remembered("test", "a: 1", parse)
    assert parse.calls == 2


def test_lines_and_templates_from_the_cache_equal_fresh_ones(cache: Path) -> None:
    text = "id: demo\nhypotheses:\n  - id: one\n    checks:\n      - kubectl -n {{ namespace }} get pods\n"
    fresh = load_with_lines(text)
    cached = load_with_lines(text)  # the second load reads the cache
    assert cached[0] == fresh[0]
    assert [cached[1].line(p) for p in (("id",), ("hypotheses", 0, "checks", 0))] == [1, 5]
    source = "kubectl -n {{ namespace | sh }} logs {{ pod }}"
    compile_template.cache_clear()
    first = compile_template(source).render(namespace="shop floor")
    compile_template.cache_clear()
    assert compile_template(source).render(namespace="shop floor") == first == "kubectl -n 'shop floor' logs <pod>"
