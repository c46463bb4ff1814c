"""The accuracy table of `triagebot eval`: per symptom, totals, and the failing cases named with why."""

from __future__ import annotations

from rich.console import Console

from bot.render.accuracy import accuracy_markdown, render_accuracy
from drills.realworld import CaseResult

RESULTS = [
    CaseResult("a", "pending", False),
    CaseResult("b", "pending", True),
    CaseResult("c", "gpu-xid", False, ["fact xid.codes not read (expected [79])"]),
]


def test_markdown_counts_per_symptom_and_names_failures() -> None:
    text = accuracy_markdown(RESULTS)
    assert "| pending | 2 | 2 | 100 % | 1 |" in text
    assert "| gpu-xid | 1 | 0 | 0 % | 0 |" in text
    assert "| **all** | 3 | 2 | 67 % | 1 |" in text
    assert "- `gpu-xid/c`: fact xid.codes not read (expected [79])" in text


def test_terminal_table_and_failures() -> None:
    console = Console(width=120, record=True, color_system=None)
    render_accuracy(RESULTS, console)
    out = console.export_text()
    assert "gpu-xid/c: fact xid.codes not read" in out and "67 %" in out
    quiet = Console(width=120, record=True, color_system=None)
    render_accuracy(RESULTS, quiet, failures=False)
    assert "gpu-xid/c" not in quiet.export_text()
