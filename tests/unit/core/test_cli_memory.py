"""Out of memory, the CLI answers in one line with exit code 2, never a traceback (issue #24, point 5)."""

from __future__ import annotations

import resource
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli import analyze as analyze_cmd
from bot.cli import main as cli
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers import registry

ROOT = Path(__file__).resolve().parents[3]
# Far less than reading the input below takes (its bytes, its text, its lines), far more than starting Python with
# the CLI's imports (about 80 MB of address space).
CAP = 200 * 1024 * 1024


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))


def test_a_capped_process_says_it_ran_out_of_memory_in_one_line(tmp_path: Path) -> None:
    big = tmp_path / "big.log"
    line = b"[1000.068952] IPv6: ADDRCONF(NETDEV_CHANGE): cali28140: link becomes ready\n"
    big.write_bytes(line * (60_000_000 // len(line)))  # 60 MB: under the 64 MiB input cap
    done = subprocess.run([sys.executable, "-m", "bot.cli", "analyze", str(big), "--format", "json"], cwd=ROOT,
                          preexec_fn=_capped, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and done.stdout == ""
    [message] = done.stderr.splitlines()
    assert message.startswith("triagebot: error: out of memory") and "split" in message


def test_running_out_of_memory_anywhere_in_analyze_is_the_same_line(monkeypatch: pytest.MonkeyPatch,
                                                                     capfd: pytest.CaptureFixture[str],
                                                                     tmp_path: Path) -> None:
    def exhausted(*_: object, **__: object) -> list[Artifact]:
        raise MemoryError

    monkeypatch.setattr(analyze_cmd, "artifacts_from_text", exhausted)
    evidence = tmp_path / "dmesg.txt"
    evidence.write_text("[1.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n")
    assert cli.main(["analyze", str(evidence)]) == 2
    err = capfd.readouterr().err
    assert err == cli._OUT_OF_MEMORY.decode()


def test_a_parser_that_swallowed_running_out_of_memory_does_not_give_a_report_with_holes(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def guarded(_: Artifact) -> ParseResult:  # what a reader's own recovery (the YAML loader's) makes of it
        return ParseResult(problems=["YAML unreadable at character 0: MemoryError"])

    monkeypatch.setitem(registry.PARSERS, ArtifactKind.KERNEL_LOG, guarded)
    with pytest.raises(MemoryError):
        registry.parse_artifact(Artifact(id="a", kind=ArtifactKind.KERNEL_LOG, content="x"))
