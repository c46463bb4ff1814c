"""Known metrics to facts: dcgm-exporter, cAdvisor, kube-state-metrics, node_exporter, CoreDNS, Triton.

Pure and shared by the exposition-text parser and the Prometheus API parser: both turn what they read
into `Sample`s (with the lines they came from) and hand them here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from collectors.catalogs.xid import secondary_codes
from collectors.parsers.metrics import metric_gpu, metric_http, metric_serving
from collectors.parsers.metrics.metric_base import Derived, Index, Rule, derive_fact, finite, highest, label_key
from collectors.parsers.metrics.promql_samples import Sample, format_number

# NVML clock throttle ("clocks event") reason bits, as dcgm-exporter reports them in
# DCGM_FI_DEV_CLOCK_THROTTLE_REASONS / DCGM_FI_DEV_CLOCKS_EVENT_REASONS (nvmlClocksThrottleReason*).
# None marks bits that are normal operation, not a slowdown worth reporting.
THROTTLE_BITS: dict[int, str | None] = {
    0x1: None,  # GpuIdle
    0x2: None,  # ApplicationsClocksSetting
    0x4: "power",  # SwPowerCap
    0x8: "hw-slowdown",  # HwSlowdown
    0x10: None,  # SyncBoost
    0x20: "sw-thermal",  # SwThermalSlowdown
    0x40: "thermal",  # HwThermalSlowdown
    0x80: "power-brake",  # HwPowerBrakeSlowdown
    0x100: None,  # DisplayClockSetting
}

_SKIP_CONTAINERS = frozenset({"", "POD"})  # cAdvisor's pod-level cgroup and the pause container
_CONTAINER_KEY = ("namespace", "pod", "container")
_NODE_KEY = ("instance", "node", "Hostname")
_GPU_KEY = ("Hostname", "instance", "node", "UUID", "gpu", "GPU_I_ID")


def _gauge(fact: str, *metrics: str, as_int: bool = False) -> Rule:
    def rule(index: Index) -> list[Derived]:
        return highest(fact, index.get(*metrics), as_int)

    return rule


def _in_container(sample: Sample) -> bool:
    return sample.labels.get("container", "") not in _SKIP_CONTAINERS


def _ratio(fact: str, num: list[Sample], den: list[Sample], keys: Sequence[str],
           pick: Callable[..., tuple[float, Sample, Sample]] = max) -> list[Derived]:
    """num/den joined on `keys`, reporting the highest (or lowest) ratio."""
    by_key = {label_key(s, keys): s for s in finite(den) if s.value > 0}
    pairs = [(n.value / d.value, n, d) for n in finite(num) if (d := by_key.get(label_key(n, keys)))]
    if not pairs:
        return []
    ratio, n, d = pick(pairs, key=lambda p: p[0])
    return [derive_fact(fact, round(ratio, 4), n, d)]


def _memory_limit(sample: Sample) -> bool:
    return sample.labels.get("resource") == "memory"


def _working_set(index: Index) -> list[Derived]:
    used = [s for s in index.get("container_memory_working_set_bytes") if _in_container(s)]
    # cAdvisor's own limit goes last so it wins the join: it sits next to the working set it divides.
    limits = [s for s in index.get("kube_pod_container_resource_limits") if _memory_limit(s)]
    limits += [s for s in index.get("container_spec_memory_limit_bytes") if _in_container(s)]
    return _ratio("memory.working_set_ratio", used, limits, _CONTAINER_KEY)


def _memory_limit_bytes(index: Index) -> list[Derived]:
    limits = [s for s in index.get("kube_pod_container_resource_limits") if _memory_limit(s)]
    limits += [s for s in index.get("container_spec_memory_limit_bytes") if _in_container(s) and s.value > 0]
    return highest("container.memory_limit_bytes", limits, as_int=True)


def _cpu_throttle(index: Index) -> list[Derived]:
    throttled = [s for s in index.get("container_cpu_cfs_throttled_periods_total") if _in_container(s)]
    periods = [s for s in index.get("container_cpu_cfs_periods_total") if _in_container(s)]
    return _ratio("cpu.throttled_ratio", throttled, periods, _CONTAINER_KEY)


def _fb_used(index: Index) -> list[Derived]:
    """Used / (used + free + reserved): DCGM has no total field, and all three share one GPU's labels."""
    free = {label_key(s, _GPU_KEY): s for s in finite(index.get("DCGM_FI_DEV_FB_FREE"))}
    reserved = {label_key(s, _GPU_KEY): s.value for s in finite(index.get("DCGM_FI_DEV_FB_RESERVED"))}
    best: tuple[float, Sample, Sample] | None = None
    for used in finite(index.get("DCGM_FI_DEV_FB_USED")):
        key = label_key(used, _GPU_KEY)
        if key not in free:
            continue
        total = used.value + free[key].value + reserved.get(key, 0.0)
        if total > 0 and (best is None or used.value / total > best[0]):
            best = (used.value / total, used, free[key])
    if best is None:
        return []
    ratio, used, spare = best
    return [derive_fact("gpu.fb_used_ratio", round(ratio, 4), used, spare, text=f"{used.render()} ; {spare.render()}")]


