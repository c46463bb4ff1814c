"""Choosing a recorded incident to drill: by id, or at random within a difficulty and a tag.

Only incident.yaml is read to choose, so listing stays cheap however large the captures are.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path

import yaml
from pydantic import ValidationError

from collectors.yaml_safe import safe_load
from drills.errors import DrillError
from drills.levels import DIFFICULTIES as DIFFICULTIES
from drills.recorded.incident import INCIDENT_DIR, IncidentError, IncidentMeta, incident_dirs

RANDOM = "random"


def list_incidents(root: Path = INCIDENT_DIR) -> list[IncidentMeta]:
    return [read_meta(folder) for folder in incident_dirs(root)]


def read_meta(folder: Path) -> IncidentMeta:
    """A recorded incident's incident.yaml alone; raises IncidentError saying what is wrong with it."""
    path = folder / "incident.yaml"
    try:
        return IncidentMeta.model_validate(safe_load(path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise IncidentError(f"{path}: cannot read ({str(err).splitlines()[0]})") from None
    except ValidationError as err:
        first = err.errors()[0]
        raise IncidentError(f"{path}: {'.'.join(map(str, first['loc']))}: {first['msg']}") from None


def pick(metas: Sequence[IncidentMeta], choice: str | None = None, difficulty: str | None = None,
         tag: str | None = None, *, rng: random.Random | None = None, avoid: Sequence[str] = ()) -> IncidentMeta:
    """`choice` is an incident id or `random` (the default). A random pick prefers incidents not in `avoid`
    (say, the ones this trainee has already finished) and falls back to all that match."""
    if difficulty is not None and difficulty not in DIFFICULTIES:
        raise DrillError(f"unknown difficulty {difficulty!r}; expected one of {', '.join(DIFFICULTIES)}")
    if choice and choice != RANDOM:
        found = next((m for m in metas if m.id == choice), None)
        if found is None:
            raise DrillError(f"no recorded incident {choice!r}; known: {', '.join(m.id for m in metas)}")
        if found.ground_truth is None:
            raise DrillError(f"{choice} has no ground_truth yet, so it cannot be drilled")
        if difficulty and found.difficulty != difficulty:
            raise DrillError(f"{choice} is {found.difficulty}, not {difficulty}")
        if tag and tag not in found.tags:
            raise DrillError(f"{choice} is not tagged {tag!r}")
        return found
    # A fresh recording without a ground truth is not a drill yet.
    matching = [m for m in metas if m.ground_truth is not None
                and (difficulty is None or m.difficulty == difficulty)
                and (tag is None or tag in m.tags)]
    if not matching:
        wanted = " ".join(x for x in (difficulty, f"tag {tag!r}" if tag else None) if x)
        raise DrillError(f"no recorded incident matches {wanted}; known tags: {', '.join(all_tags(metas))}")
    fresh = [m for m in matching if m.id not in set(avoid)] or matching
    return (rng or random.Random()).choice(fresh)


def all_tags(metas: Sequence[IncidentMeta]) -> list[str]:
    return sorted({t for m in metas for t in m.tags})


def parse_start(words: Sequence[str], metas: Sequence[IncidentMeta]) -> tuple[str, str | None, str | None]:
    """`/drill start [incident-id|random] [difficulty] [tag]` in any order: (choice, difficulty, tag)."""
    choice, difficulty, tag = RANDOM, None, None
    ids = {m.id.lower(): m.id for m in metas}
    for word in words:
        w = word.strip().lower()
        if not w:
            continue
        if w == RANDOM or w in ids:
            choice = ids.get(w, w)
        elif w in DIFFICULTIES:
            difficulty = w
        elif tag is None:
            tag = w
        else:
            raise DrillError(f"unexpected {word!r}: expected [incident-id|random] [difficulty] [tag]")
    return choice, difficulty, tag
