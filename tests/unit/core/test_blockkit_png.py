"""scripts/blockkit_png.py draws Block Kit JSON as the PNGs docs/slack.md shows."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from PIL import Image

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "scripts" / "blockkit_png.py"
GOLDEN = ROOT / "tests" / "golden" / "slack" / "oom-trainer-limit.json"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=120,
                          check=False, cwd=ROOT)


def test_a_golden_report_becomes_a_png_as_tall_as_its_blocks(tmp_path: Path) -> None:
    out = tmp_path / "report.png"
    done = run(str(GOLDEN), str(out))
    assert done.returncode == 0, done.stderr
    with Image.open(out) as image:
        assert image.format == "PNG" and image.width == 900
        tall = image.height
    # Fewer blocks, shorter picture: the layout follows the message.
    blocks = json.loads(GOLDEN.read_text(encoding="utf-8"))
    (tmp_path / "head.json").write_text(json.dumps({"blocks": blocks[:2]}), encoding="utf-8")
    assert run(str(tmp_path / "head.json"), str(tmp_path / "head.png")).returncode == 0
    with Image.open(tmp_path / "head.png") as head:
        assert 60 < head.height < tall / 3


def test_bad_input_is_a_one_line_error_and_exit_2(tmp_path: Path) -> None:
    missing = run(str(tmp_path / "nope.json"), str(tmp_path / "x.png"))
    assert missing.returncode == 2 and missing.stderr.startswith("blockkit_png: cannot read")
    assert len(missing.stderr.strip().splitlines()) == 1
    assert run().returncode == 2


def test_the_docs_pictures_are_committed() -> None:
    for name in ("slack-alert-root.png", "slack-alert-root-triaging.png", "slack-report.png"):
        with Image.open(ROOT / "docs" / "img" / name) as image:
            assert image.format == "PNG" and image.width == 900
        assert f"img/{name}" in (ROOT / "docs" / "slack.md").read_text(encoding="utf-8")
