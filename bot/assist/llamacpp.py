"""A GGUF model run in-process by llama.cpp, as a langchain chat model (the `[llamacpp]` extra).

A small adapter rather than langchain-community's ChatLlamaCpp: that package is being retired upstream.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from llama_cpp import Llama

_ROLES = {"system": "system", "human": "user", "ai": "assistant"}


class LocalLlama(BaseChatModel):
    """Greedy (temperature 0, fixed seed) completions, so the same prompt gives the same text."""

    llama: Any
    model_path: str
    max_tokens: int = 400

    @classmethod
    def load(cls, path: Path, *, max_tokens: int = 400, n_ctx: int = 4096, threads: int | None = None) -> LocalLlama:
        # The cores this process may run on (a pod's CPU set), not the node's.
        llama = Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads or len(os.sched_getaffinity(0)) or 1,
                      seed=0, verbose=False)
        return cls(llama=llama, model_path=str(path), max_tokens=max_tokens)

    @property
    def _llm_type(self) -> str:
        return "llamacpp-local"

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        chat = [{"role": _ROLES.get(m.type, "user"), "content": m.text} for m in messages]
        # Start from an empty cache: reusing the previous prompt's cached prefix changes a greedy completion.
        self.llama.reset()
        out = self.llama.create_chat_completion(messages=chat, max_tokens=self.max_tokens, temperature=0.0,
                                                stop=stop or [])
        choice = out["choices"][0]
        message = AIMessage(content=choice["message"].get("content") or "",
                            response_metadata={"finish_reason": choice.get("finish_reason"),
                                               "usage": out.get("usage", {}), "model_path": self.model_path})
        return ChatResult(generations=[ChatGeneration(message=message)])
