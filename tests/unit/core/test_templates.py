"""Escaping in rendered next checks: PromQL label values, regexes and shell words."""

from __future__ import annotations

import pytest

from playbooks.templates import promql_label, promql_regex, render


@pytest.mark.parametrize(
    ("value", "label", "regex"),
    [
        ("checkout", "checkout", "checkout"),
        ('a"b', 'a\\"b', 'a\\"b'),
        ("a\\b", "a\\\\b", "a\\\\\\\\b"),
        ("web.v2", "web.v2", "web\\\\.v2"),
        ("x\ny", "x\\ny", "x\\ny"),
    ],
)
def test_promql_escaping(value: str, label: str, regex: str) -> None:
    assert promql_label(value) == label
    assert promql_regex(value) == regex


def test_shell_quoting_and_placeholders() -> None:
    assert render("kubectl logs {{ pod|sh }} -n {{ namespace|sh }}", {"pod": "a b;rm"}) == \
        "kubectl logs 'a b;rm' -n <namespace>"


def test_sandbox_blocks_attribute_escape() -> None:
    from jinja2.exceptions import SecurityError

    with pytest.raises(SecurityError):
        render("{{ pod.__class__.__mro__ }}", {"pod": "x"})
