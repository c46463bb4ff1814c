"""Errors the agent answers with: an HTTP status and a JSON body that says what was expected."""

from __future__ import annotations


class AgentError(Exception):
    """A request the agent cannot serve; `expected` tells the caller what would work."""

    def __init__(self, status: int, message: str, expected: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.expected = expected

    def body(self) -> dict[str, str]:
        out = {"error": self.message}
        if self.expected:
            out["expected"] = self.expected
        return out


def bad_request(message: str, expected: str) -> AgentError:
    return AgentError(400, message, expected)


def not_found(message: str, expected: str = "") -> AgentError:
    return AgentError(404, message, expected)
