"""The network catalogs: CNI plugins' and network clients' messages (network.yaml), and what proxies, the API
server's service proxy and serving stacks print when they answer a request with an error or a wait (proxies.yaml),
and what MPI launchers print when a job's daemons or ranks cannot be reached or are lost (launchers.yaml), the
fatal records a process exits after when a dependency is unreachable at start-up (startup_exits.yaml), what
training frameworks and their launchers print when a job runs without its GPU, runs out of GPU memory or loses a
rank to SIGKILL (frameworks.yaml), and what inference servers and the NVIDIA device plugin print when a model
does not fit or load or no GPU is found (gpu_stack.yaml), each with its upstream source.

Their entries are line signals like those of signals.yaml (collectors/catalogs/signals.py reads them all), plus
where the wording comes from and a template a test renders. `sandbox_kinds` lets the event readers classify a
FailedCreatePodSandBox message by the same entries, so a CNI wording is read one way everywhere.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import re2
from pydantic import Field

from collectors.catalogs.upstream import UpstreamWording
from collectors.catalogs.validated import validated

CATALOGS = tuple(Path(__file__).parent / name
                  for name in ("network.yaml", "proxies.yaml", "launchers.yaml", "startup_exits.yaml",
                               "frameworks.yaml", "gpu_stack.yaml"))
# Keys an entry shares with signals.yaml; the rest say where the wording comes from.
SIGNAL_KEYS = ("id", "hints", "pattern", "unless", "facts", "symptom")


class NetworkEntry(UpstreamWording):
    """One message shape, where it comes from, and a rendering of it."""

    hints: tuple[str, ...] = Field(min_length=1)
    pattern: str
    unless: tuple[str, ...] = ()
    facts: dict[str, Any] = Field(min_length=1)
    # The symptom the message shows by itself (signals.yaml's `symptom:`): a proxy's own error answer is a failed
    # request, the API server's "no endpoints available" a service nobody can reach.
    symptom: str | None = None
    expect: dict[str, Any] = Field(min_length=1)

    def signal(self) -> dict[str, Any]:
        """The entry as a signals.yaml entry, its source naming project, file and versions."""
        out = {key: getattr(self, key) for key in SIGNAL_KEYS}
        out["source"] = f"{self.project}: {self.file} ({self.versions})"
        return out

    def rendered(self) -> str:
        """The message as the program prints it, with the sample values."""
        return self.template.format(**self.sample)


@cache
def entries() -> tuple[NetworkEntry, ...]:
    return validated(CATALOGS, _validate)


def _validate(*catalogs: Any) -> tuple[NetworkEntry, ...]:
    out: list[NetworkEntry] = []
    for path, raw in zip(CATALOGS, catalogs, strict=True):
        if not isinstance(raw, list):
            raise ValueError(f"{path}: expected a list of entries")
        out += [NetworkEntry.model_validate(entry) for entry in raw]
    return tuple(out)


@cache
def _sandbox_rules() -> tuple[tuple[str, Any, tuple[str, ...]], ...]:
    """(sandbox kind, compiled pattern, hints) for every entry that names a sandbox failure."""
    rules = []
    for e in entries():
        for kind in e.facts.get("sandbox.errors", ()):
            rules.append((str(kind), re2.compile(e.pattern), e.hints))
    return tuple(rules)


def sandbox_kinds(message: str) -> list[str]:
    """The sandbox failure kinds (ip-exhausted, cni-not-ready, cni-error) the catalog reads in one message."""
    found: list[str] = []
    for kind, rx, hints in _sandbox_rules():
        if kind not in found and any(h in message for h in hints) and rx.search(message):
            found.append(kind)
    return found
