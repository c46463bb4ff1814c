"""The README's commands on a fresh machine: long steps say what they do, llama.cpp builds only what the tests
need and once, installed system services are not left running, the extras are required where installed."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPTS = ROOT / "scripts"


def _run_step(command: str) -> subprocess.CompletedProcess[str]:
    script = f'source "{SCRIPTS / "progress.sh"}"; step "Doing a slow thing" "about 3 s" {command}'
    env = {**os.environ, "PROGRESS_INTERVAL": "1"}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, env=env, timeout=120, check=False)


def test_a_long_step_says_what_it_does_and_keeps_saying_it() -> None:
    run = _run_step("sleep 3")
    lines = run.stdout.splitlines()
    assert run.returncode == 0
    assert lines[0] == "== Doing a slow thing (about 3 s) =="
    assert any(line.strip().startswith("... still doing a slow thing") for line in lines[1:]), run.stdout


def test_a_failing_step_fails_the_script() -> None:
    assert _run_step("false").returncode == 1


def test_every_long_step_of_the_scripts_announces_itself() -> None:
    test_sh = (SCRIPTS / "test.sh").read_text()
    demo_sh = (SCRIPTS / "demo.sh").read_text()
    for text in (test_sh, demo_sh):
        assert "source scripts/progress.sh" in text
        assert 'step "Installing triagebot' in text
    # The installs, the compile and mypy each run inside `step` (what, and roughly how long).
    assert test_sh.count("\nstep ") + test_sh.count("  step ") >= 4
    assert 'step "Compiling llama.cpp' in test_sh
    assert "pytest (about" in test_sh


def test_llama_cpp_builds_only_what_the_tests_need_and_is_cached_once_per_machine() -> None:
    test_sh = (SCRIPTS / "test.sh").read_text()
    flags = re.search(r'CMAKE_ARGS="\$\{CMAKE_ARGS:-(.*?)\}"', test_sh, re.S)
    assert flags is not None
    off = set(re.findall(r"-D(\w+)=OFF", flags.group(1)))
    assert {"LLAVA_BUILD", "LLAMA_BUILD_TESTS", "LLAMA_BUILD_EXAMPLES", "LLAMA_BUILD_TOOLS", "LLAMA_BUILD_SERVER",
            "GGML_CUDA", "GGML_VULKAN", "GGML_METAL", "GGML_BLAS"} <= off
    # Kept in the user's cache under a key of the flags, so a fresh clone reuses it and other flags never do.
    assert '/triagebot/wheels/$BUILD_KEY' in test_sh and '"$CMAKE_ARGS"' in test_sh
    assert '--find-links "$WHEELHOUSE"' in test_sh
    assert 'python -c "import llama_cpp"' in test_sh  # an installed build skips the compile entirely
    assert "export TRIAGEBOT_TEST_EXTRAS=required" in test_sh


def test_system_services_are_kept_from_starting_and_left_disabled() -> None:
    deps = (SCRIPTS / "system-deps.sh").read_text()
    assert "policy-rc.d" in deps and "exit 101" in deps
    assert "systemctl disable --now" in deps
    for service in ("prometheus", "prometheus-alertmanager", "postgresql"):
        assert re.search(rf"SERVICES=\(.*\b{service}\b", deps), service
    # The policy file is removed again only when this script made it.
    assert "trap cleanup EXIT" in deps


def test_the_scripts_parse() -> None:
    for script in ("test.sh", "demo.sh", "system-deps.sh", "progress.sh"):
        assert subprocess.run(["bash", "-n", str(SCRIPTS / script)], check=False).returncode == 0, script
