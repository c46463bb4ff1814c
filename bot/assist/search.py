"""Finding the passages that answer a question: BM25 by default, embeddings as an option.

Both retrievers are langchain retrievers (`invoke(query)` gives Documents whose metadata carries the passage
id, cite and score), so a chain can use them like any other. BM25 runs on the project's own normaliser (the one
the interview grader uses: case folding and a light stemmer), with a short English stopword list; numbers stay
tokens, so "Xid 79" and "exit code 137" match on the code. The embeddings retriever (the `[semantic]` extra)
embeds every passage with a small local model (multilingual-e5-small, 4-bit) into langchain's in-memory store.

An index is built once per process and settings (`get_index`): BM25 over the whole corpus takes well under a
second; embedding every passage takes tens of seconds on a small machine, which is why BM25 is the default.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from pydantic import PrivateAttr

from bot.assist.corpus import Corpus, Hit, Passage, build_corpus
from bot.assist.embeddings import EMBEDDINGS_CACHE, CachedEmbeddings, E5Embeddings
from bot.config import ConfigError
from bot.state import state_dir
from drills.embedder import model_id
from drills.grading import stem, words

if TYPE_CHECKING:
    from bot.config import Settings

RetrieverName = Literal["bm25", "embeddings"]

# Function words and question words: they say nothing about which passage answers. Kept short on purpose, so
# words that carry meaning in this domain ("not", "no", "down", "up", "out") are never dropped.
_STOPWORD_TEXT = """
a about after again all also am an and any are as at be been before being both but by can could did do does
doing during each either for from had has have having he her here hers him his how i if in into is it its
itself just me mean means might more most my myself of on once only or other our ours over own please same
she should so some such than that the their them then there these they this those through to too under until
very was we were what when where which while who whom why will with would you your yours
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


# Words that join others in CamelCase (OOMKilled, ImagePullBackOff, FailedScheduling) also count as their parts,
# so "OOMKilled" meets "OOM-killed" and "killed by the OOM killer".
_CAMEL = re.compile(r"\b[A-Za-z]*[a-z][A-Z][A-Za-z]*\b|\b[A-Z]{2,}[a-z][A-Za-z]*\b")
_CAMEL_PART = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+")
MAX_TEXT_CHARS = 20_000
# Characters of each passage the embeddings retriever embeds (about 100 tokens).
EMBED_CHARS = 400


def tokenize(text: str) -> list[str]:
    """Stemmed, case-folded words of `text` without stopwords or single letters; numbers are kept (Xid 79,
    exit code 137). Never raises."""
    text = text[:MAX_TEXT_CHARS]
    parts = []
    for match in _CAMEL.finditer(text):
        # Only real joins of words: "GPUs", "PCIe" and "MiB" are one word each.
        pieces = [p for p in _CAMEL_PART.findall(match.group()) if len(p) >= 3]
        if len(pieces) >= 2:
            parts.append(" ".join(pieces))
    found = words(text) + words(" ".join(parts))
    stems = (stem(w) for w in found if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))
    return [s for s in stems if s not in STOPWORDS]  # a word can stem to a stopword: "others" -> "other"


def _document(passage: Passage, score: float) -> Document:
    return Document(page_content=passage.text, id=passage.id,
                    metadata={"id": passage.id, "kind": passage.kind, "title": passage.title,
                              "cite": passage.cite, "score": score})


def _searchable(passage: Passage) -> str:
    # The title is short and says what the passage is about: it counts twice.
    return f"{passage.title}\n{passage.title}\n{passage.text}"


def _gist(passage: Passage) -> str:
    # The title and the start of a passage say what it is about (a hypothesis's claim, an Xid's meaning, a
    # question). Embedding only that builds the index about four times faster (the model's cost grows with every
    # token) and measured about as well on the quality questions as whole passages: MRR 0.79 against 0.78,
    # recall@4 0.86 against 0.91.
    return f"{passage.title}\n{passage.text}"[:EMBED_CHARS]


class PassageRetriever(BaseRetriever):
    """What both retrievers share: `scored` ranks passages; langchain's `invoke` wraps it into Documents."""

    passages: list[Passage]
    k: int = 4

    def scored(self, query: str, k: int) -> list[Hit]:
        raise NotImplementedError

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[Document]:
        return [_document(h.passage, h.score) for h in self.scored(query, self.k)]


class BM25Retriever(PassageRetriever):
    """Okapi BM25 (the `bm25s` package) over the project's tokeniser. Only passages sharing a word score above 0,
    and only those are returned: no hits means no passage shares a meaningful word with the query."""

    _engine: Any = PrivateAttr(default=None)

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], k: int = 4) -> BM25Retriever:
        import bm25s  # type: ignore[import-untyped]

        retriever = cls(passages=list(passages), k=k)
        if passages:
            engine = bm25s.BM25()
            engine.index([tokenize(_searchable(p)) for p in passages], show_progress=False)
            retriever._engine = engine
        return retriever

    def scores(self, query: str) -> list[float]:
        """The score of every passage, in corpus order (all 0 when no word of the query is in the corpus)."""
        tokens = list(dict.fromkeys(tokenize(query)))  # a repeated word should not count twice
        if self._engine is None or not tokens:
            return [0.0] * len(self.passages)
        return [float(s) for s in self._engine.get_scores(tokens)]

    def scored(self, query: str, k: int) -> list[Hit]:
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [Hit(passage=self.passages[i], score=round(scores[i], 4)) for i in order[:max(k, 0)]
                if scores[i] > 0]


