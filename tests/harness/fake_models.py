"""langchain's own fake chat models, with the two behaviours tests need: remembering what they were sent, and
answering too late or not at all."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult

from bot.assist.llm import Assistant


class RecordingModel(GenericFakeChatModel):
    """Answers with the given messages in turn and keeps every prompt it received."""

    seen: list[list[BaseMessage]] = []
    delay: float = 0.0
    failure: str | None = None

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        self.seen.append(list(messages))
        if self.delay:
            threading.Event().wait(self.delay)
        if self.failure:
            raise RuntimeError(self.failure)
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def prompts(self) -> str:
        return "\n".join(str(m.content) for batch in self.seen for m in batch)


def fake_assistant(*answers: str, delay: float = 0.0, failure: str | None = None, timeout: float = 5.0,
                   summaries: bool = True, grading: bool = True, name: str = "fake:test"
                   ) -> tuple[Assistant, RecordingModel]:
    model = RecordingModel(messages=iter([AIMessage(a) for a in answers]), seen=[], delay=delay, failure=failure)
    return Assistant(model=model, name=name, timeout=timeout, summaries=summaries, grading=grading), model
