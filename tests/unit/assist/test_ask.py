"""answer(): redaction before anything else, the citation guard, fallbacks, and the three renderings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from bot.assist.ask import (
    MAX_QUESTION_CHARS,
    Answer,
    QuestionError,
    answer,
    check_question,
    cited_numbers,
    guard_problem,
    prompt_for,
)
from bot.assist.llm import NO_MODEL, Assistant
from bot.assist.search import Index
from bot.render.ask import generated_label, render_ask_json, render_ask_markdown, render_ask_text
from tests.harness.fake_models import RecordingModel, fake_assistant


def model(reply: str = "", *, delay: float = 0.0, failure: str | None = None, timeout: float = 5.0
          ) -> tuple[Assistant, RecordingModel]:
    return fake_assistant(reply, delay=delay, failure=failure, timeout=timeout, name="fake")


def test_a_cited_answer_is_kept(bm25_index: Index) -> None:
    text = "Xid 79 means the GPU fell off the bus [1]; drain the node and power-cycle it [2]."
    assistant, fake = model(text)
    result = answer("what does xid 79 mean", bm25_index, assistant, k=4)
    assert result.generated and result.text == text and result.model == "fake" and result.fallback is None
    assert result.hits[0].passage.id == "xid:79" and len(result.hits) == 4
    assert len(fake.seen) == 1
    system, user = (str(m.content) for m in fake.seen[0])
    assert "[n]" in system or "[1]" in system
    assert user.startswith("Question: what does xid 79 mean")
    for n, hit in enumerate(result.hits, start=1):
        assert f"[{n}] {hit.passage.title} ({hit.passage.cite})" in user


@pytest.mark.parametrize(("reply", "reason"), [
    ("Xid 79 is a GPU that fell off the bus [9].", "cited [9], but only passages [1]-[4] exist"),
    ("Drain the node [1] and see [0].", "cited [0]"),
    ("Xid 79 means the GPU fell off the bus.", "cited no passage"),
    ("", "was empty"),
    ("   \n  ", "was empty"),
])
def test_an_answer_failing_the_guard_is_discarded(bm25_index: Index, reply: str, reason: str) -> None:
    assistant, _ = model(reply)
    result = answer("what does xid 79 mean", bm25_index, assistant, k=4)
    # The model was asked, so it is named, but its text is not shown.
    assert not result.generated and result.text is None and result.model == "fake"
    assert result.fallback is not None and reason in result.fallback and "discarded" in result.fallback
    assert len(result.hits) == 4


@pytest.mark.parametrize(("text", "passages", "problem"), [
    ("fine [1]", 4, None),
    ("fine [1][2] and [3, 4]", 4, None),
    ("fine [2; 3]", 3, None),
    ("too far [1, 5]", 4, "[5]"),
    ("nothing cited", 4, "cited no passage"),
    ("[1]", 0, "[1]"),
])
def test_guard_problem(text: str, passages: int, problem: str | None) -> None:
    found = guard_problem(text, passages)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_cited_numbers_in_order() -> None:
    assert cited_numbers("a [2] b [1, 3] c [2] d [x] [10]") == [2, 1, 3, 10]


def test_a_model_too_slow_falls_back_to_the_passages(bm25_index: Index) -> None:
    assistant, _ = model("late [1]", delay=2.0, timeout=0.2)
    result = answer("what does xid 79 mean", bm25_index, assistant)
    assert not result.generated and result.text is None
    assert result.fallback is not None and "no answer within 0.2s" in result.fallback
    assert result.hits and result.hits[0].passage.id == "xid:79"


def test_a_failing_model_falls_back_to_the_passages(bm25_index: Index) -> None:
    assistant, _ = model(failure="connection refused")
    result = answer("what does xid 79 mean", bm25_index, assistant)
    assert not result.generated and result.fallback is not None and "connection refused" in result.fallback


SECRETS = [
    ("pods fail to pull, the config has password=hunter2", "hunter2"),
    ("curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdef123456' to the registry fails", "eyJhbGciOiJIUzI1NiJ9"),
    ("slack token xoxb-1234567890-abcdefghijkl stopped working", "xoxb-1234567890"),
    ("DATABASE_URL=postgresql://bot:s3cretpw@db:5432/triagebot refused", "s3cretpw"),
]


@pytest.mark.parametrize(("question", "secret"), SECRETS)
def test_a_secret_in_the_question_never_reaches_the_model(bm25_index: Index, question: str, secret: str) -> None:
    assistant, fake = model("Check the registry credentials [1].")
    result = answer(question, bm25_index, assistant)
    assert fake.seen, "the model was not asked"
    assert secret not in fake.prompts()
    assert "<redacted>" in fake.prompts()
    assert secret not in result.question and secret not in result.model_dump_json()


def test_the_search_sees_only_the_redacted_question(bm25_index: Index, monkeypatch: pytest.MonkeyPatch) -> None:
    searched: list[str] = []
    real = bm25_index.search

    def spy(query: str, k: int = 4) -> Any:
        searched.append(query)
        return real(query, k)

    monkeypatch.setattr(bm25_index, "search", spy)
    answer("registry login fails with password=hunter2", bm25_index)
    assert searched and "hunter2" not in searched[0]


def test_no_model_returns_the_best_passages(bm25_index: Index) -> None:
    result = answer("pods pending insufficient nvidia.com/gpu", bm25_index, NO_MODEL, k=3)
    assert not result.generated and result.text is None and result.model is None
    assert result.fallback == "no model is configured"
    assert len(result.hits) == 3 and result.hits[0].passage.id == "playbook:pending#insufficient-gpu"
    assert result.retriever == "bm25" and result.matched


def test_no_match_does_not_ask_the_model(bm25_index: Index) -> None:
    assistant, fake = model("made up [1]")
    result = answer("zxqv wubble", bm25_index, assistant)
    assert result.hits == [] and not result.matched and not fake.seen
    assert result.fallback == "no passage matched the question"


@pytest.mark.parametrize(("question", "message"), [
    ("", "empty"),
    ("   \n\t ", "empty"),
    ("x" * (MAX_QUESTION_CHARS + 1), "at most 2,000"),
])
def test_bad_questions_raise(bm25_index: Index, question: str, message: str) -> None:
    with pytest.raises(QuestionError, match=message):
        answer(question, bm25_index)
    assert issubclass(QuestionError, ValueError)


def test_the_longest_allowed_question_is_fine() -> None:
    assert check_question("  " + "x" * MAX_QUESTION_CHARS + "\n") == "x" * MAX_QUESTION_CHARS


def test_prompt_carries_only_the_question_and_the_passages(bm25_index: Index) -> None:
    hits = bm25_index.search("xid 79", 2)
    system, user = prompt_for("what does xid 79 mean", hits)
    assert "[1]" in user and "[2]" in user and "[3]" not in user
    assert all(hit.passage.cite in user for hit in hits)
    assert "only the numbered passages" in system


def _generated(bm25_index: Index) -> Answer:
    assistant, _ = model("Xid 79: the GPU fell off the bus [1].")
    return answer("what does xid 79 mean", bm25_index, assistant, k=2)


@pytest.mark.parametrize("render", [render_ask_text, render_ask_markdown])
def test_a_generated_answer_is_labelled(bm25_index: Index, render: Any) -> None:
    out = render(_generated(bm25_index))
    label = generated_label("fake")
    assert label == "Generated by fake from the passages below — check them"
    assert label in " ".join(out.split())
    assert "the GPU fell off the bus [1]" in out
    assert "collectors/catalogs/xid.yaml#79" in out and "Best matching passages" not in out


@pytest.mark.parametrize("render", [render_ask_text, render_ask_markdown])
def test_passages_alone_are_the_best_matching_passages(bm25_index: Index, render: Any) -> None:
    out = render(answer("what does xid 79 mean", bm25_index, k=2))
    assert "Best matching passages" in out and "Generated by" not in out
    assert "collectors/catalogs/xid.yaml#79" in out and "[1]" in out and "[2]" in out


@pytest.mark.parametrize("render", [render_ask_text, render_ask_markdown])
def test_no_match_says_so(bm25_index: Index, render: Any) -> None:
    assert "No good match" in render(answer("zxqv wubble", bm25_index))


def test_json_round_trips(bm25_index: Index) -> None:
    result = _generated(bm25_index)
    data = json.loads(render_ask_json(result))
    assert data["generated"] is True and data["model"] == "fake"
    assert data["hits"][0]["passage"]["id"] == "xid:79" and data["hits"][0]["score"] > 0
    assert Answer.model_validate(data) == result
