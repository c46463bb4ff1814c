"""The fact vocabulary is consistent and docs/facts.md is generated from it."""

from __future__ import annotations

from pathlib import Path

from collectors.vocabulary import VOCABULARY, render_markdown

DOCS = Path(__file__).resolve().parents[3] / "docs" / "facts.md"


def test_docs_facts_md_matches_the_code() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_markdown(), (
        "docs/facts.md is stale: run `triagebot facts --markdown > docs/facts.md`")


def test_no_name_is_a_prefix_of_another() -> None:
    names = sorted(VOCABULARY)
    clashes = [(a, b) for a in names for b in names if b.startswith(a + ".")]
    assert clashes == []


def test_contract_names_and_types() -> None:
    fixed = {
        "container.last_terminated.reason": "str", "container.last_terminated.exit_code": "int",
        "container.waiting.reason": "str", "pod.phase": "str", "pod.status.reason": "str",
        "scheduling.reasons": "list[str]", "xid.codes": "list[int]", "gpu.fallen_off_bus": "bool",
        "kernel.oom_kill": "bool", "conntrack.table_full": "bool", "conntrack.drops": "int",
        "cpu.throttled_ratio": "float", "nccl.socket_ifname": "str",
    }
    assert {name: VOCABULARY[name].type for name in fixed} == fixed


def test_every_fact_is_explained() -> None:
    assert [s.name for s in VOCABULARY.values() if len(s.meaning) < 8] == []
