"""An inference server's own gauges from a scrape or a query: the metric names the figures catalog lists.

A live scrape or a Prometheus query of vLLM, TGI or Triton reaches the same facts as a pasted figure. The names are
the catalog's (collectors/catalogs/figures.yaml, whose entries cite their sources); they are spelled out here so that
importing the metric rules does not load the catalog, and tests/unit/parsers/test_figures.py checks the two agree.
Gauges only, the highest series.
"""

from __future__ import annotations

from collectors.parsers.metrics.metric_base import Derived, Index, Rule, derive_fact, finite

SERVING_GAUGES: dict[str, str] = {
    "vllm:num_requests_waiting": "serving.waiting_requests",
    "num_requests_waiting": "serving.waiting_requests",
    "tgi_queue_size": "serving.waiting_requests",
    "nv_inference_pending_request_count": "serving.waiting_requests",
    "vllm:num_requests_running": "serving.running_requests",
    "num_requests_running": "serving.running_requests",
    "tgi_batch_current_size": "serving.running_requests",
    "vllm:gpu_cache_usage_perc": "serving.kv_cache_usage_ratio",
    "vllm:kv_cache_usage_perc": "serving.kv_cache_usage_ratio",
    "gpu_cache_usage_perc": "serving.kv_cache_usage_ratio",
    "kv_cache_usage_perc": "serving.kv_cache_usage_ratio",
}
# Catalog figures these gauges give (the test's join key).
FIGURES = {"waiting_requests": "serving.waiting_requests", "running_requests": "serving.running_requests",
           "kv_cache_usage": "serving.kv_cache_usage_ratio"}


def _serving(index: Index) -> list[Derived]:
    out: list[Derived] = []
    for fact in sorted(set(SERVING_GAUGES.values())):
        samples = [s for s in finite(index.get(*[m for m, f in SERVING_GAUGES.items() if f == fact])) if s.value >= 0]
        if fact == "serving.kv_cache_usage_ratio":
            samples = [s for s in samples if s.value <= 1]  # a 0-1 gauge, whatever its name says
        if samples:
            best = max(samples, key=lambda s: s.value)
            value: object = round(best.value, 4) if fact.endswith("_ratio") else int(best.value)
            out.append(derive_fact(fact, value, best))
    return out


RULES: tuple[Rule, ...] = (_serving,)
METRICS: frozenset[str] = frozenset(SERVING_GAUGES)
