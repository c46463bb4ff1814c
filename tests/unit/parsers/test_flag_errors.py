"""A program refusing its own flags or environment at start-up reads as `app.errors` config (crash-loop's
bad-config), and names no symptom by itself.

Templates of Go's flag package, spf13/pflag, spf13/cobra and kured (signals.yaml go-flag-parse-error and
kured-invalid-env-value cite files and versions), rendered with sample values; real pastes from
first_sight_pastes.yaml, each with its thread.
"""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import joined_facts

RENDERED = [
    "flag provided but not defined: -metrics-port",
    'invalid value "abc" for flag -port: parse error',
    'invalid argument "abc" for "-p, --port" flag: strconv.ParseInt: parsing "abc": invalid syntax',
    "Error: unknown flag: --enable-leader-election",
    "Error: unknown shorthand flag: 'x' in -x",
    'Error: required flag(s) "config" not set',
    "flag needs an argument: -config",
    "flag needs an argument: 'c' in -c",
    "Invalid value for env var named KURED_METRICS_PORT",
]


@pytest.mark.parametrize("line", RENDERED)
def test_every_template_reads_as_a_config_error(line: str) -> None:
    facts = joined_facts(line)
    assert facts.get("app.errors") == ["config"], facts
    assert facts.get("evidence.symptoms", []) == [], facts


@pytest.mark.parametrize("paste", ["stash-290-sidecar-pflag-invalid-argument",
                                   "csi-driver-localstorage-38-webhook-dry-run-flag"])
def test_a_real_flag_error_reads_as_a_config_error(paste: str) -> None:
    assert "config" in joined_facts(PASTES[paste]).get("app.errors", [])  # type: ignore[operator]
