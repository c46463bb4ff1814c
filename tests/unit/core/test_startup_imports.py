"""Each command imports only what it uses (issue #27): `--version` loads no models and no parsers, and `analyze`
loads neither the live clients, the Slack app, the database nor the CEL library's interactive REPL. The counts
are the modules in sys.modules after the command ran in a fresh interpreter; they guard against a stray top-level
import pulling a whole subsystem back in."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HEAVY = ("pydantic", "rich", "jinja2", "yaml", "cel", "prompt_toolkit", "typer", "pygments", "kubernetes",
         "slack_sdk", "sqlalchemy", "psycopg", "httpx", "starlette", "uvicorn", "prometheus_client")


def modules_after(*argv: str, tmp_path: Path) -> tuple[int, set[str]]:
    """How many modules a command leaves loaded, and which of the HEAVY packages are among them."""
    script = (
        "import contextlib, io, json, sys\n"
        "from bot.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main({list(argv)!r})\n"
        "print(json.dumps([code, sorted(sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    code, names = json.loads(done.stdout.splitlines()[-1])
    assert code == 0, done.stderr
    return len(names), {n.split(".")[0] for n in names} & set(HEAVY)


def test_version_loads_no_models_parsers_or_clients(tmp_path: Path) -> None:
    count, heavy = modules_after("--version", tmp_path=tmp_path)
    assert heavy == set()
    assert count < 130  # the interpreter's own start and argparse: about 120


def test_analyze_loads_the_readers_and_nothing_of_the_live_bot(tmp_path: Path) -> None:
    evidence = tmp_path / "one.txt"
    evidence.write_text("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
    count, heavy = modules_after("analyze", str(evidence), tmp_path=tmp_path)
    assert heavy == {"pydantic", "rich", "jinja2", "yaml", "cel"}  # yaml: this start fills the parse cache
    assert count < 480  # about 477: detection loads the sniffers (collectors/sniffers), and only the parsers of
    # the kinds found (475 with every parser; 711 when every command loaded everything)


def test_analyze_with_its_yaml_cached_loads_no_yaml_parser(tmp_path: Path) -> None:
    evidence = tmp_path / "one.txt"
    evidence.write_text("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
    modules_after("analyze", str(evidence), tmp_path=tmp_path)  # the first start parses and remembers the YAML
    count, heavy = modules_after("analyze", str(evidence), tmp_path=tmp_path)
    assert heavy == {"pydantic", "rich", "jinja2", "cel"}  # collectors/yaml_safe.py imports PyYAML to parse only
    assert count < 460  # about 456


def test_json_output_loads_no_terminal_renderer(tmp_path: Path) -> None:
    evidence = tmp_path / "one.txt"
    evidence.write_text("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
    count, heavy = modules_after("analyze", str(evidence), "--format", "json", tmp_path=tmp_path)
    assert heavy == {"pydantic", "jinja2", "yaml", "cel"}  # rich is for the terminal only
    assert count < 430  # about 406


def test_the_slack_bots_start_loads_no_kubernetes_client(tmp_path: Path) -> None:
    # What `serve` imports before it listens (benchmarks/bench_startup.py SERVE_IMPORTS): the Kubernetes client
    # comes with the first triage (bot/context.py builds LiveAccess on first use).
    script = ("import json, sys\nimport uvicorn, bot.context, bot.server, bot.slack.app\n"
              "print(json.dumps(sorted(sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=300, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    names = json.loads(done.stdout.splitlines()[-1])
    assert not {n for n in names if n.split(".")[0] == "kubernetes"}
    assert not {n for n in names if n.split(".")[0] in ("numpy", "alembic", "mako")}  # the first grade, migration
    assert len(names) < 1200  # about 1,180; 1,376 with numpy and Alembic, 2,090 with the Kubernetes client's models


def test_analyze_freezes_the_heap_at_exit_and_main_in_process_does_not(tmp_path: Path) -> None:
    # The shutdown's full collections over the start's objects were a tenth of a one-line analyze's CPU
    # (bot/cli/main.py, _no_collection_at_exit). atexit runs its handlers last registered first, so one
    # registered before main() runs after the freeze and sees it; main() itself must not freeze (a test that
    # calls it in process goes on collecting).
    evidence = tmp_path / "one.txt"
    evidence.write_text("Warning  FailedScheduling  0/3 nodes are available: 3 Insufficient nvidia.com/gpu.\n")
    script = (
        "import atexit, contextlib, gc, io, sys\n"
        "atexit.register(lambda: print('frozen at exit', gc.get_freeze_count() > 0, flush=True))\n"
        "from bot.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['analyze', {str(evidence)!r}])\n"
        "print('frozen after main', gc.get_freeze_count() > 0, flush=True)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.stdout.splitlines()[-2:] == ["frozen after main False", "frozen at exit True"]
