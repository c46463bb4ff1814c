"""The /ask corpus: every playbook hypothesis, Xid entry, interview question and doc section is a passage whose
cite points at a file that exists and an anchor that is in it."""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
import yaml

import bot
from bot.assist import corpus as corpus_module
from bot.assist.corpus import MAX_PASSAGE_CHARS, Corpus, Passage, build_corpus, doc_passages, neutral, slug
from bot.config import ConfigError
from collectors.catalogs.xid import load_catalog
from drills.questions import QuestionBank, load_bank
from playbooks.loader import playbook_files
from playbooks.model import Playbook

ROOT = Path(bot.__file__).resolve().parents[1]


@cache
def corpus() -> Corpus:
    return build_corpus()


@cache
def by_id() -> dict[str, Passage]:
    return {p.id: p for p in corpus().passages}


# The playbooks and the question bank are parsed once per run, not once per parametrised case (parsing every YAML
# file again cost seconds per case); the tests only read them.
@cache
def _playbooks() -> tuple[Playbook, ...]:
    return tuple(Playbook.model_validate(yaml.safe_load(p.read_text(encoding="utf-8"))) for p in playbook_files())


@cache
def _bank() -> QuestionBank:
    return load_bank()


HYPOTHESES = [(book.id, h.id, tuple(h.source)) for book in _playbooks() for h, _ in book.walk()]
XIDS = sorted(load_catalog())
QUESTIONS = sorted(_bank().questions)


@pytest.mark.parametrize(("playbook", "hypothesis", "sources"), HYPOTHESES,
                         ids=[f"{p}#{h}" for p, h, _ in HYPOTHESES])
def test_every_hypothesis_is_a_passage(playbook: str, hypothesis: str, sources: tuple[str, ...]) -> None:
    passage = by_id().get(f"playbook:{playbook}#{hypothesis}")
    assert passage is not None, f"no passage for {playbook}#{hypothesis}"
    assert passage.kind == "playbook"
    assert passage.cite == f"playbooks/{playbook}.yaml#{hypothesis}"
    assert passage.sources == list(sources)
    assert "Falsified by:" in passage.text


@pytest.mark.parametrize("playbook", [b.id for b in _playbooks()])
def test_every_playbook_has_a_summary_passage(playbook: str) -> None:
    passage = by_id()[f"playbook:{playbook}"]
    book = next(b for b in _playbooks() if b.id == playbook)
    assert passage.title.startswith(book.title)
    assert all(h.id in passage.text for h, _ in book.walk())


@pytest.mark.parametrize("code", XIDS)
def test_every_xid_is_a_passage(code: int) -> None:
    entry = load_catalog()[code]
    passage = by_id()[f"xid:{code}"]
    assert passage.kind == "xid" and passage.cite == f"collectors/catalogs/xid.yaml#{code}"
    assert passage.title == f"Xid {code}: {entry.name}"
    assert passage.sources == list(entry.sources)


@pytest.mark.parametrize("question_id", QUESTIONS)
def test_every_question_is_a_passage(question_id: str) -> None:
    bank = _bank()
    question = bank.questions[question_id]
    passage = by_id()[f"question:{question_id}"]
    assert passage.kind == "question"
    assert passage.cite == f"drills/questions/{bank.files[question_id].name}#{question_id}"
    assert " ".join(question.question.split()) in passage.title
    assert " ".join(question.model_answer.split()) in passage.text
    assert all(p.point in passage.text for p in question.expected_points)
    assert passage.sources == list(question.source)


