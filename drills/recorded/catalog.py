"""Every drillable incident in one catalog: the bundled ones, and the ones saved from production.

Bundled incidents ship in drills/incidents/. Saved ones ("Save as drill" in Slack, `triagebot drill save`) are
folders in the drills dir, which the caller passes in: this package never reads settings. Both kinds are the
same recorded-incident format, so once listed here a saved incident is drilled, hinted, scored and ranked like a
bundled one.

Ids are unique across both kinds. A saved incident's id is its folder name, which is what lets a session (which
stores only the id) find its folder again without listing anything. Saving refuses an id that a bundled incident
has (`check_new_id`), and a saved folder that breaks the rules anyway (edited or copied by hand) is left out of
the catalog with a reason in `problems`, so one bad folder never stops the others from being drilled.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from drills.errors import DrillError
from drills.recorded.incident import INCIDENT_DIR, Incident, IncidentError, IncidentMeta, incident_dirs, load_incident
from drills.recorded.picker import RANDOM, read_meta

Origin = Literal["bundled", "saved"]
# Lower case, so `/drill start ID` (whose words are lower-cased) finds it; no "/", so it is one folder name.
ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9._-]{0,99}")
# Words `triagebot drill` and `/drill start` read as something other than an incident id.
RESERVED = frozenset({RANDOM, "list", "history", "leaderboard", "save", "help"})


class CatalogError(ValueError):
    """An id a saved incident cannot have; the message says why, in one line."""


@dataclass(frozen=True)
class Entry:
    meta: IncidentMeta
    folder: Path
    origin: Origin

    @property
    def id(self) -> str:
        return self.meta.id


@dataclass(frozen=True)
class Catalog:
    entries: tuple[Entry, ...]
    saved_dir: Path | None = None
    problems: tuple[str, ...] = field(default=())  # saved folders left out, and why

    def metas(self) -> list[IncidentMeta]:
        return [e.meta for e in self.entries]

    def get(self, incident_id: str) -> Entry | None:
        return next((e for e in self.entries if e.id == incident_id), None)

    def folder(self, incident_id: str) -> Path:
        entry = self.get(incident_id)
        if entry is None:
            raise DrillError(f"no recorded incident {incident_id!r}")
        return entry.folder

    def bundled_ids(self) -> set[str]:
        return {e.id for e in self.entries if e.origin == "bundled"}


def load_catalog(saved_dir: Path | None, bundled_dir: Path = INCIDENT_DIR) -> Catalog:
    """The bundled incidents (a broken one is an error: they ship with the bot), then the saved ones."""
    bundled = tuple(Entry(read_meta(folder), folder, "bundled") for folder in incident_dirs(bundled_dir))
    if saved_dir is None or _same_dir(saved_dir, bundled_dir):
        return Catalog(bundled, saved_dir)
    taken = {e.id for e in bundled}
    saved: list[Entry] = []
    problems: list[str] = []
    for folder in incident_dirs(saved_dir):
        try:
            meta = read_meta(folder)
        except IncidentError as err:
            problems.append(str(err))
            continue
        problem = _saved_problem(meta, folder, taken)
        if problem is not None:
            problems.append(f"{folder}: {problem}")
            continue
        taken.add(meta.id)
        saved.append(Entry(meta, folder, "saved"))
    return Catalog(bundled + tuple(saved), saved_dir, tuple(problems))


def _saved_problem(meta: IncidentMeta, folder: Path, taken: set[str]) -> str | None:
    if meta.id != folder.name:
        return f"incident.yaml says id {meta.id!r} but the folder is {folder.name!r}; a saved incident's id is " \
               "its folder name"
    if meta.id in taken:
        return f"id {meta.id!r} is already taken by another incident; rename the folder and its id"
    if not ID_PATTERN.fullmatch(meta.id) or meta.id in RESERVED:
        return f"{meta.id!r} is not a usable drill id (lower-case letters, digits, '.', '_', '-'; not a command word)"
    return None


def _same_dir(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False


def check_new_id(incident_id: str, bundled_ids: Sequence[str] | set[str]) -> None:
    """Before saving: the id (a folder name) must be usable in `triagebot drill ID` and `/drill start ID`, and
    must not shadow a bundled incident (a drill session stores only the id, so two incidents cannot share one)."""
    if incident_id in RESERVED:
        raise CatalogError(f"{incident_id!r} is a command word of `triagebot drill`; choose another folder name")
    if not ID_PATTERN.fullmatch(incident_id):
        raise CatalogError(f"{incident_id!r} cannot be a drill id (its folder name): use lower-case letters, digits, "
                           "'.', '_' and '-', starting with a letter or digit")
    if incident_id in bundled_ids:
        raise CatalogError(f"{incident_id!r} is the id of a bundled incident; choose another folder name")


def locate(incident_id: str, saved_dir: Path | None, bundled_dir: Path = INCIDENT_DIR) -> Path:
    """The folder of a catalogued incident by id, without listing the catalog: a bundled incident's folder is
    its id, and so is a saved one's (load_catalog leaves out any that is not)."""
    if not ID_PATTERN.fullmatch(incident_id):  # never a path: ids come from sessions and chat
        raise DrillError(f"no recorded incident {incident_id!r}")
    for root in (bundled_dir, saved_dir):
        if root is not None and (root / incident_id / "incident.yaml").is_file():
            return root / incident_id
    where = f" or in {saved_dir}" if saved_dir is not None else ""
    raise DrillError(f"no recorded incident {incident_id!r} among the bundled ones{where}")


def load(incident_id: str, saved_dir: Path | None, bundled_dir: Path = INCIDENT_DIR) -> Incident:
    return load_incident(locate(incident_id, saved_dir, bundled_dir))
