"""Where local state lives: the SQLite database, saved drills and caches."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """$TRIAGEBOT_STATE_DIR, else the XDG state directory (~/.local/state/triagebot): where local state lives."""
    state = os.environ.get("TRIAGEBOT_STATE_DIR")
    if state:
        return Path(state).expanduser()
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "triagebot"


def default_db_path() -> Path:
    """drills.sqlite in the state directory."""
    return state_dir() / "drills.sqlite"
