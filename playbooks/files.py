"""Where the bundled playbooks are and which files count as one. Apart from the loader, so `--help` can list the
playbook ids without importing what loading them needs."""

from __future__ import annotations

from pathlib import Path

PLAYBOOK_DIR = Path(__file__).parent


def playbook_files(directory: Path = PLAYBOOK_DIR) -> list[Path]:
    """Every playbook file in a folder; a name starting with `_` is not a playbook."""
    return sorted(p for p in directory.glob("*.yaml") if not p.name.startswith("_"))