def _xid(index: Index) -> list[Derived]:
    """DCGM_FI_DEV_XID_ERRORS holds the last Xid code a GPU reported (0 = none)."""
    out: list[Derived] = []
    seen: set[int] = set()
    try:
        secondary = secondary_codes()
    except (OSError, ValueError):
        secondary = frozenset()
    for sample in finite(index.get("DCGM_FI_DEV_XID_ERRORS")):
        code = int(sample.value)
        if code <= 0 or code in seen:
            continue
        seen.add(code)
        out.append(derive_fact("xid.codes", [code], sample))
        if code not in secondary:
            out.append(derive_fact("xid.primary_codes", [code], sample))
    if out and not any(d.name == "xid.primary_codes" for d in out):
        # Only secondary codes (e.g. 45) were seen: say so, as the kernel parser does.
        first = out[0]
        out.append(Derived("xid.primary_codes", [], first.start, first.end, first.text))
    return out


def _throttle(index: Index) -> list[Derived]:
    out: list[Derived] = []
    seen: set[str] = set()
    masks = index.get("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS")
    for sample in finite(masks):
        mask = int(sample.value) if sample.value >= 0 else 0
        for bit, reason in THROTTLE_BITS.items():
            if reason and mask & bit and reason not in seen:
                seen.add(reason)
                out.append(derive_fact("gpu.throttle_reasons", [reason], sample))
    if not out and masks:
        # Masks were read and none has a reported bit set: no throttling, which rules it out.
        out.append(derive_fact("gpu.throttle_reasons", [], masks[0]))
    return out


def _row_remap(index: Index) -> list[Derived]:
    samples = index.get("DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ROW_REMAP_PENDING")
    bad = next((s for s in samples if s.value > 0), None)
    if bad is not None:
        return [derive_fact("gpu.row_remap_failed", True, bad)]
    return [derive_fact("gpu.row_remap_failed", False, samples[0])] if samples else []


def _flagged(samples: list[Sample], label: str) -> list[Sample]:
    """kube-state-metrics one-hot series: the ones whose value is 1."""
    return [s for s in samples if s.value >= 1 and s.labels.get(label)]


def _terminated(index: Index) -> list[Derived]:
    flagged = _flagged(index.get("kube_pod_container_status_last_terminated_reason",
                                 "kube_pod_container_status_terminated_reason"), "reason")
    # A sidecar's `Completed` says less than another container's OOMKilled, so it goes last.
    flagged.sort(key=lambda s: s.labels["reason"] == "Completed")
    out: list[Derived] = []
    if flagged:
        out.append(derive_fact("container.last_terminated.reason", flagged[0].labels["reason"], flagged[0]))
    codes = finite(index.get("kube_pod_container_status_last_terminated_exitcode"))
    codes.sort(key=lambda s: s.value == 0)
    if codes:
        out.append(derive_fact("container.last_terminated.exit_code", int(codes[0].value), codes[0]))
    return out


