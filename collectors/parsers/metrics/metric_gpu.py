"""dcgm-exporter profiling and PCIe metrics: how busy a GPU really is, and whether its bus keeps up.

DCGM_FI_DEV_GPU_UTIL only says a kernel was running; the profiling fields (DCGM_FI_PROF_*) say how much of
the GPU did work, so they separate an idle GPU from a starved, memory-bound or transfer-bound one
(seed 001:595-613, 001:645-659). The PROF fields are ratios from 0 to 1.
"""

from __future__ import annotations

from collectors.parsers.metrics.metric_base import Derived, Index, Rule, derive_fact, finite, highest, label_key

_GPU_KEY = ("Hostname", "instance", "node", "UUID", "gpu", "GPU_I_ID")

_PROFILING = {
    "gpu.sm_active_ratio": "DCGM_FI_PROF_SM_ACTIVE",
    "gpu.gr_engine_active_ratio": "DCGM_FI_PROF_GR_ENGINE_ACTIVE",
    "gpu.sm_occupancy_ratio": "DCGM_FI_PROF_SM_OCCUPANCY",
    "gpu.tensor_active_ratio": "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE",
    "gpu.dram_active_ratio": "DCGM_FI_PROF_DRAM_ACTIVE",
}

# Usable bytes per second per lane and direction after line encoding, by PCIe generation (GB/s).
LANE_GBPS = {1: 0.25, 2: 0.5, 3: 0.985, 4: 1.969, 5: 3.938, 6: 7.563}
_RX = "DCGM_FI_PROF_PCIE_RX_BYTES"  # bytes/s host-to-device, a rate already
_GEN, _WIDTH = "DCGM_FI_DEV_PCIE_LINK_GEN", "DCGM_FI_DEV_PCIE_LINK_WIDTH"
_MAX_GEN, _MAX_WIDTH = "DCGM_FI_DEV_PCIE_MAX_LINK_GEN", "DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH"
# DCGM field 202: NVML's PCIe replay counter (nvmlDeviceGetPcieReplayCounter), the same count the nvml
# snapshot reads, so both give gpu.pcie_replays (dcgm-exporter default-counters.csv, DCGM dcgm_fields.h).
_REPLAYS = "DCGM_FI_DEV_PCIE_REPLAY_COUNTER"


def _profiling(fact: str, metric: str) -> Rule:
    def rule(index: Index) -> list[Derived]:
        samples = [s for s in finite(index.get(metric)) if s.value >= 0]
        if not samples:
            return []
        best = max(samples, key=lambda s: s.value)
        # Exporters report 0-1; a value above 1 is a percentage from a recording rule, read as such.
        value = best.value / 100 if best.value > 1 else best.value
        return [derive_fact(fact, round(value, 4), best)]

    return rule


def _pcie_saturation(index: Index) -> list[Derived]:
    """RX bytes/s over the negotiated link's capacity, per GPU; only where generation and width were read."""
    gens = {label_key(s, _GPU_KEY): s for s in finite(index.get(_GEN))}
    widths = {label_key(s, _GPU_KEY): s for s in finite(index.get(_WIDTH))}
    best: tuple[float, Derived] | None = None
    for rx in finite(index.get(_RX)):
        k = label_key(rx, _GPU_KEY)
        gen, width = gens.get(k), widths.get(k)
        if gen is None or width is None or int(gen.value) not in LANE_GBPS or width.value <= 0:
            continue
        capacity = LANE_GBPS[int(gen.value)] * width.value * 1e9
        share = round(rx.value / capacity, 4)
        if best is None or share > best[0]:
            best = (share, derive_fact("gpu.pcie_rx_saturation", share, rx, gen, width))
    return [best[1]] if best else []


def _link_degraded(index: Index) -> list[Derived]:
    """A link that trained below what both ends support: fewer lanes or an older generation."""
    out: list[Derived] = []
    for now_name, max_name in ((_GEN, _MAX_GEN), (_WIDTH, _MAX_WIDTH)):
        maxima = {label_key(s, _GPU_KEY): s for s in finite(index.get(max_name))}
        for now in finite(index.get(now_name)):
            top = maxima.get(label_key(now, _GPU_KEY))
            if top is not None and 0 < now.value < top.value:
                return [derive_fact("gpu.pcie_link_degraded", True, now, top)]
            if top is not None and not out:
                out.append(derive_fact("gpu.pcie_link_degraded", False, now, top))
    return out


RULES: tuple[Rule, ...] = (
    *(_profiling(fact, metric) for fact, metric in _PROFILING.items()),
    _pcie_saturation,
    _link_degraded,
    lambda index: highest("gpu.pcie_replays", [s for s in index.get(_REPLAYS) if s.value >= 0], as_int=True),
)
METRICS: frozenset[str] = frozenset({*_PROFILING.values(), _RX, _GEN, _WIDTH, _MAX_GEN, _MAX_WIDTH, _REPLAYS})
