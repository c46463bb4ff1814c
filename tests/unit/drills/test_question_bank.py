"""The interview question bank: it loads, it is complete, it covers every seed question, and it grades itself."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from drills.grading import NUMBER, grade, words
from drills.questions import QUESTIONS_DIR, Question, QuestionBankError, load_bank, load_file

ROOT = Path(__file__).resolve().parents[3]
BANK = load_bank()
QUESTIONS = BANK.select()
SEED_ROWS: list[dict[str, Any]] = yaml.safe_load((Path(__file__).parent / "seed_questions.yaml").read_text())
_CITE = re.compile(r"\b(00[0-4]):(\d+)(?:-(\d+))?\b")

# Answers that have nothing to do with GPU clusters; each must score low on every question.
OFF_TOPIC = [
    "I enjoy baking sourdough bread on weekends and walking my dog in the park with friends.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore.",
    "My favourite painter is Monet; his water lilies hang in a museum in Paris that I visited twice.",
]
# Words that must not make up a keyword group on their own: they appear in almost any answer.
STOP_WORDS = {"a", "an", "the", "and", "or", "of", "to", "in", "on", "is", "it", "i", "we", "you", "for", "with",
              "be", "do", "what", "how", "that", "this", "at", "by", "as", "are", "was", "so", "if", "then"}


def _ids(qs: list[Question]) -> list[str]:
    return [q.id for q in qs]


def test_every_file_loads_and_is_a_topic() -> None:
    files = sorted(QUESTIONS_DIR.glob("*.yaml"))
    assert len(files) >= 12
    for path in files:
        loaded = load_file(path)
        assert loaded, f"{path.name} has no questions"
        assert {q.topic for q in loaded} == {path.stem}
    assert sorted(BANK.topic_names()) == sorted(p.stem for p in files)


def test_ids_are_unique_across_files() -> None:
    ids = [q.id for path in QUESTIONS_DIR.glob("*.yaml") for q in load_file(path)]
    assert len(ids) == len(set(ids)) == len(BANK)


@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_entry_is_complete(q: Question) -> None:
    assert len(q.expected_points) >= 2
    assert all(p.keywords for p in q.expected_points)
    assert 1 <= len(q.hints) <= 3
    assert q.follow_ups, "every question needs a follow-up to ask after the answer"
    assert len(q.model_answer.split()) >= 30
    assert q.source and all(_CITE.search(s) for s in q.source)


@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_keyword_groups_are_specific(q: Question) -> None:
    for p in q.expected_points:
        for group in p.keywords:
            group_words = words(group.replace(NUMBER, " "))
            assert group_words or NUMBER in group, f"{q.id}/{p.id}: empty group {group!r}"
            assert not set(group_words) <= STOP_WORDS or NUMBER in group, f"{q.id}/{p.id}: only stop words {group!r}"


@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_each_keyword_group_covers_its_own_point(q: Question) -> None:
    # Guards against phrases the normaliser can never match (typos, truncated words, stray symbols). A bare
    # phrase is a list, not a claim, so each is put in a sentence that says something about it.
    for p in q.expected_points:
        for group in p.concepts:
            said = f"We rely on {group.replace(NUMBER, ' 12 ')} because it keeps the whole service healthy."
            result = grade(said, q.expected_points)
            assert p.id in {c.id for c in result.covered}, f"{q.id}/{p.id}: phrase {group!r} does not match itself"


def test_related_playbooks_exist() -> None:
    playbooks = {yaml.safe_load(p.read_text())["id"] for p in (ROOT / "playbooks").glob("*.yaml")}
    linked = {q.related_playbook for q in QUESTIONS if q.related_playbook}
    assert linked, "some questions should link to playbooks"
    assert linked <= playbooks, f"unknown playbooks: {sorted(linked - playbooks)}"


def test_every_topic_has_questions_of_its_kind() -> None:
    kinds = {q.kind for q in QUESTIONS}
    assert kinds == {"concept", "scenario", "design", "behavioural"}
    assert all(q.kind == "scenario" for q in BANK.select(topic="scenarios"))
    assert all(q.kind == "behavioural" for q in BANK.select(topic="behavioural"))
    assert {q.difficulty for q in QUESTIONS} == {"easy", "medium", "hard"}


# --- coverage of the seeds -----------------------------------------------------------------------------------

def _cites(question: Question) -> list[tuple[str, int, int]]:
    out = []
    for text in question.source:
        for f, a, b in _CITE.findall(text):
            out.append((f, int(a), int(b or a)))
    return out


@pytest.mark.parametrize("row", SEED_ROWS, ids=[r["cite"] for r in SEED_ROWS])
def test_seed_question_is_mapped(row: dict[str, Any]) -> None:
    assert row.get("bank"), f"seed question {row['cite']} ({row['what']}) is not mapped to a bank entry"
    f, line = row["cite"].split(":")
    for qid in row["bank"]:
        question = BANK.get(qid)
        assert question is not None, f"seed question {row['cite']} maps to missing id {qid!r}"
        assert any(cf == f and a <= int(line) <= b for cf, a, b in _cites(question)), (
            f"{qid}: source {list(question.source)} does not cite {row['cite']}")


@pytest.mark.parametrize("row", [r for r in SEED_ROWS if {"follow_ups", "hints", "discussion_points"} & set(r)],
                         ids=lambda r: r["cite"])
def test_seed_prompts_are_carried_over(row: dict[str, Any]) -> None:
    question = BANK.get(row["bank"][0])
    assert question is not None
    assert len(question.follow_ups) >= row.get("follow_ups", 0)
    assert len(question.hints) >= row.get("hints", 0)
    assert len(question.follow_ups) + len(question.expected_points) >= row.get("discussion_points", 0)


def test_seed_list_is_complete() -> None:
    cites = [r["cite"] for r in SEED_ROWS]
    assert len(cites) == len(set(cites)), "a seed question is listed twice"
    per_file = {f: sum(c.startswith(f) for c in cites) for f in ("000", "001", "002", "003", "004")}
    # Digest §2: 000 two drills + three model answers (+ the narrowing questions); 001 nine prompts; 002 thirteen
    # questions, five architecture questions, the empty contents entry and seven list items; 003 Q1-Q10; 004
    # framework, 3 designs (+ clarifying and failure sections), 5 scenarios, 5 + 10 behavioural (+ one
    # follow-up) and 12 questions for interviewers.
    assert per_file == {"000": 6, "001": 9, "002": 26, "003": 10, "004": 40}


def test_every_bank_entry_traces_to_a_seed_or_extends_one() -> None:
    mapped = {qid for r in SEED_ROWS for qid in r["bank"]}
    extra = {q.id for q in QUESTIONS} - mapped
    # Entries beyond the seed questions are built from seed facts (tables, notes); they still cite seed lines.
    assert all(_cites(BANK.questions[qid]) for qid in extra)


# --- self-consistency of the grading -------------------------------------------------------------------------

@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_model_answer_covers_its_own_points(q: Question) -> None:
    result = grade(q.model_answer, q.expected_points, asked=q.question)
    assert result.score >= 80, f"{q.id}: model answer misses {[p.id for p in result.missed]}"


@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_off_topic_answers_score_low(q: Question) -> None:
    for text in OFF_TOPIC:
        result = grade(text, q.expected_points, asked=q.question)
        assert result.score < 40 and result.verdict == "weak", (q.id, text, [p.id for p in result.covered])


@pytest.mark.parametrize("q", QUESTIONS, ids=_ids(QUESTIONS))
def test_repeating_the_question_is_not_an_answer(q: Question) -> None:
    # Scenario questions carry evidence; points must ask for the interpretation, not the evidence itself.
    result = grade(q.question, q.expected_points, asked=q.question)
    assert result.score < 40, f"{q.id}: the question alone covers {[p.id for p in result.covered]}"


# --- loader behaviour ----------------------------------------------------------------------------------------

GOOD = {
    "id": "x-one", "topic": "demo", "difficulty": "easy", "kind": "concept",
    "question": "What is a thing and why?", "follow_ups": ["And then?"], "hints": ["Think."],
    "expected_points": [{"id": "a", "point": "Says a.", "keywords": ["alpha"]},
                        {"id": "b", "point": "Says b.", "keywords": ["beta"]}],
    "model_answer": "A thing is alpha and beta, and this sentence is long enough to be a model answer.",
    "source": ["seed 002:181"],
}


def _write(folder: Path, name: str, entries: list[dict[str, Any]]) -> Path:
    path = folder / name
    path.write_text(yaml.safe_dump({"questions": entries}))
    return path


def test_loader_error_names_file_and_entry(tmp_path: Path) -> None:
    bad = {**GOOD, "id": "x-two", "expected_points": GOOD["expected_points"][:1]}
    _write(tmp_path, "demo.yaml", [GOOD, bad])
    with pytest.raises(QuestionBankError, match=r"demo\.yaml: entry 2 \(id x-two\): expected_points"):
        load_bank(tmp_path)


@pytest.mark.parametrize(("change", "message"), [
    ({"topic": "other"}, "must match the file name"),
    ({"source": ["somewhere on the web"]}, "no seed citation"),
    ({"difficulty": "brutal"}, "difficulty"),
    ({"hints": []}, "hints"),
    ({"id": "Not Kebab"}, "kebab-case"),
    ({"surprise": 1}, "surprise"),
])
def test_loader_rejects_bad_entries(tmp_path: Path, change: dict[str, Any], message: str) -> None:
    _write(tmp_path, "demo.yaml", [{**GOOD, **change}])
    with pytest.raises(QuestionBankError, match=message):
        load_bank(tmp_path)


def test_loader_rejects_duplicate_ids_and_bad_yaml(tmp_path: Path) -> None:
    _write(tmp_path, "demo.yaml", [GOOD])
    (tmp_path / "other.yaml").write_text(yaml.safe_dump({"questions": [{**GOOD, "topic": "other"}]}))
    with pytest.raises(QuestionBankError, match=r"other\.yaml: id 'x-one' already used in .*demo\.yaml"):
        load_bank(tmp_path)
    (tmp_path / "other.yaml").write_text("questions:\n  - id: [unclosed\n")
    with pytest.raises(QuestionBankError, match=r"other\.yaml: not valid YAML at line"):
        load_bank(tmp_path)
    (tmp_path / "other.yaml").write_text("- just a list\n")
    with pytest.raises(QuestionBankError, match=r"other\.yaml: expected a mapping"):
        load_bank(tmp_path)


def test_loader_rejects_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(QuestionBankError, match="no question files"):
        load_bank(tmp_path)


# --- picking -------------------------------------------------------------------------------------------------

def test_pick_is_repeatable_with_a_seed_and_respects_filters() -> None:
    assert BANK.pick(seed=7) == BANK.pick(seed=7)
    picks = {BANK.pick(topic="scenarios", difficulty="hard", seed=s) for s in range(30)}
    assert all(q is not None and q.topic == "scenarios" and q.difficulty == "hard" for q in picks)
    assert len(picks) > 1
    assert BANK.pick(topic="no-such-topic") is None


def test_pick_skips_excluded_until_the_pool_is_exhausted() -> None:
    pool = BANK.select(topic="linux", difficulty="easy")
    seen = {q.id for q in pool[:-1]}
    last = BANK.pick(topic="linux", difficulty="easy", seed=1, exclude=seen)
    assert last is not None and last.id == pool[-1].id
    again = BANK.pick(topic="linux", difficulty="easy", seed=1, exclude={q.id for q in pool})
    assert again is not None and again.topic == "linux"


def test_topics_count_every_question() -> None:
    infos = BANK.topics()
    assert sum(i.count for i in infos) == len(BANK)
    assert all(sum(i.difficulties.values()) == i.count for i in infos)
