"""Which signal reads a line, and so every fact it gives, is the same in every process: Python's string hashing is
seeded per process, so nothing may depend on the order of a set of strings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
# Two real pastes whose `scheduling.message` and credited signal once changed with the hash seed.
CASES = ["tests/realworld/pending/hami-1069-scheduler-log-no-fit-gpu-memory",
         "tests/realworld/pending/k8s-issue-116133-untolerated-control-plane-taint"]
PROGRAM = """
import json, sys
from pathlib import Path
from collectors.paste import artifacts_from_text
from collectors.parsers.registry import parse_artifact
out = []
for folder in sys.argv[1:]:
    text = (Path(folder) / "evidence.txt").read_text(encoding="utf-8", errors="replace")
    for artifact in artifacts_from_text(text, "p"):
        out += [[f.name, repr(f.value), f.parser, f.citation.start] for f in parse_artifact(artifact).facts]
print(json.dumps(out))
"""


def _facts(*seeds: str) -> list[list[list[object]]]:
    """The facts read by a fresh interpreter per hash seed. The interpreters run at the same time: each is mostly
    start-up and imports, and CI has two cores."""
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM, *CASES], cwd=ROOT,
                              env={**os.environ, "PYTHONHASHSEED": seed}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for seed in seeds]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err[-2000:]
    return [json.loads(out) for out, _ in outputs]


def test_the_same_paste_gives_the_same_facts_under_any_hash_seed() -> None:
    first, second, third = _facts("1", "2", "3")
    assert first and any(name == "scheduling.message" for name, *_ in first)
    assert second == first
    assert third == first
