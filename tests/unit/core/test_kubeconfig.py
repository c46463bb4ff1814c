"""A KUBECONFIG list is merged as kubectl merges it: the first file to set a value wins (issue 28, point 4).

The files are real kubeconfigs read by the Kubernetes client's own loader; nothing is mocked. Only the chosen
server is checked here (no network); tests/e2e/test_cluster_access.py triages through a merged list."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from bot.config import ConfigError, Settings
from bot.runner.kubeconfig import kube_client


def kubeconfig(path: Path, *, clusters: dict[str, str], contexts: dict[str, str] | None = None,
               current: str | None = None) -> Path:
    doc: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": n, "cluster": {"server": s}} for n, s in clusters.items()],
        "users": [{"name": "u", "user": {"token": "t0ken"}}],
        "contexts": [{"name": n, "context": {"cluster": c, "user": "u"}} for n, c in (contexts or {}).items()],
    }
    if current is not None:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    return {
        "a": kubeconfig(tmp_path / "a", clusters={"prod": "https://a.example:6443"}, contexts={"prod": "prod"},
                        current="prod"),
        "b": kubeconfig(tmp_path / "b", clusters={"prod": "https://b.example:6443", "dev": "https://dev.example"},
                        contexts={"prod": "prod", "dev": "dev"}, current="dev"),
        # Sets no current-context: the next file's is used.
        "c": kubeconfig(tmp_path / "c", clusters={"prod": "https://c.example:6443"}),
    }


def host(monkeypatch: pytest.MonkeyPatch, listed: list[Path], **settings: Any) -> str:
    monkeypatch.setenv("KUBECONFIG", os.pathsep.join(str(p) for p in listed))
    return str(kube_client(Settings(**settings)).configuration.host)


def test_current_context_comes_from_the_first_file_that_sets_it(monkeypatch: pytest.MonkeyPatch,
                                                                files: dict[str, Path]) -> None:
    assert host(monkeypatch, [files["a"], files["b"]]) == "https://a.example:6443"
    assert host(monkeypatch, [files["b"], files["a"]]) == "https://dev.example"
    # c sets none: a's current-context (prod), and prod's cluster as the FIRST file defines it, c's.
    assert host(monkeypatch, [files["c"], files["a"]]) == "https://c.example:6443"


def test_named_entries_first_file_wins_and_context_setting_picks_among_all(monkeypatch: pytest.MonkeyPatch,
                                                                          files: dict[str, Path]) -> None:
    assert host(monkeypatch, [files["a"], files["b"]], context="dev") == "https://dev.example"  # only b has it
    assert host(monkeypatch, [files["b"], files["a"]], context="prod") == "https://b.example:6443"


def test_missing_files_in_the_list_are_skipped(monkeypatch: pytest.MonkeyPatch, files: dict[str, Path],
                                               tmp_path: Path) -> None:
    assert host(monkeypatch, [tmp_path / "absent", files["b"]]) == "https://dev.example"


def test_the_setting_takes_a_list_too(monkeypatch: pytest.MonkeyPatch, files: dict[str, Path]) -> None:
    monkeypatch.delenv("KUBECONFIG", raising=False)
    listed = Path(os.pathsep.join([str(files["b"]), str(files["a"])]))
    assert str(kube_client(Settings(kubeconfig=listed)).configuration.host) == "https://dev.example"


def test_a_named_list_with_no_file_is_a_one_line_error(tmp_path: Path) -> None:
    listed = Path(os.pathsep.join([str(tmp_path / "x"), str(tmp_path / "y")]))
    with pytest.raises(ConfigError, match=r"^setting kubeconfig \(TRIAGEBOT_KUBECONFIG\): no such file"):
        kube_client(Settings(kubeconfig=listed))
