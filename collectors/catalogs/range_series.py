"""The metrics live triage fetches as range queries over the window, so a chart can plot them.

A playbook's chart (playbooks/model.py, `chart.metric`) may name only these: `playbooks lint` checks it, and
tests/integration/test_prometheus_source.py checks that collectors/live/prometheus.py plans a range query for each.
"""

from __future__ import annotations

RANGE_METRICS: frozenset[str] = frozenset({
    "container_memory_working_set_bytes",  # memory-working-set-range
    "container_cpu_cfs_throttled_periods_total",  # cpu-throttled-ratio-range
    "DCGM_FI_DEV_XID_ERRORS",  # gpu-xid-range
    "DCGM_FI_DEV_GPU_UTIL",  # gpu-util-range
})
