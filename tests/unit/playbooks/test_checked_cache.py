"""Playbooks checked once (playbooks/checked.py): a file whose exact text passed every check comes back from the
cache already validated, equal to what validation gives; a changed text, an unreadable cache file or `lint`
(trust_checked off) validate and check it again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from playbooks import loader
from playbooks.files import PLAYBOOK_DIR
from playbooks.model import Playbook

PENDING = PLAYBOOK_DIR / "pending.yaml"


@pytest.fixture
def validations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path / "cache"))
    calls: list[Any] = []
    validate = Playbook.model_validate

    def counting(data: Any) -> Playbook:
        calls.append(data)
        return validate(data)

    monkeypatch.setattr(Playbook, "model_validate", counting)
    return calls


def test_a_passed_file_comes_back_validated_without_validation(validations: list[Any]) -> None:
    first, problems = loader.check_file(PENDING, trust_checked=True)
    again, _ = loader.check_file(PENDING, trust_checked=True)
    assert first is not None and again is not None and problems == []
    assert again.spec == first.spec
    assert again.trigger_rule == first.trigger_rule
    assert len(validations) == 1
    loader.check_file(PENDING)  # lint never trusts the cache
    assert len(validations) == 2


def test_a_changed_file_or_a_broken_cache_is_validated_again(
        tmp_path: Path, validations: list[Any]) -> None:
    copy = tmp_path / "pending.yaml"
    text = PENDING.read_text(encoding="utf-8")
    copy.write_text(text, encoding="utf-8")
    loader.check_file(copy, trust_checked=True)
    copy.write_text(text + "\n", encoding="utf-8")
    loader.check_file(copy, trust_checked=True)
    assert len(validations) == 2
    for cached in (tmp_path / "cache" / "checked").iterdir():
        cached.write_bytes(b"")  # an older release's marker, or a file cut short
    compiled, problems = loader.check_file(copy, trust_checked=True)
    assert compiled is not None and problems == []
    assert len(validations) == 3


def test_a_cache_file_others_may_write_is_never_unpickled(tmp_path: Path, validations: list[Any]) -> None:
    # Unpickling runs code: a cached file that a group or anyone may write is checked again, not loaded.
    loader.check_file(PENDING, trust_checked=True)
    for cached in (tmp_path / "cache" / "checked").iterdir():
        cached.chmod(0o666)
    loader.check_file(PENDING, trust_checked=True)
    assert len(validations) == 2
