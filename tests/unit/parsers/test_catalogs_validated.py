"""Catalogs validated once (collectors/catalogs/validated.py): with the cache off every catalog (and the narrowing
layers, playbooks/data/layers.yaml) is validated by its models or checks, what comes back from the cache equals what
validation gave, and a changed text or a broken cache file is validated again."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from collectors.catalogs import (
    access_log_formats,
    alert_forms,
    alert_labels,
    figures,
    load_reports,
    nccl_catalog,
    network,
    queries,
    signals,
    stated,
    status_fields,
    symptom_words,
    xid,
)
from collectors.catalogs.validated import validated
from playbooks import layers

CATALOGS: dict[str, tuple[tuple[Path, ...], Callable[..., Any]]] = {
    "access_logs": ((access_log_formats._CATALOG,), access_log_formats._validate),
    "alert_forms": ((alert_forms._CATALOG,), alert_forms._validate),
    "alert_labels": ((alert_labels._CATALOG,), alert_labels.LabelCatalog.model_validate),
    "cjk_marks": ((symptom_words._MARKS,), symptom_words.MarksCatalog.model_validate),
    "figures": ((figures._CATALOG,), figures.Catalog.model_validate),
    "layers": ((layers.LAYERS_FILE,), lambda data: layers._checked(layers.LAYERS_FILE, data)),
    "load_reports": ((load_reports._CATALOG,), load_reports.Catalog.model_validate),
    "nccl": ((nccl_catalog._CATALOG,), nccl_catalog.Catalog.model_validate),
    "network": (network.CATALOGS, network._validate),
    "queries": (tuple(queries.query_files()), lambda *data: queries._checked(
        [(path.name, d) for path, d in zip(queries.query_files(), data, strict=True)])),
    "signals": ((signals._CATALOG, *network.CATALOGS), signals._validate),
    "stated": ((stated._CATALOG,), stated._validate),
    "status_fields": ((status_fields._CATALOG,), status_fields.StatusCatalog.model_validate),
    "symptom_words": ((symptom_words._CATALOG,), symptom_words.Catalog.model_validate),
    "xid": ((xid._CATALOG,), xid._validate),
}


class Counting:
    def __init__(self, validate: Callable[..., Any]) -> None:
        self.validate = validate
        self.calls = 0

    def __call__(self, *data: Any) -> Any:
        self.calls += 1
        return self.validate(*data)


@pytest.mark.parametrize("name", sorted(CATALOGS))
def test_every_catalog_is_validated_with_the_cache_off_and_comes_back_equal(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    paths, validate = CATALOGS[name]
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", "")
    off = Counting(validate)
    fresh = validated(paths, off)
    assert off.calls == 1 and fresh
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path))
    on = Counting(validate)
    assert validated(paths, on) == fresh
    assert validated(paths, on) == fresh
    assert on.calls == 1  # the second came from the cache


def test_a_changed_text_is_validated_again_and_an_invalid_one_refused(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path / "cache"))
    catalog = tmp_path / "xid.yaml"
    text = xid._CATALOG.read_text(encoding="utf-8")
    catalog.write_text(text, encoding="utf-8")
    count = Counting(xid._validate)
    validated((catalog,), count)
    catalog.write_text(text + "\n", encoding="utf-8")
    validated((catalog,), count)
    assert count.calls == 2
    catalog.write_text("79:\n  name: [not, a, name]\n", encoding="utf-8")
    with pytest.raises(ValidationError):
        validated((catalog,), count)


def test_a_broken_cache_file_is_validated_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path))
    count = Counting(xid._validate)
    first = validated((xid._CATALOG,), count)
    for cached in (tmp_path / "validated").iterdir():
        cached.write_bytes(b"\x80\x05not a pickle")
    assert validated((xid._CATALOG,), count) == first
    assert count.calls == 2


@pytest.mark.parametrize("mode", [0o664, 0o646])
def test_a_cache_file_others_may_write_is_never_unpickled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: int) -> None:
    # Unpickling runs code: a cached object in a file a group or anyone may write is validated again, not loaded.
    monkeypatch.setenv("TRIAGEBOT_CACHE_DIR", str(tmp_path))
    count = Counting(xid._validate)
    validated((xid._CATALOG,), count)
    for cached in (tmp_path / "validated").iterdir():
        cached.chmod(mode)
    validated((xid._CATALOG,), count)
    assert count.calls == 2