class EmbeddingsRetriever(PassageRetriever):
    """Cosine similarity in langchain's InMemoryVectorStore. Every query gets k passages: similarity has no
    natural zero, so "no match" is never said; read the scores."""

    _store: Any = PrivateAttr(default=None)
    _by_id: dict[str, Passage] = PrivateAttr(default_factory=dict)

    @classmethod
    def from_passages(cls, passages: Sequence[Passage], k: int = 4,
                      embeddings: Embeddings | None = None) -> EmbeddingsRetriever:
        from langchain_core.vectorstores import InMemoryVectorStore

        store = InMemoryVectorStore(embedding=embeddings or E5Embeddings())
        if passages:
            store.add_documents([Document(page_content=_gist(p), metadata={"id": p.id}) for p in passages],
                                ids=[p.id for p in passages])
        retriever = cls(passages=list(passages), k=k)
        retriever._store = store
        retriever._by_id = {p.id: p for p in passages}
        return retriever

    def scored(self, query: str, k: int) -> list[Hit]:
        if not self.passages or k <= 0:
            return []
        found = self._store.similarity_search_with_score(query, k=k)
        return [Hit(passage=self._by_id[doc.metadata["id"]], score=round(float(score), 4)) for doc, score in found]


@dataclass(frozen=True)
class IndexStats:
    retriever: RetrieverName
    counts: dict[str, int]
    docs_dir: str | None
    notes: tuple[str, ...]
    corpus_seconds: float
    index_seconds: float

    def describe(self) -> str:
        counts = ", ".join(f"{n} {kind}" for kind, n in self.counts.items())
        docs = f"docs from {self.docs_dir}" if self.docs_dir else "no docs"
        extra = "".join(f"; {note}" for note in self.notes)
        return (f"{self.retriever} over {sum(self.counts.values())} passages ({counts}); {docs}; built in "
                f"{self.corpus_seconds + self.index_seconds:.2f}s{extra}")


@dataclass
class Index:
    """A corpus and its retriever, ready to search."""

    corpus: Corpus
    retriever: PassageRetriever
    stats: IndexStats
    _by_id: dict[str, Passage] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._by_id = {p.id: p for p in self.corpus.passages}

    def search(self, query: str, k: int = 4) -> list[Hit]:
        """The best `k` passages for `query`, best first (fewer, or none, when few passages match)."""
        return self.retriever.scored(query, k)

    def get(self, passage_id: str) -> Passage | None:
        return self._by_id.get(passage_id)

    def __len__(self) -> int:
        return len(self.corpus.passages)


def build_index(retriever: RetrieverName = "bm25", docs_dir: Path | None = None, *,
                corpus: Corpus | None = None, embeddings: Embeddings | None = None,
                cache_dir: Path | None = None) -> Index:
    """Build an index now (see `get_index` for the per-process cached one). With `cache_dir`, passage vectors of
    the embeddings retriever are kept there between processes."""
    if retriever not in ("bm25", "embeddings"):
        raise ConfigError(f"setting ask_retriever (TRIAGEBOT_ASK_RETRIEVER): {retriever!r} is not bm25 or "
                          "embeddings")
    if retriever == "embeddings" and embeddings is None:
        embeddings = E5Embeddings()  # before reading the corpus, so a missing extra fails fast
        if cache_dir is not None:
            embeddings = CachedEmbeddings(embeddings, cache_dir / EMBEDDINGS_CACHE, model_id())
    started = time.perf_counter()
    corpus = corpus or build_corpus(docs_dir)
    corpus_seconds = time.perf_counter() - started
    started = time.perf_counter()
    engine: PassageRetriever
    if retriever == "bm25":
        engine = BM25Retriever.from_passages(corpus.passages)
    else:
        engine = EmbeddingsRetriever.from_passages(corpus.passages, embeddings=embeddings)
    stats = IndexStats(retriever=retriever, counts=corpus.counts(), docs_dir=corpus.docs_dir, notes=corpus.notes,
                       corpus_seconds=corpus_seconds, index_seconds=time.perf_counter() - started)
    return Index(corpus=corpus, retriever=engine, stats=stats)


_CACHE: dict[tuple[str, str | None], Index] = {}
_CACHE_LOCK = threading.Lock()


def get_index(retriever: RetrieverName = "bm25", docs_dir: Path | None = None) -> Index:
    """The process's index for these settings, built on first use; concurrent callers wait for one build.
    Embedding vectors are also kept in the state dir ($TRIAGEBOT_STATE_DIR), so the next process reuses them."""
    key = (retriever, str(docs_dir.resolve()) if docs_dir else None)
    with _CACHE_LOCK:
        index = _CACHE.get(key)
        if index is None:
            index = build_index(retriever, docs_dir, cache_dir=state_dir())
            _CACHE[key] = index
        return index


def index_for(settings: Settings) -> Index:
    """The cached index that `settings` (ask_retriever, docs_dir) ask for; ConfigError when it cannot be built."""
    return get_index(settings.ask_retriever, settings.docs_dir)


def clear_index_cache() -> None:
    with _CACHE_LOCK:
        _CACHE.clear()


def search(query: str, k: int = 4, *, retriever: RetrieverName = "bm25", docs_dir: Path | None = None
           ) -> list[Hit]:
    """The best `k` passages for `query` from the cached index, best first."""
    return get_index(retriever, docs_dir).search(query, k)
