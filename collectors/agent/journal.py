"""`journalctl -k` as a fallback kernel log source, for nodes where /dev/kmsg cannot be read.

Off by default. The command is a fixed argument list (no shell); the only variable part is the start
time, rendered by us as `@<epoch seconds>` from an already validated datetime. Output is read up to the
byte budget, then the process is stopped: a week of kernel log is never buffered whole.
"""

from __future__ import annotations

import subprocess
import threading
from datetime import datetime

from collectors.agent.config import AgentSettings
from collectors.agent.errors import AgentError


def journal_argv(settings: AgentSettings, start: datetime) -> list[str]:
    return [str(settings.journalctl_path), "-k", "--no-pager", "--quiet", "--utc", "-o", "short-iso-precise",
            "--since", f"@{int(start.timestamp())}"]


def journal_kernel_log(settings: AgentSettings, start: datetime, limit: int) -> str:
    """Up to `limit` + 1 bytes of journalctl output (one extra so the caller knows to mark a cut)."""
    argv = journal_argv(settings, start)
    try:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8", "SYSTEMD_COLORS": "0"})
    except OSError as err:
        raise AgentError(503, f"cannot run {argv[0]}: {err.strerror or err}",
                         "journalctl installed at TRIAGEBOT_AGENT_JOURNALCTL_PATH") from None
    timer = threading.Timer(settings.journalctl_timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None and proc.stderr is not None
        data = proc.stdout.read(limit + 1)
        if proc.poll() is None and len(data) > limit:
            proc.kill()  # we have all we can send
        errors = proc.stderr.read(2000)
        code = proc.wait()
    finally:
        timer.cancel()
    if code != 0 and not data:
        message = errors.decode("utf-8", errors="replace").strip().splitlines()[:1]
        raise AgentError(503, f"journalctl -k failed with exit status {code}: {' '.join(message)}".rstrip(": "))
    return data.decode("utf-8", errors="ignore")
