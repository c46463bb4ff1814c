"""The secret catalog (collectors/catalogs/secrets.yaml): every shape masks its examples and keeps its look-alikes."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from collectors.redact import MASK, catalog, redact_json, redact_text

SHAPES = catalog().shapes
EXAMPLES = [pytest.param(text, secret, id=f"{shape.id}-{i}")
            for shape in SHAPES for i, (text, secret) in enumerate(shape.examples)]
KEEPS = [pytest.param(text, id=f"{shape.id}-keep-{i}") for shape in SHAPES for i, text in enumerate(shape.keep)]
KEEPS += [pytest.param(text, id=f"evidence-{i}") for i, text in enumerate(catalog().keep)]

# The shapes issue #14 found passing through the old redactor: each must stay covered by the catalog.
ISSUE_14 = [
    ("migrate --db-password hunter2-space --host db", "hunter2-space"),
    ("MYSQL_PWD=pwd-value-123", "pwd-value-123"),
    ("charge failed with sk_live_51Habcdefghijklmnopqrstuv", "sk_live_51Habcdefghijklmnopqrstuv"),
    ("summary: login failed, password=Sup3rS3cret! for user svc", "Sup3rS3cret!"),
    ("Authorization: Bearer abcdefghijklmnop1234", "abcdefghijklmnop1234"),
    ('"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkq\\n-----END PRIVATE KEY-----\\n"',
     "MIIEvQIBADANBgkq"),
    ("X-Api-Key: 7d0a1f4e9b2c4c1e8f0a", "7d0a1f4e9b2c4c1e8f0a"),
    ("sk-proj-abcDEF123456ghiJKL789012mnoPQR", "sk-proj-abcDEF123456ghiJKL789012mnoPQR"),
    ("https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/abcdefGHIJKLmnopQRSTuvwx", "abcdefGHIJKLmnopQRSTuvwx"),
    ("aws secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("mysql -uroot -pPass123word -h db", "Pass123word"),
    ('{"value": "s3cr3t-value-first", "name": "DB_PASSWORD"}', "s3cr3t-value-first"),
]


def test_every_shape_has_sources_and_examples() -> None:
    assert len({s.id for s in SHAPES}) == len(SHAPES), "shape ids must be unique"
    for shape in SHAPES:
        assert shape.sources, shape.id
        assert shape.examples, f"{shape.id} has no example to test it by"


@pytest.mark.parametrize(("text", "secret"), EXAMPLES)
def test_shape_masks_its_examples(text: str, secret: str) -> None:
    out = redact_text(text)
    assert secret not in out
    assert MASK in out
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("text", KEEPS)
def test_look_alikes_are_kept(text: str) -> None:
    assert redact_text(text) == text


@pytest.mark.parametrize(("text", "secret"), ISSUE_14)
def test_the_shapes_issue_14_found_are_masked(text: str, secret: str) -> None:
    assert secret not in redact_text(text)


def test_redaction_is_idempotent_on_every_example() -> None:
    for shape in SHAPES:
        for text, _ in shape.examples:
            once = redact_text(text)
            assert redact_text(once) == once, shape.id


def test_json_tree_masks_values_under_secret_keys() -> None:
    payload = {"labels": {"alertname": "DBDown", "db_password": "plain"},
               "annotations": {"summary": "login failed password=hunter2x"}, "n": 3}
    out = redact_json(payload)
    assert out["labels"] == {"alertname": "DBDown", "db_password": MASK}
    assert "hunter2x" not in out["annotations"]["summary"]
    assert out["n"] == 3


@given(st.text(max_size=400))
def test_redaction_never_moves_lines(text: str) -> None:
    assert redact_text(text).count("\n") == text.count("\n")
