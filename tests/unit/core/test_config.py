"""Settings come from TRIAGEBOT_* variables over a YAML file; bad values name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.config import ConfigError, load_settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TRIAGEBOT_CONFIG", raising=False)
    settings = load_settings()
    assert settings.call_timeout == 5.0 and settings.prometheus_url is None
    assert settings.agent_url_template == "http://{node_ip}:9105"


def test_environment_wins_over_yaml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "triagebot.yaml"
    path.write_text("prometheus_url: http://from-yaml:9090\ndeadline: 30\nagent_token: s3cret-token-value\n")
    monkeypatch.setenv("TRIAGEBOT_CONFIG", str(path))
    monkeypatch.setenv("TRIAGEBOT_PROMETHEUS_URL", "http://from-env:9090")
    settings = load_settings()
    assert settings.prometheus_url == "http://from-env:9090"
    assert settings.deadline == 30
    assert settings.agent_token is not None and "s3cret" not in repr(settings)


@pytest.mark.parametrize(("env", "value", "needle"), [
    ("TRIAGEBOT_CALL_TIMEOUT", "soon", "setting call_timeout (TRIAGEBOT_CALL_TIMEOUT)"),
    ("TRIAGEBOT_DEADLINE", "0", "setting deadline"),
    ("TRIAGEBOT_AGENT_URL_TEMPLATE", "http://agent:9105", "must contain {node} or {node_ip}"),
    ("TRIAGEBOT_SLACK_TIMEOUT", "-1", "setting slack_timeout (TRIAGEBOT_SLACK_TIMEOUT)"),
    ("TRIAGEBOT_OUTBOX_LEASE", "10", "outbox_lease (10 s) must be longer than slack_timeout (10 s)"),
])
def test_bad_values_name_the_setting(monkeypatch: pytest.MonkeyPatch, env: str, value: str, needle: str) -> None:
    monkeypatch.delenv("TRIAGEBOT_CONFIG", raising=False)
    monkeypatch.setenv(env, value)
    with pytest.raises(ConfigError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        load_settings()


def test_missing_config_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_CONFIG", "/no/such.yaml")
    with pytest.raises(ConfigError, match="no such file"):
        load_settings()


def test_unknown_yaml_key_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "c.yaml"
    path.write_text("prometheus_uri: http://typo\n")
    monkeypatch.setenv("TRIAGEBOT_CONFIG", str(path))
    with pytest.raises(ConfigError, match="prometheus_uri"):
        load_settings()
