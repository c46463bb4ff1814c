#!/usr/bin/env bash
# Set up a venv with the dev tools and run lint, types and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/system-deps.sh
if [ ! -x .venv/bin/python ]; then python3 -m venv .venv; fi
# This machine's pip configuration warns about absent local mirrors; that noise is not ours.
.venv/bin/pip install -q --disable-pip-version-check -e '.[dev]' 2>&1 | { grep -v "^WARNING: Location 'file:" || true; }
echo "== ruff =="; .venv/bin/ruff check .
echo "== mypy =="; .venv/bin/mypy
echo "== playbook lint =="; .venv/bin/triagebot playbooks lint
echo "== pytest =="; .venv/bin/pytest "$@"