def _anchor_in(path: Path, anchor: str, kind: str) -> bool:
    text = path.read_text(encoding="utf-8")
    if kind == "xid":
        return re.search(rf"^{re.escape(anchor)}:", text, re.M) is not None
    if kind in ("playbook", "question"):
        line = r"summary:.*" if anchor == "summary" else rf"\s*-?\s*id:\s*{re.escape(anchor)}\s*"
        return re.search(rf"^{line}$", text, re.M) is not None
    # Docs: the anchor is the slug of a heading (outside code), with -1, -2 ... for repeated headings.
    headings = [slug(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*$", _without_code(text), re.M)]
    seen: dict[str, int] = {}
    anchors = set()
    for h in headings:
        anchors.add(f"{h}-{seen[h]}" if h in seen else h)
        seen[h] = seen.get(h, 0) + 1
    return anchor in anchors


def _without_code(text: str) -> str:
    return re.sub(r"^\s*```.*?^\s*```", "", text, flags=re.M | re.S)


@pytest.mark.parametrize("kind", ["playbook", "xid", "question", "doc"])
def test_every_cite_resolves_to_a_file_and_anchor(kind: str) -> None:
    passages = [p for p in corpus().passages if p.kind == kind]
    assert passages, f"no {kind} passages"
    broken = []
    for p in passages:
        file, _, anchor = p.cite.partition("#")
        path = ROOT / file
        if not path.is_file() or not anchor or not _anchor_in(path, anchor, kind):
            broken.append(p.cite)
    assert not broken, f"cites that do not resolve: {broken[:10]}"


def test_ids_are_unique_and_passages_bounded() -> None:
    ids = [p.id for p in corpus().passages]
    assert len(ids) == len(set(ids))
    too_long = [p.id for p in corpus().passages if len(p.text) > 2 * MAX_PASSAGE_CHARS]
    assert not too_long
    assert not [p.id for p in corpus().passages if not p.text.strip() or not p.title.strip()]


def test_docs_are_sections_of_the_bundled_docs() -> None:
    docs = [p for p in corpus().passages if p.kind == "doc"]
    files = {p.cite.split("#")[0] for p in docs}
    assert "docs/facts.md" in files and "docs/slack.md" in files and "docs/install.md" in files
    assert "docs/benchmarks.md" not in files
    assert corpus().docs_dir == str(ROOT / "docs") and not corpus().notes


@pytest.mark.parametrize(("template", "expected"), [
    ("{{ container }} in {{ pod }} was killed", "<container> in <pod> was killed"),
    ("kubectl get pod {{ pod|sh }} -n {{ namespace|sh }}", "kubectl get pod <pod> -n <namespace>"),
    ('up{namespace="{{ namespace|promql }}"}', 'up{namespace="<namespace>"}'),
    ("{% if node %}on {{ node }}{% endif %} now", "on <node> now"),
    ("{{ 'x' ~ y }} {# comment #}done", "<value> done"),
    ("no template at all", "no template at all"),
])
def test_templates_render_neutrally(template: str, expected: str) -> None:
    assert neutral(template) == expected


def test_no_passage_shows_raw_jinja() -> None:
    raw = [p.id for p in corpus().passages if p.kind == "playbook" and re.search(r"\{\{|\{%", p.text)]
    assert not raw


MARKDOWN = """# Guide

Intro paragraph.

```sh
# a shell comment, not a heading
echo hi
```

## Setup

Setup text.

## Setup

Second setup section.

### Deep dive: the `thing` (v2)

Deep text.
"""


@pytest.mark.parametrize(("passage_id", "cite", "title", "contains"), [
    ("doc:guide.md#guide", "mydocs/guide.md#guide", "Guide", "# a shell comment, not a heading"),
    ("doc:guide.md#setup", "mydocs/guide.md#setup", "Guide > Setup", "Setup text."),
    ("doc:guide.md#setup-1", "mydocs/guide.md#setup-1", "Guide > Setup", "Second setup section."),
    ("doc:guide.md#deep-dive-the-thing-v2", "mydocs/guide.md#deep-dive-the-thing-v2",
     "Guide > Setup > Deep dive: the `thing` (v2)", "Deep text."),
])
def test_markdown_sections(tmp_path: Path, passage_id: str, cite: str, title: str, contains: str) -> None:
    folder = tmp_path / "mydocs"
    folder.mkdir()
    (folder / "guide.md").write_text(MARKDOWN, encoding="utf-8")
    (folder / "benchmarks.md").write_text("# Benchmarks\n\nnumbers\n", encoding="utf-8")
    passages = {p.id: p for p in doc_passages(folder)}
    assert len(passages) == 4
    p = passages[passage_id]
    assert (p.cite, p.title) == (cite, title)
    assert contains in p.text


def test_long_sections_are_split_at_paragraphs(tmp_path: Path) -> None:
    paragraphs = [f"Paragraph {i} " + "word " * 60 for i in range(30)]
    (tmp_path / "long.md").write_text("# Long\n\n" + "\n\n".join(paragraphs) + "\n", encoding="utf-8")
    parts = doc_passages(tmp_path)
    assert len(parts) > 3
    assert [p.id for p in parts][:2] == ["doc:long.md#long", "doc:long.md#long/2"]
    assert all(len(p.text) <= MAX_PASSAGE_CHARS for p in parts)
    assert all(p.cite.endswith("long.md#long") for p in parts)
    joined = "\n\n".join(p.text for p in parts)
    assert all(par.strip() in joined for par in paragraphs)  # nothing lost, no paragraph cut in two


def test_missing_bundled_docs_are_skipped_and_said(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus_module, "bundled_docs_dir", lambda: None)
    built = build_corpus()
    assert built.counts()["doc"] == 0 and built.docs_dir is None
    assert built.notes and "no docs folder" in built.notes[0]
    assert built.counts()["playbook"] == corpus().counts()["playbook"]


def test_a_named_docs_dir_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="docs_dir"):
        build_corpus(tmp_path / "absent")
