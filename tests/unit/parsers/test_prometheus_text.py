"""Exposition text (a scrape) -> samples -> GPU, container, node, DNS and Triton facts."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.metrics import prometheus_text
from collectors.parsers.metrics.metric_facts import THROTTLE_BITS, derive
from collectors.parsers.metrics.promql_samples import Sample, parse_exposition, parse_sample

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "prometheus"

Row = tuple[str, object, int, int]


def read(text: str) -> tuple[set[Row], list[str]]:
    result = prometheus_text.parse(Artifact(id="p1", kind=ArtifactKind.PROMETHEUS_METRICS, content=text))
    facts = {(f.name, tuple(f.value) if isinstance(f.value, list) else f.value, f.citation.start, f.citation.end)
             for f in result.facts}
    return facts, result.problems


FIXTURE_CASES: list[tuple[str, set[Row]]] = [
    ("dcgm_exporter.prom", {
        # Which GPU is which, each once at its first series (collectors/parsers/gpu/gpu_ids.py).
        ("gpu.identities", ("uuid=gpu-5a1e3c7b-2f4d-9e61-b0c2-7d8e9f0a1b2c bus=0000:1a:00",), 3, 3),
        ("gpu.identities", ("uuid=gpu-c83d1a92-77e0-4b5f-a1d3-0e9f8c7b6a54 bus=0000:2b:00",), 4, 4),
        ("gpu.util_percent", 97.0, 31, 31),
        ("gpu.fb_used_ratio", 0.9781, 51, 55),  # 79302 / (79302 + 1187 free + 591 reserved)
        ("gpu.temp_c", 84.0, 15, 15),
        ("xid.codes", (79,), 48, 48),
        ("xid.primary_codes", (79,), 48, 48),
        ("gpu.ecc_dbe", 2, 68, 68),
        ("gpu.ecc_sbe", 14, 64, 64),
        ("gpu.throttle_reasons", ("power",), 71, 71),  # 68 = 0x44: SW power cap + HW thermal
        ("gpu.throttle_reasons", ("thermal",), 71, 71),
        ("gpu.row_remap_failed", False, 83, 83),
        ("gpu.pcie_replays", 0, 27, 27),  # DCGM field 202, NVML's replay counter (finding 29.3)
        ("gpu.gr_engine_active_ratio", 0.9682, 87, 87),  # profiling fields: the GPU really is busy
        ("gpu.tensor_active_ratio", 0.5129, 91, 91),
        ("gpu.dram_active_ratio", 0.4311, 95, 95),
    }),
    ("node_exporter_conntrack.prom", {
        ("conntrack.usage_ratio", 0.99, 27, 30),  # 259522 / 262144
        ("node.memory_available_ratio", 0.0625, 21, 24),  # 2 GiB / 32 GiB
        ("node.cpu_steal_ratio", 0.041, 3, 18),
        ("conntrack.drops", 2381, 33, 39),  # drop + early_drop + insert_failed
    }),
    ("kube_cadvisor.prom", {
        ("memory.working_set_ratio", 0.9873, 4, 9),  # etl-0; pod-level and POD rows are skipped
        ("container.memory_limit_bytes", 4294967296, 32, 32),
        ("cpu.throttled_ratio", 0.42, 14, 18),  # etl-1: 50400 / 120000
        ("container.last_terminated.reason", "OOMKilled", 21, 21),
        ("container.last_terminated.exit_code", 137, 24, 24),
        ("container.restart_count", 7, 27, 27),
        ("hpa.at_max", True, 35, 38),
        ("hpa.max_replicas", 50, 35, 35),
    }),
    ("coredns_triton.om", {
        ("dns.error_ratio", 0.1579, 3, 5),  # (14120 + 1669) / 100000
        ("latency.queue_share", 0.7, 8, 11),  # 8.4e8 / 1.2e9
    }),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_scrapes(name: str, expected: set[Row]) -> None:
    facts, problems = read((FIXTURES / name).read_text(encoding="utf-8"))
    assert facts == expected
    assert problems == []


SAMPLE_CASES: list[tuple[str, tuple[str, dict[str, str], float, float | None] | None]] = [
    ("up 1", ("up", {}, 1.0, None)),
    ('http_requests_total{method="post",code="200"} 1027 1395066363000',
     ("http_requests_total", {"method": "post", "code": "200"}, 1027.0, 1395066363000.0)),
    (r'msdos_file_access_time_seconds{path="C:\\DIR\\FILE.TXT",error="Cannot find file:\n\"FILE.TXT\""} 1.458255915e9',
     ("msdos_file_access_time_seconds", {"path": "C:\\DIR\\FILE.TXT", "error": 'Cannot find file:\n"FILE.TXT"'},
      1.458255915e9, None)),
    ('metric_without_timestamp_and_labels{} 12.47', ("metric_without_timestamp_and_labels", {}, 12.47, None)),
    ('rpc_duration_seconds{quantile="0.5",} 4773', ("rpc_duration_seconds", {"quantile": "0.5"}, 4773.0, None)),
    ('latency_bucket{le="+Inf"} 17 1795327382.123 # {trace_id="KOO5S4vxi0o"} 0.67',
     ("latency_bucket", {"le": "+Inf"}, 17.0, 1795327382.123)),
    ('{"my.dotted.metric", "label.with.dots"="x"} -Inf', ("my.dotted.metric", {"label.with.dots": "x"}, -math.inf,
                                                          None)),
    ("\tindented_metric 3\t", ("indented_metric", {}, 3.0, None)),
    ('broken{a="1" 3', None),
    ('broken{a=1} 3', None),
    ("name not_a_number", None),
    ("name 1 2 3", None),
    ("name 1_000", None),
    ("$ curl -s localhost:9400/metrics", None),
]


@pytest.mark.parametrize(("line", "expected"), SAMPLE_CASES)
def test_parse_sample(line: str, expected: tuple[str, dict[str, str], float, float | None] | None) -> None:
    sample = parse_sample(line)
    if expected is None:
        assert sample is None
        return
    assert sample is not None
    assert (sample.name, dict(sample.labels), sample.value, sample.timestamp) == expected


def test_nan_sample_parses() -> None:
    sample = parse_sample("nv_gpu_utilization NaN")
    assert sample is not None and math.isnan(sample.value)


def test_exposition_types_eof_and_bad_lines() -> None:
    text = "# HELP a x\n# TYPE a counter\na_total 3\nnot a sample\n# EOF\nb 4\n"
    exposition = parse_exposition(text.split("\n"))
    assert [(s.name, s.value, s.line) for s in exposition.samples] == [("a_total", 3.0, 3)]
    assert exposition.types == {"a": "counter"}
    assert exposition.bad_lines == [4]
    assert exposition.saw_eof


def test_bad_lines_are_reported_not_raised() -> None:
    facts, problems = read('DCGM_FI_DEV_GPU_TEMP{gpu="0"} 71\n$ curl -s gpu-node-2:9400/metrics\n')
    assert facts == {("gpu.temp_c", 71.0, 1, 1)}
    assert problems == ["1 line(s) are not exposition samples and were skipped (first: line 2)"]


@pytest.mark.parametrize(("mask", "reasons"), [
    (0, []), (0x1, []), (0x2, []), (0x4, ["power"]), (0x8, ["hw-slowdown"]), (0x20, ["sw-thermal"]),
    (0x40, ["thermal"]), (0x80, ["power-brake"]), (0xE8, ["hw-slowdown", "sw-thermal", "thermal", "power-brake"]),
])
def test_throttle_bits(mask: int, reasons: list[str]) -> None:
    facts = derive([Sample("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", {"gpu": "0"}, float(mask), line=1)])
    throttle = [f for f in facts if f.name == "gpu.throttle_reasons"]
    assert throttle, "a mask that was read is evidence even when no reported bit is set"
    assert [r for f in throttle for r in f.value] == reasons
    assert set(THROTTLE_BITS) == {1 << bit for bit in range(9)}


def test_xid_45_is_not_a_primary_code() -> None:
    facts = derive([Sample("DCGM_FI_DEV_XID_ERRORS", {"gpu": "0"}, 45.0, line=3)])
    assert [(f.name, f.value) for f in facts] == [("xid.codes", [45]), ("xid.primary_codes", [])]


def test_hpa_below_max_is_an_observed_false() -> None:
    facts = derive([
        Sample("kube_horizontalpodautoscaler_spec_max_replicas", {"horizontalpodautoscaler": "a"}, 50.0, line=1),
        Sample("kube_horizontalpodautoscaler_status_current_replicas", {"horizontalpodautoscaler": "a"}, 10.0, line=2),
    ])
    assert {(f.name, f.value, f.start, f.end) for f in facts} == {("hpa.at_max", False, 1, 2),
                                                                  ("hpa.max_replicas", 50, 1, 1)}


@pytest.mark.parametrize("text", ["", "\x00\x01garbage\n{[", "# TYPE x gauge\n", "nr_periods 100\nnr_throttled 40",
                                  'DCGM_FI_DEV_FB_USED{gpu="0"} 10', 'node_nf_conntrack_entries_limit 0\n'
                                  'node_nf_conntrack_entries 5'])
def test_garbage_and_partial_input_give_no_facts(text: str) -> None:
    facts, problems = read(text)
    assert facts == set()
    assert not [p for p in problems if p.startswith("internal:")]


def test_sniff() -> None:
    assert prometheus_text.sniff((FIXTURES / "dcgm_exporter.prom").read_text(encoding="utf-8")) == 90
    assert prometheus_text.sniff('DCGM_FI_DEV_GPU_UTIL{gpu="0"} 99') == 90
    assert prometheus_text.sniff("nr_periods 100\nnr_throttled 40\nthrottled_usec 1000") == 0  # cgroup cpu.stat
    assert prometheus_text.sniff("") == 0


def test_zero_evidence_metrics_are_facts_too() -> None:
    """Zero drops, a zero throttle mask and a lone Xid 45 are evidence that rules hypotheses out."""
    from collectors.models import Artifact, ArtifactKind
    from collectors.parsers.metrics import prometheus_text

    text = "\n".join([
        'node_nf_conntrack_stat_drop{instance="n1:9100"} 0',
        'node_nf_conntrack_stat_early_drop{instance="n1:9100"} 0',
        'node_nf_conntrack_stat_insert_failed{instance="n1:9100"} 0',
        'DCGM_FI_DEV_CLOCK_THROTTLE_REASONS{gpu="0",Hostname="gpu-node-1"} 0',
        'DCGM_FI_DEV_XID_ERRORS{gpu="0",Hostname="gpu-node-1"} 45',
    ])
    result = prometheus_text.parse(Artifact(id="m", kind=ArtifactKind.PROMETHEUS_METRICS, content=text))
    facts = {(f.name, str(f.value), f.citation.label()) for f in result.facts}
    assert facts == {
        ("conntrack.drops", "0", "m:1-3"),
        ("gpu.throttle_reasons", "[]", "m:4"),
        ("xid.codes", "[45]", "m:5"),
        ("xid.primary_codes", "[]", "m:5"),
    }
