"""Where saved drills live, from the settings, and the incident catalog that includes them.

drills/ never reads settings; the terminal, Slack and `drill save` all ask here, so they agree on the folder.
"""

from __future__ import annotations

from pathlib import Path

from bot.config import Settings
from bot.state import state_dir
from drills.recorded.catalog import Catalog, load_catalog


def drills_dir(settings: Settings) -> Path:
    """`drills_dir` (TRIAGEBOT_DRILLS_DIR), else <state dir>/drills, next to the default database."""
    return (settings.drills_dir or state_dir() / "drills").expanduser()


def incident_catalog(settings: Settings) -> Catalog:
    return load_catalog(drills_dir(settings))


def is_saved_location(folder: Path, settings: Settings) -> bool:
    """Whether a folder written by `drill save -o` is one the catalog lists (directly inside the drills dir)."""
    try:
        return folder.resolve().parent == drills_dir(settings).resolve()
    except OSError:
        return False
