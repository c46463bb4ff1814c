"""Conntrack counters as one text: the two sysctls, then /proc/net/stat/nf_conntrack.

The text is what a person gets from `sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max;
cat /proc/net/stat/nf_conntrack`, which the conntrack parser reads (usage ratio from the sysctl lines,
drops from the per-CPU table). These files are per network namespace: the DaemonSet must use
hostNetwork, or it reports its own empty namespace.
"""

from __future__ import annotations

from pathlib import Path

from collectors.agent.bounded import read_head
from collectors.agent.errors import AgentError

_SMALL = 64 * 1024  # a sysctl value is a few bytes
_TABLE = 4 * 1024 * 1024  # one ~150-byte row per CPU


def _sysctl_line(proc_root: Path, name: str) -> str | None:
    path = proc_root / "sys" / "net" / "netfilter" / name
    try:
        value = read_head(path, _SMALL).strip()
    except OSError:
        return None
    return f"net.netfilter.{name} = {value}" if value.isdigit() else None


def conntrack_text(proc_root: Path) -> str:
    """The counters, or a 404 when nf_conntrack is not loaded (then it cannot drop packets either)."""
    lines = [line for name in ("nf_conntrack_count", "nf_conntrack_max")
             if (line := _sysctl_line(proc_root, name)) is not None]
    table = proc_root / "net" / "stat" / "nf_conntrack"
    try:
        text = read_head(table, _TABLE)
    except OSError:
        text = ""
    if text.strip():
        lines.extend(text.rstrip("\n").split("\n"))
    if not lines:
        raise AgentError(404, "nf_conntrack is not loaded in this network namespace: no "
                         f"{proc_root}/sys/net/netfilter/nf_conntrack_count and no {table}",
                         "a node with the nf_conntrack module loaded; the agent on hostNetwork")
    return "\n".join(lines) + "\n"
