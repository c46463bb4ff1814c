"""Stopping the real servers the tests start (Prometheus, Alertmanager, llama.cpp's server)."""

from __future__ import annotations

import subprocess
import urllib.error
import urllib.request

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
