"""The README documents every setting the settings model has."""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings

README = (Path(__file__).resolve().parents[3] / "README.md").read_text(encoding="utf-8")


def test_every_setting_is_documented() -> None:
    undocumented = [name for name in Settings.model_fields if f"`{name}`" not in README]
    assert undocumented == []