def _waiting(index: Index) -> list[Derived]:
    flagged = _flagged(index.get("kube_pod_container_status_waiting_reason"), "reason")
    return [derive_fact("container.waiting.reason", flagged[0].labels["reason"], flagged[0])] if flagged else []


def _pending(index: Index) -> list[Derived]:
    out: list[Derived] = []
    for sample in _flagged(index.get("kube_pod_status_phase"), "pod"):
        if sample.labels.get("phase") == "Pending":
            out.append(derive_fact("pods.pending", [sample.labels["pod"]], sample))
    return out


_HPA_KEY = ("namespace", "horizontalpodautoscaler", "hpa")


def _hpa(index: Index) -> list[Derived]:
    limited = [s for s in index.get("kube_horizontalpodautoscaler_status_condition")
               if s.value >= 1 and s.labels.get("condition") == "ScalingLimited"
               and s.labels.get("status") == "true"]
    if limited:
        return [derive_fact("hpa.at_max", True, limited[0])]
    max_samples = finite(index.get("kube_horizontalpodautoscaler_spec_max_replicas"))
    maxima = {label_key(s, _HPA_KEY): s for s in max_samples}
    pairs = [(c, m) for c in finite(index.get("kube_horizontalpodautoscaler_status_current_replicas"))
             if (m := maxima.get(label_key(c, _HPA_KEY)))]
    at_max = [(c, m) for c, m in pairs if c.value >= m.value > 0]
    if at_max:
        return [derive_fact("hpa.at_max", True, *at_max[0])]
    return [derive_fact("hpa.at_max", False, *pairs[0])] if pairs else []


_CONNTRACK_DROPS = ("node_nf_conntrack_stat_drop", "node_nf_conntrack_stat_early_drop",
                    "node_nf_conntrack_stat_insert_failed")


def _conntrack(index: Index) -> list[Derived]:
    out = _ratio("conntrack.usage_ratio", index.get("node_nf_conntrack_entries"),
                 index.get("node_nf_conntrack_entries_limit"), _NODE_KEY)
    per_node: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for sample in finite(index.get(*_CONNTRACK_DROPS)):
        per_node[label_key(sample, _NODE_KEY)].append(sample)
    if per_node:
        # The same sum `conntrack -S` gives: drop + early_drop + insert_failed, highest node wins.
        samples = max(per_node.values(), key=lambda group: sum(s.value for s in group))
        out.append(derive_fact("conntrack.drops", int(sum(s.value for s in samples)), *samples))
    return out


def _node_memory(index: Index) -> list[Derived]:
    return _ratio("node.memory_available_ratio", index.get("node_memory_MemAvailable_bytes"),
                  index.get("node_memory_MemTotal_bytes"), _NODE_KEY, pick=min)


def _steal(index: Index) -> list[Derived]:
    """Steal share of all CPU time per node (cumulative counters: the share since boot)."""
    per_node: dict[tuple[str, ...], list[Sample]] = defaultdict(list)
    for sample in finite(index.get("node_cpu_seconds_total")):
        per_node[label_key(sample, _NODE_KEY)].append(sample)
    best: tuple[float, Derived] | None = None
    for node, samples in per_node.items():
        total = sum(s.value for s in samples)
        steal = sum(s.value for s in samples if s.labels.get("mode") == "steal")
        if total <= 0 or not any(s.labels.get("mode") == "steal" for s in samples):
            continue
        share = round(steal / total, 4)
        text = (f"node_cpu_seconds_total{{mode=\"steal\"}} {format_number(steal)} of {format_number(total)} "
                f"on {next((n for n in node if n), 'the node')}")
        if best is None or share > best[0]:
            best = (share, derive_fact("node.cpu_steal_ratio", share, *samples, text=text))
    return [best[1]] if best else []


_DNS_ERRORS = frozenset({"SERVFAIL", "NXDOMAIN"})


