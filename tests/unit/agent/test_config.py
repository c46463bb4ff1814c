"""Agent settings: the token is required and long, and every variable is TRIAGEBOT_AGENT_*."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from collectors.agent.config import AgentSettings


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_AGENT_TOKEN", "s" * 16)
    monkeypatch.setenv("TRIAGEBOT_AGENT_PORT", "9200")
    monkeypatch.setenv("TRIAGEBOT_AGENT_PROC_ROOT", "/host/proc")
    monkeypatch.setenv("TRIAGEBOT_AGENT_CONTAINER_BUNDLE_DIRS", '["/host/run/containerd/{id}"]')
    settings = AgentSettings()
    assert settings.token.get_secret_value() == "s" * 16
    assert settings.port == 9200 and settings.host == "0.0.0.0"
    assert settings.proc_root == Path("/host/proc") and settings.kmsg_path == Path("/dev/kmsg")
    assert settings.container_bundle_dirs == ["/host/run/containerd/{id}"]
    assert settings.max_response_bytes == 2 * 1024 * 1024
    assert "s" * 16 not in repr(settings)  # the token never shows up in logs


@pytest.mark.parametrize("token", [None, "", "short"])
def test_token_is_required_and_at_least_16_characters(monkeypatch: pytest.MonkeyPatch, token: str | None) -> None:
    monkeypatch.delenv("TRIAGEBOT_AGENT_TOKEN", raising=False)
    with pytest.raises(ValidationError):
        AgentSettings() if token is None else AgentSettings(token=token)  # type: ignore[arg-type]
