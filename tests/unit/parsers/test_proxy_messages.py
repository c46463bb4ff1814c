"""The proxy catalog (collectors/catalogs/proxies.yaml) on text people pasted: its messages run the symptom they
show (generic errors, answers that are no error, questions and denials run none: test_names_nothing.py). The
catalog's own templates are rendered and read back by test_network_catalog.py (both catalogs share the loader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.catalogs.network import entries
from collectors.catalogs.signals import signals
from tests.unit.parsers.paste_facts import joined_facts as _facts

PASTES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "proxy_pastes.yaml").read_text(encoding="utf-8"))
BY_ID = {s.spec.id: s for s in signals()}


@pytest.mark.parametrize("paste", PASTES, ids=lambda p: f"{p['url'].rsplit('/', 3)[-3]}-{p['url'].rsplit('/', 1)[-1]}")
def test_real_pastes_show_their_symptom(paste: dict[str, Any]) -> None:
    assert paste["url"].startswith("https://")
    lines = paste["text"].splitlines()
    for sid in paste["signals"]:
        assert any(BY_ID[sid].regex.search(line) for line in lines), sid
    got = _facts(paste["text"])
    for name, value in paste["facts"].items():
        assert name in got, (name, got)
        if isinstance(value, list):
            assert set(value) <= set(got[name]), (name, got[name])  # type: ignore[call-overload]
        else:
            assert got[name] == value, (name, got[name])


def test_the_catalog_names_the_symptoms_its_header_lists() -> None:
    # Load testers' percentiles name none: the figure, read as latency.p99_seconds, says whether it is slow.
    # launchers.yaml, loaded with them, names nccl-hang: an MPI job whose daemons are lost or cannot start.
    # startup_exits.yaml's Triton entries name crash-loop: a server that gives up at start-up is restarted.
    # frameworks.yaml's GPU allocators name oom-killed: the GPU's memory ran out.
    named = {e.symptom for e in entries() if e.symptom is not None} - {"nccl-hang", "crash-loop", "oom-killed"}
    assert named == {"error-rate", "service-unreachable"}
