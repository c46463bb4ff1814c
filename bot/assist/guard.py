"""Checks a generated text must pass before anyone sees it. Pure functions; a problem is returned as a sentence.

The model never sets a status: statuses come from the engine. What a model can still do wrong is talk about a
hypothesis the evidence never raised, or say a hypothesis has a status the report does not give it. Either way
the generated text is dropped and the deterministic text is shown instead.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Set

from playbooks.pipeline import default_playbooks

_BACKTICKED = re.compile(r"`([^`\n]{1,80})`")
_SENTENCE = re.compile(r"[^.;!?\n]+")
# The words a sentence may use to state a status, and the status each one states.
_STATUS_WORDS = {
    "confirmed": "confirmed", "proven": "confirmed",
    "likely": "likely", "probable": "likely",
    "ruled out": "ruled-out", "ruled-out": "ruled-out", "excluded": "ruled-out",
    "unknown": "unknown", "undecided": "unknown",
}
_STATUS_RE = re.compile(r"\b(" + "|".join(re.escape(w) for w in sorted(_STATUS_WORDS, key=len, reverse=True))
                        + r")\b", re.IGNORECASE)


@functools.cache
def catalog_ids() -> frozenset[str]:
    """Every hypothesis id of every playbook: the names a text could use for a hypothesis."""
    return frozenset(h.id for p in default_playbooks() for h, _ in p.spec.walk())


def _mentions(text: str, hypothesis_id: str) -> bool:
    """Written in backticks, or a multi-word id written out verbatim ("limit-too-low")."""
    if f"`{hypothesis_id}`" in text:
        return True
    return "-" in hypothesis_id and re.search(rf"(?<![\w-]){re.escape(hypothesis_id)}(?![\w-])", text) is not None


def named_ids(text: str, known: Set[str]) -> set[str]:
    """The known hypothesis ids a text names."""
    found = {m.strip() for m in _BACKTICKED.findall(text) if m.strip() in known}
    return found | {h for h in known if "-" in h and _mentions(text, h)}


def check_names(text: str, allowed: Set[str], known: Set[str] | None = None) -> str | None:
    """A problem when the text names a hypothesis outside `allowed`."""
    stray = sorted(named_ids(text, set(known if known is not None else catalog_ids()) - set(allowed)))
    if stray:
        return f"it names {', '.join(stray)}, which the report does not contain"
    return None


def check_statuses(text: str, statuses: Mapping[str, Set[str]]) -> str | None:
    """A problem when a sentence names a hypothesis with status words none of which is its real status.

    `statuses` maps an id to its statuses: one id can appear in two playbooks (disk-pressure, say)."""
    for sentence in _SENTENCE.findall(text):
        stated = {_STATUS_WORDS[w.lower()] for w in _STATUS_RE.findall(sentence)}
        if not stated:
            continue
        for hypothesis_id, status in statuses.items():
            if _mentions(sentence, hypothesis_id) and not stated & set(status):
                said, real = ", ".join(sorted(stated)), " or ".join(sorted(status))
                return f"it calls {hypothesis_id} {said} but the report says {real}"
    return None


def check_generated(text: str, statuses: Mapping[str, Set[str]], *, max_chars: int) -> str | None:
    """Every check a narrative must pass; None when it may be shown."""
    if not text.strip():
        return "it is empty"
    if len(text) > max_chars:
        return f"it is longer than {max_chars} characters"
    return check_names(text, set(statuses)) or check_statuses(text, statuses)
