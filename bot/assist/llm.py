"""Which chat model to talk to, and one bounded call to it.

Models come from settings through langchain's `init_chat_model` (OpenAI-compatible endpoints, Ollama, ...) or,
for `llm_provider=llamacpp`, a GGUF file loaded in-process. Tests pass langchain's fake chat models instead.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bot.config import ConfigError, Settings

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

# The package each provider needs, so a missing one gives an install hint rather than an ImportError.
PROVIDER_EXTRAS = {"openai": "openai", "ollama": "ollama", "llamacpp": "llamacpp"}


class ModelError(Exception):
    """The model did not answer in time or failed; callers fall back to deterministic text."""


@dataclass(frozen=True)
class Generated:
    text: str
    model: str
    seconds: float


@dataclass
class Assistant:
    """A chat model with its budget. `model=None` means no model: every caller uses its deterministic text."""

    model: BaseChatModel | None
    name: str = "none"
    timeout: float = 30.0
    summaries: bool = True
    grading: bool = False
    # An in-process model (llama.cpp) is not safe to call from two threads; remote endpoints are.
    serial: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def enabled(self) -> bool:
        return self.model is not None

    def generate(self, system: str, user: str) -> Generated:
        """One completion within `timeout` seconds; raises ModelError otherwise."""
        if self.model is None:
            raise ModelError("no model is configured")
        from langchain_core.messages import HumanMessage, SystemMessage

        model = self.model
        messages = [SystemMessage(content=system), HumanMessage(content=user)]
        box: list[object] = []

        def call() -> None:
            try:
                if self.serial:
                    with self._lock:
                        box.append(model.invoke(messages))
                else:
                    box.append(model.invoke(messages))
            except Exception as err:  # any provider error becomes a fallback, never a failed triage
                box.append(err)

        started = time.monotonic()
        # A daemon thread, not a pool: a call that never returns must not hold a worker other calls need.
        worker = threading.Thread(target=call, name="llm-call", daemon=True)
        worker.start()
        worker.join(self.timeout)
        seconds = time.monotonic() - started
        if not box:
            raise ModelError(f"no answer within {self.timeout:g}s")
        result = box[0]
        if isinstance(result, Exception):
            raise ModelError(f"{type(result).__name__}: {str(result)[:200]}")
        text = getattr(result, "text", "")
        return Generated(text=str(text).strip(), model=self.name, seconds=seconds)


NO_MODEL = Assistant(model=None)


def assistant_from(settings: Settings) -> Assistant:
    """The configured model, or NO_MODEL when llm_provider is unset. Raises ConfigError when it cannot be built."""
    provider = (settings.llm_provider or "").strip().lower()
    if not provider:
        return NO_MODEL
    if not settings.llm_model:
        raise ConfigError("setting llm_model (TRIAGEBOT_LLM_MODEL) is missing: name the model, or for llamacpp "
                          "the .gguf file")
    model = _local_model(settings) if provider == "llamacpp" else _remote_model(settings, provider)
    # A GGUF path says where the file is, not which model it is: its file name does.
    shown = Path(settings.llm_model).name if provider == "llamacpp" else settings.llm_model
    return Assistant(model=model, name=f"{provider}:{shown}", timeout=settings.llm_timeout,
                     summaries=settings.llm_summaries, grading=settings.llm_grading, serial=provider == "llamacpp")


def _missing_package(provider: str, err: ImportError) -> ConfigError:
    extra = PROVIDER_EXTRAS.get(provider)
    hint = f"pip install 'triagebot[{extra}]'" if extra else f"install langchain's package for {provider}"
    return ConfigError(f"setting llm_provider={provider} needs a package that is not installed "
                       f"({err.name or err}): {hint}")


def _remote_model(settings: Settings, provider: str) -> BaseChatModel:
    from langchain.chat_models import init_chat_model

    kwargs: dict[str, Any] = {"temperature": 0}
    if settings.llm_base_url:
        kwargs["base_url"] = settings.llm_base_url
    if provider == "ollama":
        kwargs["num_predict"] = settings.llm_max_tokens
        kwargs["client_kwargs"] = {"timeout": settings.llm_timeout}
    else:
        kwargs["max_tokens"] = settings.llm_max_tokens
        kwargs["timeout"] = settings.llm_timeout
        kwargs["max_retries"] = 1
        # Self-hosted OpenAI-compatible servers (vLLM, llama.cpp) often need no key, but the client insists on one.
        key = settings.llm_api_key.get_secret_value() if settings.llm_api_key else "unused"
        kwargs["api_key"] = key
        if provider == "openai" and settings.llm_base_url:
            # langchain-openai sends max_completion_tokens, which llama.cpp's server ignores; the older field too.
            kwargs["extra_body"] = {"max_tokens": settings.llm_max_tokens}
    try:
        model: BaseChatModel = init_chat_model(settings.llm_model or "", model_provider=provider, **kwargs)
    except ImportError as err:
        raise _missing_package(provider, err) from None
    except ValueError as err:
        raise ConfigError(f"setting llm_provider={provider}: {err}") from None
    return model


def _local_model(settings: Settings) -> BaseChatModel:
    path = Path(settings.llm_model or "")
    if not path.is_file():
        raise ConfigError(f"setting llm_model (TRIAGEBOT_LLM_MODEL): {path} is not a .gguf file")
    try:
        from bot.assist.llamacpp import LocalLlama
    except ImportError as err:
        raise _missing_package("llamacpp", err) from None
    return LocalLlama.load(path, max_tokens=settings.llm_max_tokens)
