"""DCGM profiling and PCIe rules, request-failure rules, and the PromQL shapes that carry them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.metrics import prometheus_api, prometheus_text

GPU = 'gpu="0",UUID="GPU-1",Hostname="n1"'


def scrape(text: str) -> dict[str, object]:
    result = prometheus_text.parse(Artifact(id="m", kind=ArtifactKind.PROMETHEUS_METRICS, content=text))
    assert result.problems == []
    return {f.name: f.value for f in result.facts}


def query(promql: str, result: list[dict[str, Any]]) -> ParseResult:
    body = {"status": "success", "data": {"resultType": "vector", "result": result}}
    return prometheus_api.parse(Artifact(id="q", kind=ArtifactKind.PROMETHEUS_QUERY, command=promql,
                                         content=json.dumps(body, indent=2)))


def test_profiling_fields_are_ratios_and_percentages_are_scaled() -> None:
    got = scrape(f"DCGM_FI_PROF_SM_ACTIVE{{{GPU}}} 0.21\nDCGM_FI_PROF_DRAM_ACTIVE{{{GPU}}} 82\n"
                 f"DCGM_FI_PROF_PIPE_TENSOR_ACTIVE{{{GPU}}} 0\n")
    assert got == {"gpu.sm_active_ratio": 0.21, "gpu.dram_active_ratio": 0.82, "gpu.tensor_active_ratio": 0.0}


@pytest.mark.parametrize(("rx", "gen", "width", "max_width", "saturation", "degraded"), [
    ("2.9e10", 4, 16, 16, 0.9205, False),  # 29 GB/s on a Gen4 x16 link (31.5 GB/s)
    ("7.2e9", 4, 4, 16, 0.9142, True),  # a link trained at x4 is full at a quarter of that
])
def test_pcie_saturation_needs_the_link(rx: str, gen: int, width: int, max_width: int, saturation: float,
                                        degraded: bool) -> None:
    got = scrape(f"DCGM_FI_PROF_PCIE_RX_BYTES{{{GPU}}} {rx}\nDCGM_FI_DEV_PCIE_LINK_GEN{{{GPU}}} {gen}\n"
                 f"DCGM_FI_DEV_PCIE_LINK_WIDTH{{{GPU}}} {width}\n"
                 f"DCGM_FI_DEV_PCIE_MAX_LINK_WIDTH{{{GPU}}} {max_width}\n")
    assert got["gpu.pcie_rx_saturation"] == saturation
    assert got["gpu.pcie_link_degraded"] is degraded


def test_pcie_bytes_without_the_link_say_nothing() -> None:
    assert scrape(f"DCGM_FI_PROF_PCIE_RX_BYTES{{{GPU}}} 2.9e10\n") == {}


def test_istio_counters_give_the_ratio_and_the_failing_version() -> None:
    got = scrape('istio_requests_total{destination_version="v1",response_code="200"} 95000\n'
                 'istio_requests_total{destination_version="v1",response_code="503"} 20\n'
                 'istio_requests_total{destination_version="v2",response_code="200"} 9000\n'
                 'istio_requests_total{destination_version="v2",response_code="500"} 1100\n')
    assert got == {"http.error_ratio": 0.0107, "http.failing_version": "v2"}


def test_errors_on_every_version_name_no_version() -> None:
    got = scrape('istio_requests_total{destination_version="v1",response_code="500"} 50\n'
                 'istio_requests_total{destination_version="v1",response_code="200"} 950\n'
                 'istio_requests_total{destination_version="v2",response_code="500"} 60\n'
                 'istio_requests_total{destination_version="v2",response_code="200"} 940\n')
    assert "http.failing_version" not in got and got["http.error_ratio"] == 0.055


def test_triton_and_nginx_counters() -> None:
    assert scrape('nv_inference_request_success{model="m"} 960\nnv_inference_request_failure{model="m"} 40\n') == {
        "http.error_ratio": 0.04}
    assert scrape('nginx_ingress_controller_requests{service="cart",status="200"} 80\n'
                  'nginx_ingress_controller_requests{service="cart",status="502"} 20\n') == {"http.error_ratio": 0.2}
    assert scrape('nv_inference_request_success{model="m"} 960\n') == {}  # no failure counter: unknown, not 0


@pytest.mark.parametrize(("promql", "fact"), [
    ('sum(rate(istio_requests_total{response_code=~"5.."}[5m])) / sum(rate(istio_requests_total[5m]))',
     "http.error_ratio"),
    ('sum(rate(nginx_ingress_controller_requests{status=~"5.."}[5m]))'
     " / sum(rate(nginx_ingress_controller_requests[5m]))",
     "http.error_ratio"),
    ("sum(rate(nv_inference_request_failure[5m])) / sum(rate(nv_inference_request_success[5m]))", "http.error_ratio"),
    ("sum(rate(container_cpu_usage_seconds_total[5m])) / sum(kube_pod_container_resource_limits{resource=\"cpu\"})",
     "cpu.busy_ratio"),
    ('avg by (instance) (rate(node_cpu_seconds_total{mode="iowait"}[5m]))', "cpu.iowait_ratio"),
])
def test_ratio_queries(promql: str, fact: str) -> None:
    result = query(promql, [{"metric": {}, "value": [1, "0.25"]}])
    assert [(f.name, f.value) for f in result.facts] == [(fact, 0.25)]


def test_idle_pods_from_a_per_pod_rate() -> None:
    promql = 'sum by (pod) (rate(nv_inference_request_success{namespace="s"}[5m]))'
    result = query(promql, [{"metric": {"pod": "a"}, "value": [1, "140"]}, {"metric": {"pod": "b"}, "value": [1, "0"]}])
    assert {f.name: f.value for f in result.facts} == {"traffic.idle_pods": ["b"]}
    busy = query(promql, [{"metric": {"pod": "a"}, "value": [1, "140"]}, {"metric": {"pod": "b"}, "value": [1, "3"]}])
    assert {f.name: f.value for f in busy.facts} == {"traffic.idle_pods": []}
    nobody = query(promql, [{"metric": {"pod": "a"}, "value": [1, "0"]}, {"metric": {"pod": "b"}, "value": [1, "0"]}])
    assert nobody.facts == []  # no traffic at all is not one idle replica


def test_versions_from_a_summed_rate() -> None:
    promql = "sum by (destination_version, response_code) (rate(istio_requests_total[5m]))"
    result = query(promql, [
        {"metric": {"destination_version": "v1", "response_code": "200"}, "value": [1, "1843"]},
        {"metric": {"destination_version": "v2", "response_code": "200"}, "value": [1, "182"]},
        {"metric": {"destination_version": "v2", "response_code": "500"}, "value": [1, "22"]}])
    assert {f.name: f.value for f in result.facts}["http.failing_version"] == "v2"


def test_gpu_util_of_a_mig_instance_is_not_a_reading() -> None:
    # dcgm-exporter labels a MIG instance's series with GPU_I_PROFILE and GPU_I_ID; DCGM_FI_DEV_GPU_UTIL reads 0 there
    mig = f'{GPU},GPU_I_PROFILE="1g.10gb",GPU_I_ID="3"'
    got = scrape(f"DCGM_FI_DEV_GPU_UTIL{{{mig}}} 0\nDCGM_FI_DEV_FB_USED{{{mig}}} 7000\n"
                 f"DCGM_FI_DEV_FB_FREE{{{mig}}} 2800\n")
    assert "gpu.util_percent" not in got
    assert scrape(f"DCGM_FI_DEV_GPU_UTIL{{{GPU}}} 0\n")["gpu.util_percent"] == 0.0


def test_dcgm_pcie_replay_counter_is_the_nvml_count() -> None:
    # Finding 29.3: dcgm-exporter's field 202 is NVML's replay counter, so it gives the nvml snapshot's fact.
    got = scrape(f'DCGM_FI_DEV_PCIE_REPLAY_COUNTER{{{GPU}}} 0\n'
                 'DCGM_FI_DEV_PCIE_REPLAY_COUNTER{gpu="1",UUID="GPU-2",Hostname="n1"} 212\n')
    assert got == {"gpu.pcie_replays": 212}
    live = query('max by (Hostname, gpu) (DCGM_FI_DEV_PCIE_REPLAY_COUNTER{Hostname="n1"})',
                 [{"metric": {"Hostname": "n1", "gpu": "3"}, "value": [1700000000, "97"]}])
    assert [(f.name, f.value) for f in live.facts] == [("gpu.pcie_replays", 97)]


def test_a_replay_rate_is_not_read_as_the_count() -> None:
    # The chart's series is replays per hour: a rate, not the counter's value.
    live = query('sum by (Hostname, gpu) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{Hostname="n1"}[5m])) * 3600',
                 [{"metric": {"Hostname": "n1", "gpu": "3"}, "value": [1700000000, "4.5"]}])
    assert not [f for f in live.facts if f.name == "gpu.pcie_replays"]
