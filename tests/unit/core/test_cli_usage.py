"""Small CLI contracts: --version, an unknown --symptom, a missing command, and JSON logs at a set level."""

from __future__ import annotations

import io
import json
import logging

import pytest

from bot.cli.main import main, version
from collectors.jsonlog import JsonFormatter, LogLevelError, NoBodies, level_from_env


def test_version_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    out = capsys.readouterr().out
    assert out == f"triagebot {version()}\n" and version()[0].isdigit()


def test_an_unknown_symptom_is_one_line_listing_the_valid_names(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--symptom", "nosuch", "-"]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1
    assert err.startswith("triagebot: error: --symptom nosuch: no such playbook; expected one of: ")
    for name in ("oom-killed", "pending", "nccl-hang"):
        assert name in err


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert "a command is required" in capsys.readouterr().err


def test_log_level_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_LOG_LEVEL", "debug")
    assert level_from_env() == "DEBUG"
    monkeypatch.setenv("TRIAGEBOT_LOG_LEVEL", "chatty")
    with pytest.raises(LogLevelError, match="TRIAGEBOT_LOG_LEVEL"):
        level_from_env()


def test_logs_are_json_redacted_and_never_hold_a_body() -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(NoBodies())
    logger = logging.getLogger("test.hardening.logs")
    logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    try:
        logger.warning("Unhandled request ({'command': '/x', 'text': 'harmless-body-marker'})")
        logger.info("Invalid request signature detected (signature: v0=ab, timestamp: 1, body: token=abc)")
        logger.error("db login failed password=hunter2-in-a-log", extra={"detail": {"db_password": "x-in-extra"}})
    finally:
        logger.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [entry["level"] for entry in lines] == ["warning", "info", "error"]
    text = stream.getvalue()
    assert "harmless-body-marker" not in text and "token=abc" not in text
    assert "hunter2-in-a-log" not in text and "x-in-extra" not in text
    assert lines[0]["msg"] == "Unhandled request (request body not logged)"
