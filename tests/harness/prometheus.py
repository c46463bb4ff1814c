"""A real Prometheus (Debian's package) for tests: backfilled with promtool, on 127.0.0.1, in a temp dir.

Prometheus has nothing to scrape here; all data comes from the OpenMetrics backfill, written before the
server starts so it loads the blocks at once.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.harness.openmetrics import History
from tests.harness.processes import came_up, ready, stop_process

READY_TIMEOUT = 30.0
_START_ATTEMPTS = 3
_CONFIG = "global:\n  scrape_interval: 1m\n  evaluation_interval: 1m\n"
_INSTALL_HINT = "install Debian's prometheus package: apt-get install -y --no-install-recommends prometheus"


def require_binary(name: str) -> str:
    """The binary's path; if absent, fail in CI (CI set) and skip with a clear message elsewhere."""
    path = shutil.which(name) or (f"/usr/bin/{name}" if os.access(f"/usr/bin/{name}", os.X_OK) else None)
    if path:
        return path
    message = f"`{name}` is not installed ({_INSTALL_HINT})"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must provide it", pytrace=False)
    pytest.skip(f"{message}; skipped because CI is unset")


@dataclass(frozen=True)
class PromServer:
    url: str
    data_dir: Path
    log: Path


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def backfill(promtool: str, openmetrics: str, root: Path) -> Path:
    """Write the text and turn it into TSDB blocks; promtool's own output explains a bad input."""
    source = root / "backfill.om"
    source.write_text(openmetrics, encoding="utf-8")
    data = root / "data"
    data.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", "--quiet", str(source), str(data)],
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"promtool backfill failed ({done.returncode}): {done.stderr or done.stdout}")
    return data


def _wait_ready(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"prometheus exited with {process.returncode}:\n{log.read_text(errors='replace')}")
        if ready(url):
            return
        time.sleep(0.05)
    raise RuntimeError(f"prometheus not ready after {READY_TIMEOUT:g}s:\n{log.read_text(errors='replace')}")


def _launch(binary: str, config: Path, data: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as sink:
        return subprocess.Popen(
            [binary, f"--config.file={config}", f"--storage.tsdb.path={data}",
             f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=30d"],
            stdout=sink, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


@contextmanager
def start_prometheus(tmp_path: Path, openmetrics: str) -> Iterator[PromServer]:
    """Backfill `openmetrics`, start Prometheus on a free loopback port, yield it, then stop and clean up."""
    binary = require_binary("prometheus")
    promtool = require_binary("promtool")
    root = tmp_path / "prometheus"
    root.mkdir(parents=True, exist_ok=False)
    try:
        data = backfill(promtool, openmetrics, root)
        config = root / "prometheus.yml"
        config.write_text(_CONFIG, encoding="utf-8")
        log = root / "prometheus.log"
        for attempt in range(_START_ATTEMPTS):
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            process = _launch(binary, config, data, port, log)
            if not came_up(process, log, attempt + 1 == _START_ATTEMPTS, _wait_ready, url, process, log):
                continue
            try:
                yield PromServer(url=url, data_dir=data, log=log)
            finally:
                stop_process(process)
            return
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def prom(tmp_path_factory: pytest.TempPathFactory, history: History) -> Iterator[PromServer]:
    """Prometheus holding the module's `history` fixture, for the whole module (registered in tests/conftest.py)."""
    with start_prometheus(tmp_path_factory.mktemp("prom"), history.render()) as server:
        yield server
