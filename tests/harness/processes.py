"""Waiting for and stopping the real servers the tests start (Prometheus, Alertmanager, llama.cpp's server, the bot)."""

from __future__ import annotations

import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

STOP_TIMEOUT = 10.0


def stop_process(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout` seconds."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def finish(process: subprocess.Popen[str], timeout: float = 120.0) -> subprocess.CompletedProcess[str]:
    """A started command's exit and output, as subprocess.run gives them. Tests start independent commands together
    and finish them after (each is mostly interpreter start-up, and CI has two cores). The timeout only stops a hung
    process; it is no budget."""
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


def ready(url: str) -> bool:
    """Whether a Prometheus-family server (Prometheus, Alertmanager) answers its /-/ready with 200."""
    try:
        with urllib.request.urlopen(f"{url}/-/ready", timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def wait_until(predicate: Callable[[], bool], timeout: float, what: str, interval: float = 0.05) -> None:
    """Return once `predicate` holds; fail saying `what` was awaited when it has not within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(interval)


def came_up(process: subprocess.Popen[bytes], log: Path, last_try: bool, wait_ready: Callable[..., None],
            *args: object) -> bool:
    """Whether a server just started answered `wait_ready(*args)`; False (and the process stopped) when another
    process took the port between free_port() and the bind and a try remains; otherwise its RuntimeError goes on."""
    try:
        wait_ready(*args)
    except RuntimeError:
        stop_process(process)
        if not last_try and log.exists() and "address already in use" in log.read_text(errors="replace"):
            return False
        raise
    return True