def _dns(index: Index) -> list[Derived]:
    samples = finite(index.get("coredns_dns_responses_total", "coredns_dns_response_rcode_count_total"))
    total = sum(s.value for s in samples)
    if total <= 0:
        return []
    errors = sum(s.value for s in samples if s.labels.get("rcode") in _DNS_ERRORS)
    text = f"coredns responses SERVFAIL+NXDOMAIN {format_number(errors)} of {format_number(total)}"
    return [derive_fact("dns.error_ratio", round(errors / total, 4), *samples, text=text)]


_TRITON_KEY = ("model", "version", "instance", "pod")


def _queue_share(index: Index) -> list[Derived]:
    return _ratio("latency.queue_share", index.get("nv_inference_queue_duration_us"),
                  index.get("nv_inference_request_duration_us"), _TRITON_KEY)


def _util(index: Index) -> list[Derived]:
    """DCGM_FI_DEV_GPU_UTIL of whole GPUs: a MIG instance's series (GPU_I_ID / GPU_I_PROFILE labels) reads 0
    whatever runs on it, since NVML has no utilisation for MIG (NVIDIA/dcgm-exporter issue #216 and its docs:
    use DCGM_FI_PROF_GR_ENGINE_ACTIVE there), so it is not a reading."""
    whole = [s for s in index.get("DCGM_FI_DEV_GPU_UTIL")
             if not s.labels.get("GPU_I_ID") and not s.labels.get("GPU_I_PROFILE")]
    return highest("gpu.util_percent", whole)


RULES: tuple[Rule, ...] = (
    _util,
    _fb_used,
    _gauge("gpu.temp_c", "DCGM_FI_DEV_GPU_TEMP"),
    _xid,
    _gauge("gpu.ecc_dbe", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", as_int=True),
    _gauge("gpu.ecc_sbe", "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", as_int=True),
    _throttle,
    _row_remap,
    _working_set,
    _memory_limit_bytes,
    _cpu_throttle,
    _terminated,
    _waiting,
    _gauge("container.restart_count", "kube_pod_container_status_restarts_total", as_int=True),
    _pending,
    _hpa,
    _gauge("hpa.max_replicas", "kube_horizontalpodautoscaler_spec_max_replicas", as_int=True),
    _conntrack,
    _node_memory,
    _steal,
    _dns,
    _queue_share,
    *metric_gpu.RULES,
    *metric_http.RULES,
    *metric_serving.RULES,
)

# Every metric a rule reads; the API parser uses it to recognise a query over one of them.
KNOWN_METRICS: frozenset[str] = frozenset({
    "DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_FB_RESERVED",
    "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_XID_ERRORS", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
    "DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", "DCGM_FI_DEV_CLOCKS_EVENT_REASONS",
    "DCGM_FI_DEV_ROW_REMAP_FAILURE", "DCGM_FI_DEV_ROW_REMAP_PENDING",
    "container_memory_working_set_bytes", "container_spec_memory_limit_bytes",
    "kube_pod_container_resource_limits", "container_cpu_cfs_throttled_periods_total",
    "container_cpu_cfs_periods_total", "kube_pod_container_status_last_terminated_reason",
    "kube_pod_container_status_terminated_reason", "kube_pod_container_status_last_terminated_exitcode",
    "kube_pod_container_status_waiting_reason", "kube_pod_container_status_restarts_total",
    "kube_pod_status_phase", "kube_horizontalpodautoscaler_status_condition",
    "kube_horizontalpodautoscaler_spec_max_replicas", "kube_horizontalpodautoscaler_status_current_replicas",
    "node_nf_conntrack_entries", "node_nf_conntrack_entries_limit", *_CONNTRACK_DROPS,
    "node_memory_MemAvailable_bytes",
    "node_memory_MemTotal_bytes", "node_cpu_seconds_total", "coredns_dns_responses_total",
    "coredns_dns_response_rcode_count_total", "nv_inference_queue_duration_us",
    "nv_inference_request_duration_us", *metric_gpu.METRICS, *metric_http.METRICS, *metric_serving.METRICS,
})


def derive(samples: Iterable[Sample]) -> list[Derived]:
    """Every fact the known metrics among `samples` support."""
    index = Index(samples)
    out: list[Derived] = []
    for rule in RULES:
        out.extend(rule(index))
    return out
