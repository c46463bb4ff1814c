"""Every detected kind's sniffer and every line-oriented kind's line claim, loaded from the modules the readers
table names: the sniffer modules, not the parsers (unless a parser keeps its own light sniffer)."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from collectors.kinds import ArtifactKind
from collectors.parsers.readers import READERS

SNIFFERS: dict[ArtifactKind, Callable[[str], int]] = {r.kind: import_module(r.sniffer).sniff for r in READERS}
# In the readers' order: a line of a mixed paste belongs to the first kind that claims it.
LINE_CLAIMS: list[tuple[ArtifactKind, Callable[[str], bool]]] = [
    (r.kind, import_module(r.sniffer).claims_line) for r in READERS if r.claims_lines
]
