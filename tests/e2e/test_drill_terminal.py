"""`triagebot drill` in the terminal, driven by scripted input: the loop in-process, then the real CLI."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from bot.cli.drill import DrillUsageError, run_drill
from bot.cli.main import build_parser, main
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.store import MemorySessionStore
from tests.harness.processes import finish
from tests.harness.scripted_input import scripted

ROOT = Path(__file__).resolve().parents[2]
INCIDENT = load_incident(INCIDENT_DIR / "oom-trainer-limit")


@pytest.fixture(autouse=True)
def _own_drills_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved drills are listed beside the bundled ones: an empty drills dir keeps the picks as the tests expect,
    whatever this machine's state dir holds."""
    monkeypatch.setenv("TRIAGEBOT_DRILLS_DIR", str(tmp_path / "drills"))


def drive(argv: list[str], lines: list[str], store: MemorySessionStore) -> tuple[int, str]:
    console = Console(record=True, width=160, file=io.StringIO(), color_system=None)
    args = build_parser().parse_args(["drill", *argv])
    code = run_drill(args, console, scripted(lines), store=store)
    return code, console.export_text()


def test_a_whole_drill_from_page_to_debrief() -> None:
    store = MemorySessionStore()
    code, out = drive(["oom-trainer-limit", "--trainee", "alice"], [
        "help", "sources", "hypotheses", "evidence pod status", "propose oom-killed/node-oom", "hint",
        "evidence kernel log", "show dmesg.txt", "propose node-oom", "bogus", "evidence tea leaves",
        "declare oom-killed/host-memory-underestimated",
    ], store)
    assert code == 0
    before, _, debrief = out.partition("Debrief:")
    # The page as on-call saw it, and nothing that gives the answer away before the declaration.
    assert "KubePodCrashLooping (ml/training-job-xyz trainer critical)" in before
    assert "service=training-job" in before
    assert INCIDENT.meta.title not in before and "limit-too-low" not in before.split("Hypotheses")[0]
    assert "host-memory-underestimated" not in before.split("Hypotheses")[0]
    assert "evidence SOURCE" in before and "kernel-log" in before  # help and sources tables
    assert "latency" in before and "nccl-hang" in before  # every playbook's hypotheses, not just this one's
    assert "Not yet testable: look at kernel log" in before
    assert "Direction:" in before
    assert "memory: usage 209715200kB, limit 209715200kB" in before  # the kernel log itself
    assert "Ruled out by kernel.oom_memcg = true (dmesg.txt:121)" in before
    assert "Unknown command 'bogus'" in before and "no evidence source 'tea leaves'" in before
    # The debrief.
    assert "RIGHT: you declared oom-killed/host-memory-underestimated" in debrief
    assert re.search(r"Score \d+/100", debrief)
    assert "root cause" in debrief and "discrimination" in debrief
    assert "oom-killed playbook" in debrief and "not explored" in debrief
    assert "Ideal path (par 2m30s)" in debrief and "What each piece of evidence meant" in debrief
    assert "seed 004, scenario 1" in debrief
    [saved] = store.list_by_trainee("alice")
    assert saved.finished and saved.score is not None and saved.hint_level == 1


def test_quit_then_resume_where_it_stopped() -> None:
    store = MemorySessionStore()
    code, out = drive(["oom-trainer-limit", "--trainee", "alice"], ["evidence kernel log", "quit"], store)
    assert code == 0
    session_id = re.search(r"--resume (\w+)", out).group(1)  # type: ignore[union-attr]
    saved = store.load(session_id)
    assert saved is not None and not saved.finished and saved.revealed_sources == ["kernel-log"]

    code, out = drive(["--resume", session_id],
                      ["propose limit-too-low", "declare oom-killed/host-memory-underestimated"], store)
    assert code == 0
    assert f"Resumed drill {session_id}: clock 3m00s, seen kernel log" in out
    assert "Supported" in out
    assert "RIGHT" in out
    finished = store.load(session_id)
    assert finished is not None and finished.finished and finished.clock_seconds == 180 + 30

    # A finished drill shows its debrief again.
    code, out = drive(["--resume", session_id], [], store)
    assert code == 0 and "Debrief:" in out


def test_end_of_input_saves_the_drill() -> None:
    store = MemorySessionStore()
    code, out = drive(["oom-trainer-limit", "--trainee", "alice"], ["evidence metrics"], store)
    assert code == 0 and "Saved. Resume with" in out
    assert store.list_by_trainee("alice")[0].revealed_sources == ["metrics"]


def test_history_and_leaderboard() -> None:
    store = MemorySessionStore()
    drive(["oom-trainer-limit", "--trainee", "alice", "--channel", "#sre"],
          ["evidence pod status", "evidence metrics", "declare oom-killed/host-memory-underestimated"], store)
    drive(["oom-trainer-limit", "--trainee", "bob", "--channel", "#sre"], ["declare oom-killed/node-oom"], store)
    drive(["random", "--difficulty", "hard", "--trainee", "alice", "--channel", "#sre", "--seed", "1"], ["quit"],
          store)
    _, history = drive(["history", "--trainee", "alice"], [], store)
    assert "Drills of alice" in history and "finished" in history and "open (0m00s)" in history
    assert "100" in history
    _, board = drive(["leaderboard", "--channel", "#sre"], [], store)
    rows = [line for line in board.splitlines() if "alice" in line or "bob" in line]
    assert "alice" in rows[0] and "100" in rows[0] and "bob" in rows[1]


