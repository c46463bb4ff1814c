"""playbooks/schema.json is generated from the model, and every bundled playbook validates against it."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import yaml

from playbooks.loader import PLAYBOOK_DIR, playbook_files
from playbooks.model import Playbook


def test_schema_file_is_current() -> None:
    on_disk = json.loads((PLAYBOOK_DIR / "schema.json").read_text(encoding="utf-8"))
    assert on_disk == Playbook.model_json_schema(), "regenerate: triagebot playbooks schema > playbooks/schema.json"


def test_bundled_playbooks_validate_against_the_schema() -> None:
    schema = Playbook.model_json_schema()
    files: list[Path] = playbook_files()
    assert files
    # What jsonschema.validate does per call (check the schema, pick its draft's validator), done once for all files.
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    for path in files:
        validator.validate(yaml.safe_load(path.read_text(encoding="utf-8")))


def test_schema_rejects_unknown_keys() -> None:
    bad = {"id": "pending", "title": "t", "trigger": "true", "sources": [], "hypotheses": [], "extra": 1}
    errors = list(jsonschema.Draft202012Validator(Playbook.model_json_schema()).iter_errors(bad))
    assert any("extra" in e.message for e in errors)
