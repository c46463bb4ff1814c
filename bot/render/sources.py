"""Source references a reader can open: a URL, or the page of docs/sources.md that says what a short name is.

Playbooks, the question bank and the Xid catalog cite by short names ("seed 004:1371-1451", "seed-digest §1.5",
"NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors), Xid 48"). The seed documents are not in the repository;
docs/sources.md describes each, so a short name is followed there. A bare web address becomes an https URL.
"""

from __future__ import annotations

import re

from collectors.lazy_regex import LazyPattern

DOC = "docs/sources.md"
# Where in docs/sources.md each kind of short name is explained (GitHub's heading anchors).
_ANCHORS = (("seed-digest", "#the-seed-digest"), ("seed digest", "#the-seed-digest"), ("seed ", "#the-seed-documents"))
_URL = LazyPattern(r"https?://[^\s)]+")
_BARE = LazyPattern(r"\b(?:[a-z0-9-]+\.)+(?:com|org|io|dev|net)(?:/[^\s),]*)?", re.IGNORECASE)


def link(ref: str) -> str:
    """Where `ref` can be opened: its URL, a web address it names made a URL, or docs/sources.md#section."""
    if found := _URL.search(ref):
        return found.group(0).rstrip(".,;")
    lowered = ref.lower()
    for prefix, anchor in _ANCHORS:
        if lowered.startswith(prefix):
            return DOC + anchor
    if found := _BARE.search(ref):
        return "https://" + found.group(0).rstrip(".,;")
    return DOC + "#public-references"


def with_link(ref: str) -> str:
    """The reference as cited, then where to open it (once: a reference that is a URL is not repeated)."""
    target = link(ref)
    return ref if target in ref else f"{ref} <{target}>"


def markdown_link(ref: str) -> str:
    """The reference as a markdown link (a path is relative to the repository, as on GitHub)."""
    label = ref.replace("[", "(").replace("]", ")")
    return f"[{label}]({link(ref)})"
