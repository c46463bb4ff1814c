"""The incident catalog: bundled and saved incidents under unique ids, each with its origin."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from drills.errors import DrillError
from drills.recorded.catalog import CatalogError, check_new_id, load, load_catalog, locate
from drills.recorded.incident import INCIDENT_DIR
from drills.recorded.picker import parse_start, pick


def save_copy(drills_dir: Path, name: str, source: str = "oom-trainer-limit", **changes: object) -> Path:
    """A bundled incident copied into the drills dir as a saved one named `name`."""
    folder = drills_dir / name
    shutil.copytree(INCIDENT_DIR / source, folder)
    meta_path = folder / "incident.yaml"
    meta = yaml.safe_load(meta_path.read_text(encoding="utf-8"))
    meta.update({"id": name, "tags": ["saved"], **changes})
    meta_path.write_text(yaml.safe_dump(meta), encoding="utf-8")
    return folder


def test_bundled_and_saved_incidents_with_their_origin(tmp_path: Path) -> None:
    save_copy(tmp_path, "incident-7")
    catalog = load_catalog(tmp_path)
    origins = {e.id: e.origin for e in catalog.entries}
    assert origins["incident-7"] == "saved" and origins["oom-trainer-limit"] == "bundled"
    assert sum(1 for o in origins.values() if o == "saved") == 1
    assert catalog.folder("incident-7") == tmp_path / "incident-7" and not catalog.problems
    # Picking by id and at random both see it, like any bundled incident.
    metas = catalog.metas()
    assert pick(metas, "incident-7").id == "incident-7"
    assert pick(metas, "random", tag="saved").id == "incident-7"
    assert parse_start(["incident-7"], metas) == ("incident-7", None, None)
    assert load("incident-7", tmp_path).meta.tags == ["saved"]


def test_without_a_drills_dir_only_the_bundled_ones(tmp_path: Path) -> None:
    bundled = load_catalog(None)
    assert {e.origin for e in bundled.entries} == {"bundled"} and len(bundled.entries) >= 25
    assert len(load_catalog(tmp_path / "not-created-yet").entries) == len(bundled.entries)
    # The drills dir pointed at the bundled folder does not list everything twice.
    assert len(load_catalog(INCIDENT_DIR).entries) == len(bundled.entries)


def test_saved_folders_that_break_the_rules_are_left_out_with_a_reason(tmp_path: Path) -> None:
    save_copy(tmp_path, "good")
    save_copy(tmp_path, "oom-trainer-limit")  # copied by hand over a bundled id
    save_copy(tmp_path, "renamed", id="something-else")
    broken = save_copy(tmp_path, "broken")
    (broken / "incident.yaml").write_text("id: broken\ndifficulty: impossible\n", encoding="utf-8")
    save_copy(tmp_path, "Upper-Case")
    catalog = load_catalog(tmp_path)
    saved = [e.id for e in catalog.entries if e.origin == "saved"]
    assert saved == ["good"]
    problems = "\n".join(catalog.problems)
    assert len(catalog.problems) == 4
    assert "already taken" in problems and "says id 'something-else'" in problems
    assert "broken/incident.yaml" in problems and "not a usable drill id" in problems
    # The bundled incident is the one under its id.
    assert catalog.folder("oom-trainer-limit") == INCIDENT_DIR / "oom-trainer-limit"


@pytest.mark.parametrize(("name", "expected"), [
    ("oom-trainer-limit", "id of a bundled incident"),
    ("random", "command word"),
    ("list", "command word"),
    ("My Drill", "cannot be a drill id"),
    ("../escape", "cannot be a drill id"),
])
def test_a_new_id_must_be_usable_and_not_shadow_a_bundled_one(name: str, expected: str) -> None:
    with pytest.raises(CatalogError, match=expected):
        check_new_id(name, load_catalog(None).bundled_ids())


def test_new_ids_that_are_fine() -> None:
    for name in ("incident-12", "slack-run-3", "checkout.2026-01-02"):
        check_new_id(name, load_catalog(None).bundled_ids())


def test_locate_finds_by_id_and_never_follows_a_path(tmp_path: Path) -> None:
    save_copy(tmp_path, "incident-7")
    assert locate("incident-7", tmp_path) == tmp_path / "incident-7"
    assert locate("oom-trainer-limit", tmp_path) == INCIDENT_DIR / "oom-trainer-limit"
    with pytest.raises(DrillError, match="no recorded incident 'incident-8'"):
        locate("incident-8", tmp_path)
    with pytest.raises(DrillError, match="no recorded incident"):
        locate("../incidents/oom-trainer-limit", tmp_path)
    with pytest.raises(DrillError, match="no recorded incident"):
        locate("incident-7", None)
