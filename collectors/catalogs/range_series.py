"""The series live triage can fetch over the window as range queries, so a hypothesis's chart can plot them.

Every hypothesis in playbooks/*.yaml declares its chart (`chart.metric`), and `playbooks lint` allows only a key
of RANGE_METRICS there, with the unit its query returns. A key is an exporter's metric name, or that name with one
label matcher when the same metric gives two different charts (`node_cpu_seconds_total{mode="steal"}`).

Each entry is one range query. Its PromQL is a template: collectors/live/prometheus.py replaces the markers below
with label matchers for the triage's target, built and escaped by collectors/live/promql.py (no label value is
ever written into a template), and skips the entry when the target has nothing the marker can name.

| marker | becomes | needs |
|---|---|---|
| `<pods>` | `namespace="…",pod=~"…"` (kube-state-metrics, kubelet, Triton) | pods or a workload |
| `<containers>` | `<pods>` plus `container!="",container!="POD"` (cAdvisor) | pods or a workload |
| `<namespace>` | `namespace="…"` | a namespace |
| `<service>` | `namespace="…",service="…"` (ingress-nginx) | a service |
| `<endpoint>` | `namespace="…",endpoint="…"` (kube-state-metrics' Endpoints) | a service |
| `<deployment>` | `namespace="…",deployment="…"` | a Deployment |
| `<scaled>` | `namespace="…",scaletargetref_name="…"` (the HPA's target) | a workload or a service |
| `<instance>` | `instance=~"(node|ip)(:port)?"` (node_exporter, kubelet, kube-proxy) | nodes |
| `<node>` | `node=~"…"` (kube-state-metrics' Node metrics) | nodes |
| `<gpus>` | `Hostname=~"…"` (dcgm-exporter) | GPU nodes |
| `<window>` | the rate window: 5m, or the step when longer, so no sample falls between points | - |

A template without target markers is cluster-wide (CoreDNS, the scheduler, GPU capacity for a pod that has no node
yet). Counters are charted as a rate (per second or per hour) or a ratio of rates, never as a running total, and the
entry's unit says which. Chart queries aggregate (`sum by`, `count by`, arithmetic) so that the Prometheus parser
reads no fact from them: a picture must not change the verdict it illustrates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Unit = Literal["ratio", "percent", "bytes", "bytes-per-second", "seconds", "count", "per-second", "per-hour",
               "celsius"]
UNITS: tuple[str, ...] = ("ratio", "percent", "bytes", "bytes-per-second", "seconds", "count", "per-second",
                          "per-hour", "celsius")
# A metric name, optionally with one label matcher: DCGM_FI_DEV_GPU_UTIL, node_cpu_seconds_total{mode="steal"}.
SERIES_KEY = r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[a-zA-Z_][a-zA-Z0-9_]*(=|!=|=~|!~)"[^"{}]*"\})?$'
_KEY = re.compile(SERIES_KEY)


@dataclass(frozen=True)
class RangeSeries:
    """One range query: `query` names its artifact (prom-<query>.json) and its entry in a `missing` list."""

    query: str
    promql: str
    unit: Unit
    counter: bool = False  # the metric only ever grows: the template must take its rate
    always: bool = False  # fetched on every triage whose target fits: its trend is evidence, not only a picture


def split_key(key: str) -> tuple[str, str | None]:
    """(metric name, its matcher or None) of a RANGE_METRICS key; raises ValueError for a malformed key."""
    if not _KEY.match(key):
        raise ValueError(f"not a series key: {key!r}")
    name, _, rest = key.partition("{")
    return name, (rest[:-1] if rest else None)


_FREE_GPUS = (
    'sum by (node) (kube_node_status_allocatable{resource="nvidia_com_gpu"}) - (sum by (node) '
    '(kube_pod_container_resource_requests{resource="nvidia_com_gpu",node!=""} * on (namespace, pod) group_left () '
    'max by (namespace, pod) (kube_pod_status_phase{phase=~"Pending|Running"} == 1)) or sum by (node) '
    '(kube_node_status_allocatable{resource="nvidia_com_gpu"}) * 0)')
_RESTARTS = "rate(kube_pod_container_status_restarts_total{<pods>}[<window>])"
_BAD_CONDITION = ('kube_node_status_condition{<node>,condition!="Ready",status="true"} == 1 or '
                  'kube_node_status_condition{<node>,condition="Ready",status!="true"} == 1')
_FILESYSTEMS = ('fstype!~"tmpfs|overlay|squashfs|nsfs",'
                'mountpoint=~"/|/var|/var/lib/kubelet|/var/lib/containerd|/var/lib/docker"')
_NOT_POD_LINKS = 'device!~"lo|veth.*|cali.*|lxc.*"'


def _by_gpu(metric: str) -> str:
    return f"sum by (Hostname, gpu) ({metric}{{<gpus>}})"


RANGE_METRICS: dict[str, RangeSeries] = {
    # ---- the pods (cAdvisor, kube-state-metrics, kubelet probes) ------------------------------------------------
    # memory-working-set-range: peak working set per container (always: its shape gives memory.growing)
    "container_memory_working_set_bytes": RangeSeries(
        "memory-working-set-range", "max by (namespace, pod, container) (container_memory_working_set_bytes"
        "{<containers>})", "bytes", always=True),
    # cpu-throttled-ratio-range: CFS periods throttled over all periods, per container
    "container_cpu_cfs_throttled_periods_total": RangeSeries(
        "cpu-throttled-ratio-range",
        "sum by (namespace, pod, container) (rate(container_cpu_cfs_throttled_periods_total{<containers>}[<window>]))"
        " / sum by (namespace, pod, container) (rate(container_cpu_cfs_periods_total{<containers>}[<window>]))",
        "ratio", counter=True, always=True),
    # cpu-busy-ratio-range: CPU seconds used per second over the CPU limit, per container
    "container_cpu_usage_seconds_total": RangeSeries(
        "cpu-busy-ratio-range",
        "sum by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{<containers>}[<window>])) / "
        'sum by (namespace, pod, container) (kube_pod_container_resource_limits{<pods>,resource="cpu"})',
        "ratio", counter=True),
    # restarts-range: restarts per hour per pod, with the node it runs on (a bad node shows as one node's pods)
    "kube_pod_container_status_restarts_total": RangeSeries(
        "restarts-range",
        f"sum by (namespace, pod, node) (({_RESTARTS} * on (namespace, pod) group_left (node) max by "
        f"(namespace, pod, node) (kube_pod_info{{<pods>}})) or on (namespace, pod, container) {_RESTARTS}) * 3600",
        "per-hour", counter=True),
    # waiting-reason-range: which reason each container waits on (ContainerCreating, ImagePullBackOff, ...)
    "kube_pod_container_status_waiting_reason": RangeSeries(
        "waiting-reason-range",
        "sum by (pod, container, reason) (kube_pod_container_status_waiting_reason{<pods>} == 1)", "count"),
    # pod-phase-range: how many of the target's pods are in each phase
    "kube_pod_status_phase": RangeSeries(
        "pod-phase-range", "sum by (phase) (kube_pod_status_phase{<pods>} == 1)", "count"),
    # liveness-failures-range: failed liveness probes per hour, per container (kubelet's prober)
    'prober_probe_total{probe_type="Liveness"}': RangeSeries(
        "liveness-failures-range",
        'sum by (pod, container) (rate(prober_probe_total{<pods>,probe_type="Liveness",result="failed"}'
        "[<window>])) * 3600", "per-hour", counter=True),
    # readiness-failures-range: failed readiness probes per hour, per container
    'prober_probe_total{probe_type="Readiness"}': RangeSeries(
        "readiness-failures-range",
        'sum by (pod, container) (rate(prober_probe_total{<pods>,probe_type="Readiness",result="failed"}'
        "[<window>])) * 3600", "per-hour", counter=True),
    # triton-queue-share-range: the share of request time Triton's requests spend queued
    "nv_inference_queue_duration_us": RangeSeries(
        "triton-queue-share-range",
        "sum(rate(nv_inference_queue_duration_us{<pods>}[<window>])) / "
        "sum(rate(nv_inference_request_duration_us{<pods>}[<window>]))", "ratio", counter=True),

    # ---- the workload and its service -----------------------------------------------------------------------------
    # hpa-replicas-ratio-range: the HPA's current replicas over its maximum (1 = at the ceiling)
    "kube_horizontalpodautoscaler_status_current_replicas": RangeSeries(
        "hpa-replicas-ratio-range",
        "max by (namespace, horizontalpodautoscaler) (kube_horizontalpodautoscaler_status_current_replicas"
        "{<namespace>} * on (namespace, horizontalpodautoscaler) group_left () kube_horizontalpodautoscaler_info"
        "{<scaled>}) / max by (namespace, horizontalpodautoscaler) (kube_horizontalpodautoscaler_spec_max_replicas"
        "{<namespace>})", "ratio"),
    # deployment-generation-range: the Deployment's spec generation; each step up is a change rolled out
    "kube_deployment_metadata_generation": RangeSeries(
        "deployment-generation-range",
        "sum by (deployment) (kube_deployment_metadata_generation{<deployment>})", "count"),
    # deployment-unavailable-range: replicas the Deployment wants that are not available yet
    "kube_deployment_status_replicas_unavailable": RangeSeries(
        "deployment-unavailable-range",
        "sum by (deployment) (kube_deployment_status_replicas_unavailable{<deployment>})", "count"),
    # ingress-error-ratio-range: 5xx responses over all responses at ingress-nginx, for the service
    'nginx_ingress_controller_requests{status=~"5.."}': RangeSeries(
        "ingress-error-ratio-range",
        'sum(rate(nginx_ingress_controller_requests{<service>,status=~"5.."}[<window>])) / '
        "sum(rate(nginx_ingress_controller_requests{<service>}[<window>]))", "ratio", counter=True),
    # ready-endpoints-range: the service's ready addresses (0 while the Endpoints object exists but none is ready)
    'kube_endpoint_address{ready="true"}': RangeSeries(
        "ready-endpoints-range",
        'count(kube_endpoint_address{<endpoint>,ready="true"}) or on () (0 * max(kube_endpoint_info{<endpoint>}))',
        "count"),
    # endpoint-addresses-range: every address behind the service, ready or not (0: the selector matches no pod)
    "kube_endpoint_address": RangeSeries(
        "endpoint-addresses-range",
        "count(kube_endpoint_address{<endpoint>}) or on () (0 * max(kube_endpoint_info{<endpoint>}))", "count"),

    # ---- the namespace ----------------------------------------------------------------------------------------------
    # quota-used-ratio-range: used over hard for the namespace's quotas, the five closest to their limit
    "kube_resourcequota": RangeSeries(
        "quota-used-ratio-range",
        'topk(5, max by (resourcequota, resource) (kube_resourcequota{<namespace>,type="used"}) / '
        'max by (resourcequota, resource) (kube_resourcequota{<namespace>,type="hard"}))', "ratio"),
    # pvc-pending-range: the namespace's claims still Pending (not bound to a volume)
    'kube_persistentvolumeclaim_status_phase{phase="Pending"}': RangeSeries(
        "pvc-pending-range",
        'sum by (persistentvolumeclaim) (kube_persistentvolumeclaim_status_phase{<namespace>,phase="Pending"} == 1)',
        "count"),
    # pvc-terminating-range: how long each claim has been waiting to be deleted
    "kube_persistentvolumeclaim_deletion_timestamp": RangeSeries(
        "pvc-terminating-range",
        "time() - max by (persistentvolumeclaim) (kube_persistentvolumeclaim_deletion_timestamp{<namespace>})",
        "seconds"),

    # ---- the nodes (node_exporter, kubelet, kube-proxy) -------------------------------------------------------------
    # node-memory-available-ratio-range: MemAvailable over MemTotal, per node
    "node_memory_MemAvailable_bytes": RangeSeries(
        "node-memory-available-ratio-range",
        "min by (instance) (node_memory_MemAvailable_bytes{<instance>}) / "
        "min by (instance) (node_memory_MemTotal_bytes{<instance>})", "ratio"),
    # node-filesystem-available-ratio-range: free space on the filesystems the kubelet and the runtime use
    "node_filesystem_avail_bytes": RangeSeries(
        "node-filesystem-available-ratio-range",
        f"min by (instance, mountpoint) (node_filesystem_avail_bytes{{<instance>,{_FILESYSTEMS}}} / "
        f"node_filesystem_size_bytes{{<instance>,{_FILESYSTEMS}}})", "ratio"),
    # cpu-steal-ratio-range: CPU time the hypervisor gave to someone else, per node
    'node_cpu_seconds_total{mode="steal"}': RangeSeries(
        "cpu-steal-ratio-range",
        'avg by (instance) (rate(node_cpu_seconds_total{<instance>,mode="steal"}[<window>]))', "ratio",
        counter=True),
    # cpu-iowait-ratio-range: CPU time spent waiting on I/O, per node
    'node_cpu_seconds_total{mode="iowait"}': RangeSeries(
        "cpu-iowait-ratio-range",
        'avg by (instance) (rate(node_cpu_seconds_total{<instance>,mode="iowait"}[<window>]))', "ratio",
        counter=True),
    # conntrack-usage-ratio-range: connection-tracking entries over the table's limit, per node
    "node_nf_conntrack_entries": RangeSeries(
        "conntrack-usage-ratio-range",
        "max by (instance) (node_nf_conntrack_entries{<instance>}) / "
        "max by (instance) (node_nf_conntrack_entries_limit{<instance>})", "ratio"),
    # network-mtu-range: each interface's MTU (pod veths left out), per node
    "node_network_mtu_bytes": RangeSeries(
        "network-mtu-range", f"sum by (instance, device) (node_network_mtu_bytes{{<instance>,{_NOT_POD_LINKS}}})",
        "bytes"),
    # tcp-retransmit-ratio-range: TCP segments retransmitted over segments sent, per node
    "node_netstat_Tcp_RetransSegs": RangeSeries(
        "tcp-retransmit-ratio-range",
        "sum by (instance) (rate(node_netstat_Tcp_RetransSegs{<instance>}[<window>])) / "
        "sum by (instance) (rate(node_netstat_Tcp_OutSegs{<instance>}[<window>]))", "ratio", counter=True),
    # tcp-syn-retransmits-range: connection attempts retried because no answer came (dropped SYNs), per node
    "node_netstat_TcpExt_TCPSynRetrans": RangeSeries(
        "tcp-syn-retransmits-range",
        "sum by (instance) (rate(node_netstat_TcpExt_TCPSynRetrans{<instance>}[<window>]))", "per-second",
        counter=True),
    # network-transmit-range: bytes sent per second by each interface (pod veths left out)
    "node_network_transmit_bytes_total": RangeSeries(
        "network-transmit-range",
        f"sum by (instance, device) (rate(node_network_transmit_bytes_total{{<instance>,{_NOT_POD_LINKS}}}"
        "[<window>]))", "bytes-per-second", counter=True),
    # rdma-transmit-range: bytes sent per second over InfiniBand / RoCE ports (kernel-bypass traffic)
    "node_infiniband_port_data_transmitted_bytes_total": RangeSeries(
        "rdma-transmit-range",
        "sum by (instance, device) (rate(node_infiniband_port_data_transmitted_bytes_total{<instance>}"
        "[<window>]))", "bytes-per-second", counter=True),
    # infiniband-link-downs-range: InfiniBand links that failed to recover and went down, per hour
    "node_infiniband_link_downed_total": RangeSeries(
        "infiniband-link-downs-range",
        "sum by (instance, device) (rate(node_infiniband_link_downed_total{<instance>}[<window>])) * 3600",
        "per-hour", counter=True),
    # procs-blocked-range: processes in uninterruptible sleep (D state), per node
    "node_procs_blocked": RangeSeries(
        "procs-blocked-range", "sum by (instance) (node_procs_blocked{<instance>})", "count"),
    # numa-remote-ratio-range: the share of memory allocations served from another NUMA node
    "node_memory_numa_other_node_total": RangeSeries(
        "numa-remote-ratio-range",
        "sum by (instance) (rate(node_memory_numa_other_node_total{<instance>}[<window>])) / (sum by (instance) "
        "(rate(node_memory_numa_local_node_total{<instance>}[<window>])) + sum by (instance) "
        "(rate(node_memory_numa_other_node_total{<instance>}[<window>])))", "ratio", counter=True),
    # runtime-errors-range: failed container-runtime calls per hour, by operation (run_podsandbox, pull_image, ...)
    "kubelet_runtime_operations_errors_total": RangeSeries(
        "runtime-errors-range",
        "sum by (instance, operation_type) (rate(kubelet_runtime_operations_errors_total{<instance>}[<window>]))"
        " * 3600", "per-hour", counter=True),
    # image-pull-p99-range: the 99th percentile of image pull time on the node
    'kubelet_runtime_operations_duration_seconds_bucket{operation_type="pull_image"}': RangeSeries(
        "image-pull-p99-range",
        "histogram_quantile(0.99, sum by (instance, le) (rate(kubelet_runtime_operations_duration_seconds_bucket"
        '{<instance>,operation_type="pull_image"}[<window>])))', "seconds", counter=True),
    # volume-failures-range: failed volume operations per hour on the node, by operation (mount, attach check, ...)
    "storage_operation_duration_seconds_count": RangeSeries(
        "volume-failures-range",
        "sum by (instance, operation_name) (rate(storage_operation_duration_seconds_count"
        '{<instance>,status="fail-unknown"}[<window>])) * 3600', "per-hour", counter=True),
    # pleg-age-range: seconds since the kubelet's pod lifecycle event generator last finished a relist
    "kubelet_pleg_last_seen_seconds": RangeSeries(
        "pleg-age-range", "time() - max by (instance) (kubelet_pleg_last_seen_seconds{<instance>})", "seconds"),
    # kube-proxy-restore-failures-range: iptables-restore failures per hour in kube-proxy, per node
    "kubeproxy_sync_proxy_rules_iptables_restore_failures_total": RangeSeries(
        "kube-proxy-restore-failures-range",
        "sum by (instance) (rate(kubeproxy_sync_proxy_rules_iptables_restore_failures_total{<instance>}[<window>]))"
        " * 3600", "per-hour", counter=True),
    # node-conditions-range: the nodes' conditions in a bad state (a pressure true, Ready false or Unknown)
    "kube_node_status_condition": RangeSeries(
        "node-conditions-range", f"count by (node, condition, status) ({_BAD_CONDITION})", "count"),
    # node-unschedulable-range: whether each node is cordoned
    "kube_node_spec_unschedulable": RangeSeries(
        "node-unschedulable-range", "sum by (node) (kube_node_spec_unschedulable{<node>})", "count"),
    # gpu-allocatable-range: GPUs each node offers the scheduler (the device plugin's healthy count)
    'kube_node_status_allocatable{resource="nvidia_com_gpu"}': RangeSeries(
        "gpu-allocatable-range",
        'sum by (node) (kube_node_status_allocatable{<node>,resource="nvidia_com_gpu"})', "count"),

    # ---- the GPUs (dcgm-exporter) ------------------------------------------------------------------------------
    # gpu-xid-range: the last Xid per GPU (always: its history gives every code of the window)
    "DCGM_FI_DEV_XID_ERRORS": RangeSeries("gpu-xid-range", "DCGM_FI_DEV_XID_ERRORS{<gpus>}", "count", always=True),
    # gpu-util-range: GPU utilisation per GPU (always: the shape of a busy or idle GPU)
    "DCGM_FI_DEV_GPU_UTIL": RangeSeries("gpu-util-range", "DCGM_FI_DEV_GPU_UTIL{<gpus>}", "percent", always=True),
    # gpu-fb-used-ratio-range: framebuffer used over used + free, per GPU
    "DCGM_FI_DEV_FB_USED": RangeSeries(
        "gpu-fb-used-ratio-range",
        f"{_by_gpu('DCGM_FI_DEV_FB_USED')} / ({_by_gpu('DCGM_FI_DEV_FB_USED')} + {_by_gpu('DCGM_FI_DEV_FB_FREE')})",
        "ratio"),
    # gpu-temp-range: GPU temperature per GPU
    "DCGM_FI_DEV_GPU_TEMP": RangeSeries("gpu-temp-range", _by_gpu("DCGM_FI_DEV_GPU_TEMP"), "celsius"),
    # gpu-sm-active-range: the share of time SMs had work, per GPU
    "DCGM_FI_PROF_SM_ACTIVE": RangeSeries("gpu-sm-active-range", _by_gpu("DCGM_FI_PROF_SM_ACTIVE"), "ratio"),
    # gpu-dram-active-range: the share of time device memory was busy, per GPU
    "DCGM_FI_PROF_DRAM_ACTIVE": RangeSeries("gpu-dram-active-range", _by_gpu("DCGM_FI_PROF_DRAM_ACTIVE"), "ratio"),
    # gpu-tensor-active-range: the share of time the tensor pipes were busy, per GPU
    "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE": RangeSeries(
        "gpu-tensor-active-range", _by_gpu("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE"), "ratio"),
    # gpu-pcie-rx-range: bytes per second the GPU receives over PCIe (host-to-device copies)
    "DCGM_FI_PROF_PCIE_RX_BYTES": RangeSeries(
        "gpu-pcie-rx-range", _by_gpu("DCGM_FI_PROF_PCIE_RX_BYTES"), "bytes-per-second"),
    # gpu-ecc-dbe-range: new double-bit (uncorrectable) ECC errors per hour, per GPU
    "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL": RangeSeries(
        "gpu-ecc-dbe-range",
        "sum by (Hostname, gpu) (rate(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{<gpus>}[<window>])) * 3600", "per-hour",
        counter=True),
    # gpu-nvlink-crc-range: NVLink flow-control CRC errors per hour, per GPU
    "DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL": RangeSeries(
        "gpu-nvlink-crc-range",
        "sum by (Hostname, gpu) (rate(DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{<gpus>}[<window>])) * 3600",
        "per-hour", counter=True),
    # gpu-pcie-replays-range: PCIe replays (link-level retries) per hour, per GPU
    "DCGM_FI_DEV_PCIE_REPLAY_COUNTER": RangeSeries(
        "gpu-pcie-replays-range",
        "sum by (Hostname, gpu) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{<gpus>}[<window>])) * 3600", "per-hour",
        counter=True),

    # ---- the cluster (a pending pod has no node yet; CoreDNS and the scheduler serve everyone) ----------------------
    # dns-p99-range: CoreDNS's 99th-percentile response time
    "coredns_dns_request_duration_seconds_bucket": RangeSeries(
        "dns-p99-range",
        "histogram_quantile(0.99, sum by (le) (rate(coredns_dns_request_duration_seconds_bucket[<window>])))",
        "seconds", counter=True),
    # dns-error-ratio-range: CoreDNS answers that were SERVFAIL or NXDOMAIN, over all answers
    "coredns_dns_responses_total": RangeSeries(
        "dns-error-ratio-range",
        'sum(rate(coredns_dns_responses_total{rcode=~"SERVFAIL|NXDOMAIN"}[<window>])) / '
        "sum(rate(coredns_dns_responses_total[<window>]))", "ratio", counter=True),
    # gpu-free-range: GPUs allocatable and not requested, on the emptiest node and in the whole cluster
    'kube_pod_container_resource_requests{resource="nvidia_com_gpu"}': RangeSeries(
        "gpu-free-range",
        f'label_replace(max({_FREE_GPUS}), "series", "most on one node", "", "") or '
        f'label_replace(sum({_FREE_GPUS}), "series", "whole cluster", "", "")', "count"),
    # requested-share-range: CPU and memory requested by running and pending pods over what nodes offer
    "kube_pod_container_resource_requests": RangeSeries(
        "requested-share-range",
        'sum by (resource) (kube_pod_container_resource_requests{resource=~"cpu|memory"} * on (namespace, pod) '
        'group_left () max by (namespace, pod) (kube_pod_status_phase{phase=~"Pending|Running"} == 1)) / '
        'sum by (resource) (kube_node_status_allocatable{resource=~"cpu|memory"})', "ratio"),
    # gpu-unhealthy-range: GPUs the device plugin withholds as unhealthy (capacity minus allocatable), cluster-wide
    'kube_node_status_capacity{resource="nvidia_com_gpu"}': RangeSeries(
        "gpu-unhealthy-range",
        'sum(kube_node_status_capacity{resource="nvidia_com_gpu"}) - '
        'sum(kube_node_status_allocatable{resource="nvidia_com_gpu"})', "count"),
    # gpus-idle-allocated-range: GPUs held by a pod yet under 5% busy, cluster-wide (dcgm-exporter's pod labels)
    'DCGM_FI_DEV_GPU_UTIL{pod!=""}': RangeSeries(
        "gpus-idle-allocated-range", 'count(DCGM_FI_DEV_GPU_UTIL{pod!=""} < 5)', "count"),
    # node-taints-range: how many nodes carry each NoSchedule / NoExecute taint
    "kube_node_spec_taint": RangeSeries(
        "node-taints-range", 'count by (key, effect) (kube_node_spec_taint{effect=~"NoSchedule|NoExecute"})',
        "count"),
    # pressure-nodes-range: how many nodes report each pressure condition
    'kube_node_status_condition{condition=~".*Pressure"}': RangeSeries(
        "pressure-nodes-range",
        'count by (condition) (kube_node_status_condition{condition=~".*Pressure",status="true"} == 1)', "count"),
    # unschedulable-by-plugin-range: pods the scheduler cannot place, by the plugin that turned them away
    "scheduler_unschedulable_pods": RangeSeries(
        "unschedulable-by-plugin-range", "sum by (plugin) (scheduler_unschedulable_pods)", "count"),
    # preemption-attempts-range: the scheduler's preemption attempts per hour
    "scheduler_preemption_attempts_total": RangeSeries(
        "preemption-attempts-range", "sum(rate(scheduler_preemption_attempts_total[<window>])) * 3600", "per-hour",
        counter=True),
    # autoscaler-unschedulable-range: pods the cluster autoscaler sees as unschedulable, by its own classification
    "cluster_autoscaler_unschedulable_pods_count": RangeSeries(
        "autoscaler-unschedulable-range", "sum by (type) (cluster_autoscaler_unschedulable_pods_count)", "count"),
}
