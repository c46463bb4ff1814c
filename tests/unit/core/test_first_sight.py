"""The first-sight ledger: a batch is scored once, appended, never rewritten, and shown in docs/accuracy.md."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bot.cli.main import main
from bot.render.accuracy import accuracy_markdown
from drills.first_sight import LEDGER, BatchScore, LedgerError, load_ledger, record

REPO = Path(__file__).resolve().parents[3]
# Two real cases (one pending, one gpu-xid): the batch the CLI scores below.
CASES = [REPO / "tests/realworld/pending", REPO / "tests/realworld/gpu-xid"]


def batch(tmp_path: Path) -> Path:
    root = tmp_path / "batch"
    for folder in CASES:
        first = sorted(p for p in folder.iterdir() if (p / "case.yaml").exists())[0]
        shutil.copytree(first, root / folder.name / first.name)
    return root


def score(batch_id: str, passed: int = 1) -> BatchScore:
    return BatchScore(id=batch_id, scored_on="2026-11-28", collected_by="a helper", version="0.1.0", cases=2,
                      passed=passed, by_symptom={"pending": [1, passed]})


def test_record_appends_and_never_rewrites(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.yaml"
    ledger.write_text("# the ledger\n", encoding="utf-8")
    record(score("b1"), ledger)
    before = ledger.read_bytes()
    record(score("b2", passed=0), ledger)
    assert ledger.read_bytes().startswith(before)
    assert [(b.id, b.passed) for b in load_ledger(ledger)] == [("b1", 1), ("b2", 0)]
    with pytest.raises(LedgerError, match="batch b1 was scored on 2026-11-28 \\(1/2\\); a batch is scored once"):
        record(score("b1", passed=2), ledger)
    assert [b.passed for b in load_ledger(ledger)] == [1, 0]


def test_eval_first_sight_scores_a_batch_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root, ledger, doc = batch(tmp_path), tmp_path / "ledger.yaml", tmp_path / "accuracy.md"
    args = ["eval", str(root), "--quiet", "--ledger", str(ledger), "--first-sight", "b-2026-11-28"]
    assert main([*args, "--collected-by", "a helper", "--write", str(doc)]) == 0
    [entry] = load_ledger(ledger)
    assert (entry.id, entry.cases, entry.collected_by) == ("b-2026-11-28", 2, "a helper")
    assert set(entry.by_symptom) == {"pending", "gpu-xid"} and entry.passed == sum(p for _, p in
                                                                                    entry.by_symptom.values())
    assert f"| b-2026-11-28 | {entry.scored_on} | 2 | {entry.passed} |" in doc.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main([*args, "--collected-by", "a helper"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"triagebot: error: batch b-2026-11-28 is already in {ledger}: a batch is scored once; "
                           "collect a new one")
    assert len(load_ledger(ledger)) == 1


def test_first_sight_needs_who_collected_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["eval", str(batch(tmp_path)), "--first-sight", "x", "--ledger", str(tmp_path / "l.yaml")]) == 2
    assert "--first-sight needs --collected-by" in capsys.readouterr().err
    assert not (tmp_path / "l.yaml").exists()


def test_a_broken_ledger_is_a_one_line_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ledger = tmp_path / "l.yaml"
    ledger.write_text("- id: x\n  cases: many\n", encoding="utf-8")
    assert main(["eval", str(batch(tmp_path)), "--ledger", str(ledger)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"triagebot: error: {ledger}: not a first-sight ledger") and err.count("\n") == 1


def test_markdown_shows_each_batch_beside_the_regression_table() -> None:
    text = accuracy_markdown([], [score("b1"), score("b2", passed=0)])
    assert "| b1 | 2026-11-28 | 2 | 1 | 50 % | - | pending 1/1 |" in text
    assert "| b2 | 2026-11-28 | 2 | 0 | 0 % | - | pending 0/1 |" in text
    assert text.index("## First sight") < text.index("## Regression")


def test_the_bundled_ledger_is_in_docs_accuracy() -> None:
    doc = (REPO / "docs/accuracy.md").read_text(encoding="utf-8")
    entries = load_ledger(REPO / LEDGER)
    assert entries, "the ledger keeps at least the 2026-11-26 batch"
    for b in entries:
        assert f"| {b.id} | {b.scored_on} | {b.cases} | {b.passed} |" in doc


def test_cases_whose_cause_only_the_thread_knows_are_counted_apart(tmp_path: Path) -> None:
    root, ledger = batch(tmp_path), tmp_path / "ledger.yaml"
    marked = next(root.glob("pending/*/case.yaml"))
    marked.write_text(marked.read_text(encoding="utf-8") + "cause_in_paste: false\n", encoding="utf-8")
    assert main(["eval", str(root), "--quiet", "--ledger", str(ledger), "--first-sight", "b-apart",
                 "--collected-by", "a helper"]) == 0
    [entry] = load_ledger(ledger)
    pending_passed = entry.by_symptom["pending"][1]
    assert entry.thread_only == [1, pending_passed]
    row = accuracy_markdown([], [entry]).split("| b-apart |")[1]
    xid_passed = entry.passed - pending_passed
    assert f"| {xid_passed * 100} % ({xid_passed}/1) |" in row
