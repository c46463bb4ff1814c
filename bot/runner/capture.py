"""Capture before the kill: the evidence of a stalled training job, written at once as a recorded incident.

A hung collective leaves its evidence in processes the NCCL watchdog kills 10 to 30 minutes later: every rank's
log, the pods, the nodes' kernel logs and the GPU series go with them. When an alert named in
`capture_alerts` (NCCLJobStalled by default, deploy/prometheus/rules.yml) fires, the triage it starts reads all
of that (every rank's log tail, the pods and nodes, the node agents' kernel logs, the DCGM series) and this
module writes those artifacts, exactly as read, into a new folder of the drills dir, in the recorded-incident
format: `triagebot replay <folder>` gives the report on-call saw, and adding a ground truth makes it a drill.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from datetime import datetime
from fnmatch import fnmatchcase
from pathlib import Path

from collectors.models import Artifact, Missing, Target
from drills.recorded.record import write_incident

_UNSAFE = re.compile(r"[^a-z0-9.-]+")


def wants_capture(alertname: str, patterns: Collection[str]) -> bool:
    """Whether an alert of this name is one whose evidence is captured (names or shell-style patterns)."""
    return bool(alertname) and any(fnmatchcase(alertname, p) for p in patterns)


def capture_folder(root: Path, target: Target, when: datetime) -> Path:
    """A new folder whose name is a usable drill id: capture-<namespace>-<target>-<UTC time>."""
    name = (target.service or target.pod or target.node or "target").rsplit("/", 1)[-1]
    stem = _UNSAFE.sub("-", f"capture-{target.namespace or 'default'}-{name}".lower()).strip("-")[:80]
    folder = root / f"{stem}-{when:%Y%m%dt%H%M%S}"
    n = 1
    while folder.exists():  # two captures in one second (a repeat of the alert): keep both
        n += 1
        folder = root / f"{stem}-{when:%Y%m%dt%H%M%S}-{n}"
    return folder


def store_capture(root: Path, target: Target, captured_at: datetime, artifacts: list[Artifact],
                  missing: list[Missing], *, page: str, symptoms: list[str]) -> Path:
    """Write the captured artifacts (already redacted by the live sources) as a recorded incident."""
    root.mkdir(parents=True, exist_ok=True)
    folder = capture_folder(root, target, captured_at)
    return write_incident(folder, artifacts, target, captured_at, page=page,
                          title=f"Captured before the kill: {page}", missing=missing,
                          tags=["captured", *symptoms], symptoms=symptoms)
