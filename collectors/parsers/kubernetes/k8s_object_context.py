"""What the object handlers share while one paste is read: the sink, the text, pooled events and totals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from collectors.k8s_values import as_dict, as_str
from collectors.parsers.kubernetes import node_spread
from collectors.parsers.kubernetes.k8s_common import (
    DedupSink,
    DistEnv,
    subject_of,
)
from collectors.parsers.kubernetes.k8s_event_facts import EventFacts
from collectors.parsers.kubernetes.k8s_object_text import ObjectText


@dataclass
class Ctx:
    sink: DedupSink
    text: ObjectText
    events: EventFacts
    dist: DistEnv = field(default_factory=DistEnv)
    netpols: list[tuple[bool, int]] = field(default_factory=list)
    netpol_list_line: int = 0
    # Per policy that restricts egress: (namespace, lets DNS out, line, subject); judged together at the end.
    egress: list[tuple[str, bool, int, str | None]] = field(default_factory=list)
    placements: list[node_spread.Placement] = field(default_factory=list)




def identity(d: dict[str, Any], kind: str) -> tuple[str, str, str | None]:
    meta = as_dict(d.get("metadata"))
    name, ns = as_str(meta.get("name")), as_str(meta.get("namespace"))
    return name, ns, (subject_of(kind, name, ns) if name else None)
