"""`triagebot interview grade`: one answer graded without the exchange, through the real CLI entry point."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from bot.cli.main import main

EXPERT = ("MIG is not a Kubernetes object: it is switched on per card at the hardware layer with the vendor's "
          "tool or the operator's partition manager. You choose a slice shape such as 1g.10gb from the fixed "
          "menu and the card creates the isolated instances. The plugin is told to advertise the slices as "
          "named resources, so pods can request a specific slice. Small notebooks go on small slices because "
          "their memory needs are tiny.")
WRONG = "Kubernetes splits the GPU itself: the scheduler slices the card when a pod asks for nvidia.com/gpu 0.5."


def run(argv: list[str], capsys: pytest.CaptureFixture[str], stdin: str | None = None,
        monkeypatch: pytest.MonkeyPatch | None = None) -> tuple[int, str, str]:
    if stdin is not None and monkeypatch is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    code = main(["interview", "grade", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_from_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    answer = tmp_path / "answer.txt"
    answer.write_text(EXPERT, encoding="utf-8")
    code, out, _ = run(["--id", "mig-configuration", "--answer-file", str(answer), "--format", "json"], capsys)
    data = json.loads(out)
    assert code == 0 and set(data) == {"score", "points", "wrong_claims", "notes"}
    assert data["score"] >= 70 and data["wrong_claims"] == []
    assert {p["id"] for p in data["points"]} == {"below-k8s", "profiles", "expose", "right-size"}
    credited = [p for p in data["points"] if p["credited"]]
    assert credited and all(p["evidence"] and p["evidence"] in EXPERT for p in credited)


def test_stdin_and_a_wrong_claim(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(["--id", "mig-configuration", "--answer-file", "-", "--format", "json"], capsys,
                       stdin=WRONG, monkeypatch=monkeypatch)
    data = json.loads(out)
    assert code == 0 and data["score"] <= 30
    assert [w["id"] for w in data["wrong_claims"]] == ["mig-by-kubernetes"]
    assert data["wrong_claims"][0]["evidence"].startswith("Kubernetes splits the GPU itself")


def test_text_names_the_evidence_and_the_wrong_claim(capsys: pytest.CaptureFixture[str],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(["--id", "mig-configuration", "--answer-file", "-"], capsys, stdin=WRONG + " " + EXPERT,
                       monkeypatch=monkeypatch)
    assert code == 0 and "Score " in out and "Wrong claim: Kubernetes (the scheduler) creates the MIG" in out


def test_a_bare_keyword_list_scores_zero(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run(["--id", "low-gpu-utilisation", "--answer-file", "-", "--format", "json"], capsys,
                       stdin="nvidia-smi cpu batch profiler", monkeypatch=monkeypatch)
    assert code == 0 and json.loads(out)["score"] == 0


@pytest.mark.parametrize(("argv", "message"), [
    (["--id", "no-such-question", "--answer-file", "-"], "unknown question id 'no-such-question'; list them with"),
    (["--id", "mig-configuration", "--answer-file", "/no/such/file"], "cannot read answer file /no/such/file"),
    (["--id", "mig-configuration"], "usage: triagebot interview grade --id ID --answer-file"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out == ""
    assert err.startswith("triagebot: error: ") and message in err and err.count("\n") == 1


def test_answer_file_without_grade_is_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interview", "--answer-file", "x.txt"]) == 2
    assert "--answer-file goes with `triagebot interview grade`" in capsys.readouterr().err
