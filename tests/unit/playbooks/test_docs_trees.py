"""docs/playbooks.md lists every bundled tree and every hypothesis in it, with its seed lines."""

from __future__ import annotations

from pathlib import Path

from playbooks.loader import load_playbooks

DOC = Path(__file__).resolve().parents[3] / "docs" / "playbooks.md"


def test_every_tree_and_hypothesis_is_listed_with_its_sources() -> None:
    text = DOC.read_text(encoding="utf-8")
    trees = text.split("\n## The trees\n", 1)[1]
    for book in load_playbooks():
        section = trees.split(f"### `{book.spec.id}`:", 1)
        assert len(section) == 2, f"{book.spec.id} is not listed"
        body = section[1].split("\n### ", 1)[0]
        for h, _ in book.spec.walk():
            row = next((line for line in body.splitlines() if line.startswith(f"| `{h.id}`")), "")
            assert row, f"{book.spec.id}/{h.id} is not listed"
            assert all(source in row for source in h.source), f"{book.spec.id}/{h.id}: sources differ from the YAML"
        assert f"- `{book.spec.id}`:" in trees, f"{book.spec.id} has no whole-tree source line"
