"""`assistant_from` (settings → chat model) and `Assistant.generate` (one bounded call), with no model running.

Building a remote model must not touch the network: a socket guard fails any connect while the model is built.
`generate` is driven by langchain's fake chat models and two tiny models that fail or hang.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import SecretStr

from bot.assist.llm import NO_MODEL, Assistant, ModelError, assistant_from
from bot.config import ConfigError, Settings
from tests.harness.extras import require_extra


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[object]]:
    """Every connect attempt is recorded and refused."""
    attempts: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        attempts.append(address)
        raise OSError(f"network is off in this test: connect({address!r})")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    yield attempts


# --- assistant_from ------------------------------------------------------------------------------------------

def test_no_provider_means_no_model() -> None:
    assistant = assistant_from(Settings())
    assert assistant is NO_MODEL
    assert assistant.model is None and not assistant.enabled
    with pytest.raises(ModelError, match="no model"):
        assistant.generate("system", "user")


@pytest.mark.parametrize(("settings", "names"), [
    pytest.param({"llm_provider": "openai"}, ["TRIAGEBOT_LLM_MODEL"], id="provider-without-model"),
    pytest.param({"llm_provider": "ollama", "llm_model": ""}, ["TRIAGEBOT_LLM_MODEL"], id="empty-model"),
    pytest.param({"llm_provider": "llamacpp", "llm_model": "/nonexistent/model.gguf"},
                 ["TRIAGEBOT_LLM_MODEL", "/nonexistent/model.gguf"], id="llamacpp-missing-file"),
    pytest.param({"llm_provider": "no-such-provider", "llm_model": "m"}, ["llm_provider=no-such-provider"],
                 id="unknown-provider"),
])
def test_settings_that_cannot_build_a_model_are_config_errors(settings: dict[str, Any], names: list[str]) -> None:
    with pytest.raises(ConfigError) as caught:
        assistant_from(Settings(**settings))
    for name in names:
        assert name in str(caught.value)


def test_llamacpp_refuses_a_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="TRIAGEBOT_LLM_MODEL"):
        assistant_from(Settings(llm_provider="llamacpp", llm_model=str(tmp_path)))


@pytest.mark.parametrize(("provider", "base_url", "expected_class"), [
    pytest.param("ollama", "http://ollama.ml:11434", "ChatOllama", id="ollama"),
    pytest.param("openai", "http://vllm.ml:8000/v1", "ChatOpenAI", id="openai-compatible"),
    pytest.param("OpenAI ", "http://vllm.ml:8000/v1", "ChatOpenAI", id="provider-case-and-spaces"),
])
def test_remote_models_are_built_without_network(no_network: list[object], provider: str, base_url: str,
                                                  expected_class: str) -> None:
    require_extra(provider.strip().lower())
    assistant = assistant_from(Settings(llm_provider=provider, llm_model="qwen2.5:7b", llm_base_url=base_url,
                                        llm_timeout=7.5, llm_max_tokens=123))
    assert type(assistant.model).__name__ == expected_class
    assert assistant.enabled and assistant.timeout == 7.5
    assert assistant.name == f"{provider.strip().lower()}:qwen2.5:7b"
    assert not assistant.serial, "remote endpoints take concurrent calls"
    assert no_network == [], "building a model must not connect anywhere"


def test_ollama_gets_the_base_url_timeout_and_token_budget(no_network: list[object]) -> None:
    require_extra("ollama")
    from langchain_ollama import ChatOllama

    model = assistant_from(Settings(llm_provider="ollama", llm_model="llama3.2", llm_base_url="http://ollama.ml:11434",
                                    llm_timeout=9, llm_max_tokens=77)).model
    assert isinstance(model, ChatOllama)
    assert model.base_url == "http://ollama.ml:11434"
    assert model.model == "llama3.2"
    assert model.num_predict == 77
    assert model.temperature == 0
    assert (model.client_kwargs or {}).get("timeout") == 9
    assert not model.validate_model_on_init, "a model check at start-up would call the server"


def test_openai_gets_the_base_url_timeout_and_a_placeholder_key(no_network: list[object]) -> None:
    require_extra("openai")
    from langchain_openai import ChatOpenAI

    model = assistant_from(Settings(llm_provider="openai", llm_model="smollm2", llm_base_url="http://vllm.ml:8000/v1",
                                    llm_timeout=4, llm_max_tokens=99)).model
    assert isinstance(model, ChatOpenAI)
    assert model.openai_api_base == "http://vllm.ml:8000/v1"
    assert model.request_timeout == 4
    assert model.max_tokens == 99
    assert model.temperature == 0
    assert model.max_retries == 1
    # Self-hosted servers need no key, but the client insists on one: a placeholder, never an empty string.
    key = model.openai_api_key
    assert isinstance(key, SecretStr) and key.get_secret_value()


def test_openai_uses_the_configured_key(no_network: list[object]) -> None:
    require_extra("openai")
    model = assistant_from(Settings(llm_provider="openai", llm_model="gpt-4.1-mini", llm_api_key="sk-test-123")).model
    key = getattr(model, "openai_api_key", None)
    assert key is not None and key.get_secret_value() == "sk-test-123"


# --- Assistant.generate --------------------------------------------------------------------------------------

class Exploding(BaseChatModel):
    """A provider that fails, as a refused connection or a 500 would."""

    @property
    def _llm_type(self) -> str:
        return "exploding"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        raise ConnectionError("connection refused by http://vllm.ml:8000/v1")


class Hanging(BaseChatModel):
    """A provider that never answers until released (so the test leaves no thread behind)."""

    release: Any

    @property
    def _llm_type(self) -> str:
        return "hanging"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        self.release.wait(30)
        raise TimeoutError("released")


def _fake(*texts: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(content=t) for t in texts]))


def test_generate_returns_the_model_text_stripped_and_names_the_model() -> None:
    assistant = Assistant(model=_fake("  The pod hit its memory limit.\n"), name="fake:one", timeout=5)
    generated = assistant.generate("You summarise incidents.", "trainer-0 OOMKilled")
    assert generated.text == "The pod hit its memory limit."
    assert generated.model == "fake:one"
    assert generated.seconds >= 0


def test_generate_passes_system_and_user_messages() -> None:
    from langchain_core.language_models.fake_chat_models import ParrotFakeChatModel

    generated = Assistant(model=ParrotFakeChatModel(), timeout=5).generate("the system", "the question")
    assert generated.text == "the question", "the user message is the last one the model sees"


def test_generate_serial_models_answer_one_after_another() -> None:
    assistant = Assistant(model=_fake("one", "two"), timeout=5, serial=True)
    assert [assistant.generate("s", "u").text for _ in range(2)] == ["one", "two"]


def test_a_failing_model_is_a_model_error_naming_the_failure() -> None:
    with pytest.raises(ModelError, match="ConnectionError: connection refused"):
        Assistant(model=Exploding(), timeout=5).generate("s", "u")


def test_an_exhausted_fake_model_is_a_model_error() -> None:
    assistant = Assistant(model=_fake("only one"), timeout=5)
    assistant.generate("s", "u")
    with pytest.raises(ModelError):
        assistant.generate("s", "u")


def test_a_model_slower_than_the_timeout_is_a_model_error() -> None:
    release = threading.Event()
    try:
        with pytest.raises(ModelError, match=r"no answer within 0\.2s"):
            Assistant(model=Hanging(release=release), timeout=0.2).generate("s", "u")
    finally:
        release.set()
