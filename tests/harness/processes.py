"""Stopping the real servers the tests start (Prometheus, Alertmanager, llama.cpp's server)."""

from __future__ import annotations

import subprocess

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