def test_random_pick_with_filters() -> None:
    store = MemorySessionStore()
    _, out = drive(["random", "--difficulty", "easy", "--tag", "quota", "--trainee", "alice"], ["quit"], store)
    [session] = store.list_by_trainee("alice")
    picked = load_incident(INCIDENT_DIR / session.incident_id).meta
    assert picked.difficulty == "easy" and "quota" in picked.tags
    assert picked.title in out or picked.page.splitlines()[0] in out  # the drill shows the page it picked


@pytest.mark.parametrize("argv, message", [
    (["nope"], "no recorded incident 'nope'"),
    (["--resume", "nope"], "no saved drill 'nope'"),
    (["random", "--tag", "no-such-tag"], "no recorded incident matches tag 'no-such-tag'"),
])
def test_mistakes_on_the_command_line_exit_2(argv: list[str], message: str, tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drill", *argv, "--db", str(tmp_path / "d.sqlite")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("triagebot: error: ") and message in err and err.count("\n") == 1


# --- the real command line, as a separate process -------------------------------------------------------------------


def start_cli(args: list[str], stdin: str, state: Path) -> subprocess.Popen[str]:
    """`triagebot drill ARGS` started with its input written and closed; `finish` collects it. Commands that do
    not depend on each other start together: each is mostly interpreter start-up, and CI has two cores."""
    env = {**os.environ, "TRIAGEBOT_STATE_DIR": str(state), "COLUMNS": "160"}
    process = subprocess.Popen([sys.executable, "-m", "bot.cli", "drill", *args], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    assert process.stdin is not None
    process.stdin.write(stdin)  # a few lines: within the pipe's buffer, so this cannot block
    process.stdin.close()
    process.stdin = None  # closed: communicate() must not flush it again
    return process


def test_the_real_cli_over_stdin_with_a_restart_in_between(tmp_path: Path) -> None:
    # A mistake, in a state dir of its own so it cannot race the first run's new database: started beside it.
    (tmp_path / "elsewhere").mkdir()
    mistaken = start_cli(["--resume", "nope"], "", tmp_path / "elsewhere")
    first = finish(start_cli(["oom-trainer-limit", "--trainee", "carol"],
                             "evidence pod status\nevidence kernel log\nquit\n", tmp_path))
    assert first.returncode == 0, first.stderr
    assert "KubePodCrashLooping" in first.stdout and "CONSTRAINT_MEMCG" in first.stdout
    session_id = re.search(r"--resume (\w+)", first.stdout).group(1)  # type: ignore[union-attr]
    assert (tmp_path / "drills.sqlite").is_file()

    second = finish(start_cli(["--resume", session_id],
                              "propose node-oom\ndeclare oom-killed/host-memory-underestimated\n",
                              tmp_path))
    assert second.returncode == 0, second.stderr
    assert "Ruled out by kernel.oom_memcg" in second.stdout
    assert "RIGHT: you declared oom-killed/host-memory-underestimated" in second.stdout
    assert re.search(r"Score \d+/100", second.stdout)

    # Both only read the finished drill: started together.
    history_of = start_cli(["history", "--trainee", "carol"], "", tmp_path)
    ranking = start_cli(["leaderboard"], "", tmp_path)
    history, board = finish(history_of), finish(ranking)
    assert history.returncode == 0 and session_id in history.stdout and "finished" in history.stdout
    assert board.returncode == 0 and "carol" in board.stdout

    bad = finish(mistaken)
    assert bad.returncode == 2 and bad.stderr.startswith("triagebot: error: no saved drill")


def test_resuming_a_given_up_drill_is_a_clear_error() -> None:
    store = MemorySessionStore()
    drive(["oom-trainer-limit", "--trainee", "alice"], ["quit"], store)
    [saved] = store.list_by_trainee("alice")
    # A drill given up in Slack ends without a score.
    store.save(saved.model_copy(update={"finished": True, "score": None}))
    with pytest.raises(DrillUsageError, match="was given up, so it has no debrief"):
        drive(["--resume", saved.id], [], store)


def test_the_debrief_writes_the_leaders_chart_with_chart(tmp_path: Path) -> None:
    """A terminal cannot show a picture: --chart writes the one live triage would have posted."""
    out = tmp_path / "chart.png"
    code, text = drive(["oom-trainer-limit", "--trainee", "alice", "--chart", str(out)],
                       ["evidence pod status", "declare oom-killed/limit-too-low"], MemorySessionStore())
    assert code == 0 and f"The chart of the leading hypothesis is in {out}" in text.replace("\n", "")
    assert out.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert b"container_memory_working_set_bytes via prom-memory-working-set-range.json" in out.read_bytes()
