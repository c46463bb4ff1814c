"""Request failures from ingress-nginx, Istio and Triton counters: the share of requests that failed.

Scraped counters are cumulative, so the ratio read from exposition text is the share since the process
started; a PromQL rate over the same counters (prometheus_api) gives the share in the window.
"""

from __future__ import annotations

from collections import defaultdict

from collectors.parsers.metrics.metric_base import Derived, Index, Rule, derive_fact, finite
from collectors.parsers.metrics.promql_samples import Sample, format_number

# Counter name -> the label holding the HTTP status; a 5xx status is a failure.
_STATUS_COUNTERS = {"nginx_ingress_controller_requests": "status", "istio_requests_total": "response_code"}
_TRITON_OK, _TRITON_FAILED = "nv_inference_request_success", "nv_inference_request_failure"
_VERSION_LABELS = ("destination_version", "version", "canonical_revision", "destination_canonical_revision")
# One version is "the failing one" when it fails this often while every other version stays under the floor.
FAILING_SHARE = 0.05
CLEAN_SHARE = 0.01


def _is_5xx(sample: Sample, label: str) -> bool:
    return sample.labels.get(label, "").startswith("5")


def _ratio(errors: list[Sample], total: list[Sample], what: str) -> list[Derived]:
    denominator = sum(s.value for s in total)
    if denominator <= 0:
        return []
    failed = sum(s.value for s in errors)
    text = f"{what}: failed {format_number(failed)} of {format_number(denominator)}"
    return [derive_fact("http.error_ratio", round(failed / denominator, 4), *total, text=text)]


def _status_ratio(index: Index) -> list[Derived]:
    out: list[Derived] = []
    for metric, label in _STATUS_COUNTERS.items():
        samples = [s for s in finite(index.get(metric)) if s.value >= 0]
        if samples:
            out += _ratio([s for s in samples if _is_5xx(s, label)], samples, metric)
    return out


def _triton_ratio(index: Index) -> list[Derived]:
    ok = [s for s in finite(index.get(_TRITON_OK)) if s.value >= 0]
    failed = [s for s in finite(index.get(_TRITON_FAILED)) if s.value >= 0]
    if not failed:
        return []
    return _ratio(failed, ok + failed, "Triton inference requests")


def _failing_version(index: Index) -> list[Derived]:
    """A canary: one version fails while the rest are clean (seed 004:547-555)."""
    samples = [s for s in finite(index.get("istio_requests_total")) if s.value >= 0]
    by_version: dict[str, list[Sample]] = defaultdict(list)
    for s in samples:
        version = next((s.labels[k] for k in _VERSION_LABELS if s.labels.get(k)), "")
        if version and version != "unknown":
            by_version[version].append(s)
    if len(by_version) < 2:
        return []
    shares: dict[str, float] = {}
    for version, group in by_version.items():
        total = sum(s.value for s in group)
        if total > 0:
            shares[version] = sum(s.value for s in group if _is_5xx(s, "response_code")) / total
    failing = [v for v, share in shares.items() if share >= FAILING_SHARE]
    if len(failing) != 1 or any(share >= CLEAN_SHARE for v, share in shares.items() if v != failing[0]):
        return []
    version = failing[0]
    text = ", ".join(f"{v}: {shares[v]:.1%} 5xx" for v in sorted(shares))
    return [derive_fact("http.failing_version", version, *by_version[version], text=text)]


RULES: tuple[Rule, ...] = (_status_ratio, _triton_ratio, _failing_version)
METRICS: frozenset[str] = frozenset({*_STATUS_COUNTERS, _TRITON_OK, _TRITON_FAILED})
