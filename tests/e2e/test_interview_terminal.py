"""`triagebot interview` as a user meets it: scripted answers through run_interview, and once through the CLI."""

from __future__ import annotations

import io
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pytest
from rich.console import Console

from bot.cli.interview import InterviewUsageError, run_interview
from bot.cli.main import build_parser, main
from drills import exact
from drills.questions import load_bank

ROOT = Path(__file__).resolve().parents[2]
BANK = load_bank()


class Script:
    """An input() stand-in that replays lines, records prompts, and raises EOFError when it runs out."""

    def __init__(self, lines: Iterable[str]) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def interview(argv: list[str], lines: Iterable[str]) -> tuple[int, str, Script]:
    console = Console(record=True, width=140, file=io.StringIO(), color_system=None)
    script = Script(lines)
    code = run_interview(build_parser().parse_args(["interview", *argv]), console, script)
    return code, console.export_text(), script


def test_full_exchange_answer_follow_up_model_answer() -> None:
    q = BANK.questions["mig-configuration"]
    code, out, script = interview(["--id", q.id], [
        "hint",
        "MIG mode is switched on below Kubernetes, at the driver level with nvidia-smi,",
        "and you pick profiles for the slices.",
        "",
        "The GPU Operator's device plugin with a MIG strategy exposes them as resources.",
        "",
    ])
    assert code == 0
    assert q.question.split()[0] in out and "gpu-scheduling · medium · concept" in out
    assert f"Hint 1/{len(q.hints)}: {q.hints[0]}" in out
    assert "Coverage 50/100: partial" in out  # driver level + profiles out of 4 points
    assert "✓" in out and "✗" in out
    assert "Follow-up 1/1" in out and q.follow_ups[0] in out
    assert "Your follow-up answer added:\n  + The GPU Operator / device plugin" in out
    assert "Coverage so far 75/100: partial" in out
    assert "Model answer" in out and q.model_answer.split(".")[0].split()[-1] in out
    assert "Overall coverage 75/100 (partial); hints used 1/" in out
    assert "Still missing:" in out and "Source: seed 002:67-86" in out
    assert script.prompts[:3] == ["> ", "> ", "  "]  # continuation prompt inside a multi-line answer


def test_quit_and_end_of_input_show_the_model_answer() -> None:
    q = BANK.questions["etcd-leader-partition"]
    for lines in (["quit"], []):
        code, out, _ = interview(["--id", q.id], lines)
        assert code == 0 and "Model answer" in out and "Not answered." in out


def test_skip_and_hints_run_out_politely() -> None:
    q = BANK.questions["shell-glob-expansion"]
    code, out, _ = interview(["--id", q.id], ["hint"] * (len(q.hints) + 1) + ["skip"])
    assert code == 0
    assert "No more hints" in out and "Model answer" in out


def test_strong_answer_and_related_playbook() -> None:
    q = BANK.questions["ddp-init-hang"]
    code, out, _ = interview(["--id", q.id, "--follow-ups", "0"], [q.model_answer, ""])
    assert code == 0 and "strong" in out and "Follow-up" not in out
    assert "Related playbook: triagebot playbooks show nccl-hang" in out


def test_exact_follow_ups_from_the_playbook_are_answered_with_letters() -> None:
    q = BANK.questions["ddp-init-hang"]
    first = exact.for_question(q)[0]
    code, out, _ = interview(["--id", q.id, "--follow-ups", "0"], [
        q.model_answer, "",
        "no idea", "",  # not letters: asked again
        first.letters(first.answer), "",
        "skip"])
    assert code == 0
    assert "Exact follow-up 1/2 (from the playbook)" in out and "Exact follow-up 2/2" in out
    assert "Answer with the letters" in out and "100/100" in out
    assert "Exact follow-ups 100/100, 0/100; score" in out


def test_topic_and_difficulty_pick_is_repeatable() -> None:
    _, first, _ = interview(["scenarios", "--difficulty", "hard", "--seed", "3"], [])
    _, second, _ = interview(["scenarios", "--difficulty", "hard", "--seed", "3"], [])
    assert first == second and "scenarios · hard · scenario" in first


def test_list_topics_and_questions() -> None:
    code, out, _ = interview(["--list"], [])
    assert code == 0 and f"({len(BANK)} questions)" in out
    assert all(topic in out for topic in BANK.topic_names())
    code, out, _ = interview(["linux", "--list"], [])
    assert code == 0 and all(q.id in out for q in BANK.select(topic="linux"))


@pytest.mark.parametrize(("argv", "message"), [
    (["no-such-topic"], "unknown topic 'no-such-topic'; known topics: autoscaling-cost, behavioural"),
    (["--id", "nope"], "unknown question id 'nope'"),
    (["no-such-topic", "--list"], "unknown topic"),
])
def test_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(InterviewUsageError, match=message):
        interview(argv, [])


def test_unknown_topic_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["interview", "warp-drives"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("triagebot: error: unknown topic 'warp-drives'; known topics: ")
    assert all(topic in err for topic in BANK.topic_names())


def test_through_the_real_cli_with_stdin() -> None:
    q = BANK.questions["shell-glob-expansion"]
    answer = "The shell does the glob expansion and ls gets the names as arguments.\n\nskip\n"
    proc = subprocess.run([sys.executable, "-m", "bot.cli", "interview", "--id", q.id], input=answer,
                          capture_output=True, text=True, cwd=ROOT, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "Coverage 67/100: partial" in proc.stdout
    assert "Follow-up 1/1" in proc.stdout and "Model answer" in proc.stdout
    assert "Still missing:" in proc.stdout
