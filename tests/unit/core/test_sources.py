"""Citations a user can follow: every source a playbook names uses a short name docs/sources.md defines, and
nothing in the repository points at documents outside it."""

from __future__ import annotations

import re
from pathlib import Path

from playbooks.loader import load_playbooks

ROOT = Path(__file__).resolve().parents[3]
SOURCES = (ROOT / "docs" / "sources.md").read_text(encoding="utf-8")
# A seed line, a digest section, or a public reference named in docs/sources.md.
CITATION = re.compile(r"^(?:seed 00[0-4](?:\b|:)|seed[- ]digest\b|NVIDIA |Kubernetes |kube-prometheus|"
                      r"kubernetes-mixin|dcgm-exporter|PyTorch|NCCL|https://)")


def test_docs_sources_names_every_short_name_it_defines() -> None:
    for name in ("seed 000", "seed 001", "seed 002", "seed 003", "seed 004", "seed digest"):
        assert f"**{name}**" in SOURCES


def test_every_playbook_source_uses_a_defined_short_name() -> None:
    cited = [(p.spec.id, s) for p in load_playbooks() for h, _ in p.spec.walk() for s in h.source]
    assert cited
    assert [c for c in cited if not CITATION.match(c[1])] == []


def test_nothing_points_outside_the_repository() -> None:
    outside = re.compile(r"/work/shared|\.\./shared|DESIGN\.md")
    found = []
    for folder in ("docs", "playbooks", "collectors", "drills", "bot", "benchmarks", "README.md"):
        paths = [ROOT / folder] if folder.endswith(".md") else [p for p in (ROOT / folder).rglob("*")
                                                                if p.suffix in (".md", ".py", ".yaml", ".j2")]
        for path in paths:
            if path.name == "sources.md":
                continue  # it explains what the old name meant
            if outside.search(path.read_text(encoding="utf-8", errors="replace")):
                found.append(str(path.relative_to(ROOT)))
    assert found == []
