"""The Prometheus source against a real Prometheus (Debian's), backfilled with an hour of synthetic history.

One server serves the whole module: an OOM-bound trainer on a GPU node with an Xid 79, a CPU-throttled
web pod with a latency histogram and rising traffic, a node whose conntrack table is nearly full,
CoreDNS, and pods whose names need escaping. Decoys outside each scope prove the queries filter.
"""

from __future__ import annotations

import json
import socket
import time
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Callable
from contextlib import closing
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest

from bot.render.chart import pick_declared, render_report_chart
from collectors.catalogs.queries import RANGE_METRICS, load_catalog, split_key
from collectors.factset import FactSet
from collectors.live.base import NodeRef, PodRef, Scope, SourceResult, Window
from collectors.live.prom_client import PromClient
from collectors.live.prom_plan import Query, build_plan, chart_queries, series_query
from collectors.live.prometheus import collect_prometheus, run_queries
from collectors.live.promql import MAX_POINTS, points, range_step
from collectors.models import Artifact, ArtifactKind, Missing
from collectors.parsers.registry import parse_artifact
from collectors.query_facts import declared_facts
from playbooks.engine import template_variables
from playbooks.loader import load_playbooks
from playbooks.model import Chart
from playbooks.report import ChartSpec, Finding, HypothesisResult, Report, Target
from playbooks.templates import render
from tests.harness.openmetrics import History, per_second, ramp, step_at
from tests.harness.prometheus import PromServer, free_port, require_binary, start_prometheus

GiB = 2**30
SPAN = 3600
ODD_POD = 'odd.pod+(1)"q'
BACKSLASH_POD = "back\\slash"
DECOY_POD = 'oddXpod1"q'  # what `odd.pod+(1)"q` would match if `.` and `+` were left unescaped
CONTROL_POD = "tab\tbell\x07"  # not a valid pod name, but any label value must survive the string escaping


def _two_rates(before: float, after: float, switch: float) -> Callable[[float], float]:
    """A counter at `before` per second until `switch`, then at `after`: traffic that went up."""
    return lambda t: before * t if t < switch else before * switch + after * (t - switch)


def _trainer(h: History) -> None:
    pod = {"namespace": "ml", "pod": "trainer-0"}
    h.gauge("container_memory_working_set_bytes", {**pod, "container": "main"}, ramp(2 * GiB, 7.95 * GiB, SPAN))
    # The pause container and the pod cgroup are larger; the queries must leave them out.
    h.gauge("container_memory_working_set_bytes", {**pod, "container": "POD"}, 9 * GiB)
    h.gauge("container_memory_working_set_bytes", {**pod, "container": ""}, 9 * GiB)
    limits = {**pod, "container": "main", "unit": "byte"}
    h.gauge("kube_pod_container_resource_limits", {**limits, "resource": "memory"}, 8 * GiB)
    h.gauge("kube_pod_container_resource_limits", {**limits, "resource": "cpu", "unit": "core"}, 4)
    h.gauge("kube_pod_container_status_last_terminated_reason", {**pod, "container": "main", "reason": "OOMKilled"}, 1)
    h.gauge("kube_pod_container_status_last_terminated_exitcode", {**pod, "container": "main"}, 137)
    h.counter("kube_pod_container_status_restarts", {**pod, "container": "main"}, 3)


def _gpus(h: History) -> None:
    for gpu, xid in (("0", 0.0), ("1", 79.0)):
        labels = {"gpu": gpu, "UUID": f"GPU-2-{gpu}", "Hostname": "gpu-node-2", "modelName": "NVIDIA H100 80GB HBM3"}
        h.gauge("DCGM_FI_DEV_XID_ERRORS", labels, step_at(0, xid, SPAN - 600))
        h.gauge("DCGM_FI_DEV_GPU_UTIL", labels, 97)
        h.gauge("DCGM_FI_DEV_FB_USED", labels, 79000)
        h.gauge("DCGM_FI_DEV_FB_FREE", labels, 1000)
        h.gauge("DCGM_FI_DEV_GPU_TEMP", labels, ramp(60, 91, SPAN))
        h.gauge("DCGM_FI_DEV_POWER_USAGE", labels, 650)
        h.gauge("DCGM_FI_DEV_CLOCK_THROTTLE_REASONS", labels, 0x40)  # HW thermal slowdown
        h.gauge("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", labels, 0)
        h.gauge("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", labels, 212 if gpu == "1" else 0)
        # No bundled query reads it: test_a_metric_is_added_by_one_query_file adds one.
        h.gauge("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", labels, 37 if gpu == "1" else 0)
    # Another node's Xid: not in any scope here.
    h.gauge("DCGM_FI_DEV_XID_ERRORS", {"gpu": "0", "UUID": "GPU-3-0", "Hostname": "gpu-node-3"}, 13)


def _web(h: History) -> None:
    pod = {"namespace": "shop", "pod": "checkout-7d9f-abcde"}
    cpu = {**pod, "container": "app"}
    h.counter("container_cpu_cfs_periods", cpu, per_second(10))
    h.counter("container_cpu_cfs_throttled_periods", cpu, per_second(4.2))
    h.gauge("container_memory_working_set_bytes", cpu, 300 * 2**20)
    h.counter("http_requests", {**pod, "code": "200"}, _two_rates(10, 40, SPAN / 2))
    h.histogram("http_request_duration_seconds", pod,
                {0.05: per_second(80), 0.25: per_second(95), 1.0: per_second(98), 2.5: per_second(100)})


def _conntrack(h: History) -> None:
    node = {"instance": "10.0.0.7:9100", "job": "node-exporter"}
    h.gauge("node_nf_conntrack_entries", node, ramp(100_000, 261_000, SPAN))
    h.gauge("node_nf_conntrack_entries_limit", node, 262_144)
    h.gauge("node_nf_conntrack_stat_drop", node, 12)
    h.gauge("node_nf_conntrack_stat_early_drop", node, 0)
    h.gauge("node_nf_conntrack_stat_insert_failed", node, 3)
    full = {"instance": "cpu-node-9:9100", "job": "node-exporter"}  # a full table on a node out of scope
    h.gauge("node_nf_conntrack_entries", full, 262_144)
    h.gauge("node_nf_conntrack_entries_limit", full, 262_144)


def _coredns(h: History) -> None:
    for rcode, rate in (("NOERROR", 95.0), ("SERVFAIL", 5.0)):
        h.counter("coredns_dns_responses", {"server": "dns://:53", "zone": ".", "rcode": rcode}, per_second(rate))
    h.histogram("coredns_dns_request_duration_seconds", {"server": "dns://:53", "zone": "."},
                {0.001: per_second(50), 0.01: per_second(98), 0.1: per_second(100)})


def _cluster_state(h: History) -> None:
    """kube-state-metrics for the joined and cluster-wide chart series: GPUs free per node, restarts with their
    node, the checkout HPA reaching its ceiling, and a Service whose Endpoints object has no address."""
    gpu = {"resource": "nvidia_com_gpu", "unit": "integer"}
    h.gauge("kube_node_status_allocatable", {**gpu, "node": "gpu-node-2"}, 8)
    h.gauge("kube_node_status_capacity", {**gpu, "node": "gpu-node-2"}, 8)
    h.gauge("kube_node_status_allocatable", {**gpu, "node": "gpu-node-4"}, 7)  # one GPU withheld as unhealthy
    h.gauge("kube_node_status_capacity", {**gpu, "node": "gpu-node-4"}, 8)
    running = {"namespace": "ml", "pod": "trainer-0"}
    h.gauge("kube_pod_container_resource_requests", {**running, **gpu, "container": "main", "node": "gpu-node-2"}, 6)
    h.gauge("kube_pod_status_phase", {**running, "phase": "Running"}, 1)
    h.gauge("kube_pod_status_phase", {**running, "phase": "Pending"}, 0)
    done = {"namespace": "ml", "pod": "done-0"}  # finished: its request holds no GPU
    h.gauge("kube_pod_container_resource_requests", {**done, **gpu, "container": "main", "node": "gpu-node-4"}, 8)
    h.gauge("kube_pod_status_phase", {**done, "phase": "Succeeded"}, 1)
    checkout = {"namespace": "shop", "pod": "checkout-7d9f-abcde"}
    h.counter("kube_pod_container_status_restarts", {**checkout, "container": "app"}, per_second(12 / 3600))
    h.gauge("kube_pod_info", {**checkout, "node": "cpu-node-1", "host_ip": "10.0.0.7"}, 1)
    hpa = {"namespace": "shop", "horizontalpodautoscaler": "checkout"}
    h.gauge("kube_horizontalpodautoscaler_status_current_replicas", hpa, step_at(4, 10, SPAN / 2))
    h.gauge("kube_horizontalpodautoscaler_spec_max_replicas", hpa, 10)
    h.gauge("kube_horizontalpodautoscaler_info", {**hpa, "scaletargetref_kind": "Deployment",
                                                  "scaletargetref_name": "checkout"}, 1)
    h.gauge("kube_endpoint_info", {"namespace": "shop", "endpoint": "checkout"}, 1)


def _odd_names(h: History) -> None:
    for name, size in ((ODD_POD, 1.0), (BACKSLASH_POD, 2.0), (DECOY_POD, 3.0), ("plain-0", 4.0), (CONTROL_POD, 5.0)):
        h.gauge("container_memory_working_set_bytes", {"namespace": "weird", "pod": name, "container": "c"},
                size * GiB)


def _history() -> History:
    # The history ends now: instant queries at its end see every series (Prometheus' 5-minute lookback).
    h = History(end=int(time.time()) // 30 * 30, span=SPAN, step=30)
    for add in (_trainer, _gpus, _web, _conntrack, _coredns, _cluster_state, _odd_names):
        add(h)
    return h


@pytest.fixture(scope="module")
def history() -> History:
    return _history()


def facts(result: SourceResult) -> dict[str, list[Any]]:
    """Every fact the parser reads from the artifacts, by name; no artifact may confuse it."""
    out: dict[str, list[Any]] = defaultdict(list)
    for artifact in result.artifacts:
        parsed = parse_artifact(artifact)
        assert parsed.problems == [], (artifact.id, parsed.problems)
        for fact in parsed.facts:
            out[fact.name].append(fact.value)
    return out


def by_id(result: SourceResult) -> dict[str, Artifact]:
    return {a.id: a for a in result.artifacts}


def series(artifact: Artifact) -> list[dict[str, Any]]:
    body = json.loads(artifact.content)
    assert body["status"] == "success"
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


TRAINER = Scope(namespace="ml", workload="job/trainer",
                pods=[PodRef(name="trainer-0", node="gpu-node-2", gpu_request=1, containers=["main"])],
                nodes=[NodeRef(name="gpu-node-2", gpu_capacity=8)])
HOUR = Window.last(timedelta(hours=1), now=datetime.now(UTC))  # for servers that never answer
CHECKOUT = Scope(namespace="shop", service="checkout",
                 pods=[PodRef(name="checkout-7d9f-abcde", node="cpu-node-1", containers=["app"])],
                 nodes=[NodeRef(name="cpu-node-1", internal_ip="10.0.0.7")])


def test_oom_bound_pod_reads_working_set_at_limit(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, TRAINER, history.window)
    assert result.missing == []
    found = facts(result)
    assert max(found["memory.working_set_ratio"]) == pytest.approx(7.95 / 8, abs=0.01)
    assert found["container.memory_limit_bytes"] == [8 * GiB]
    assert found["container.last_terminated.reason"] == ["OOMKilled"]
    assert found["container.last_terminated.exit_code"] == [137]
    assert found["container.restart_count"] == [3]
    assert found["memory.growing"] == [True]
    working_set = series(by_id(result)["prom-memory-working-set-range.json"])
    assert {s["metric"]["container"] for s in working_set} == {"main"}  # not POD, not the pod cgroup


# A metric the Prometheus parser does not know, added as one query file: its answer is read as the declared fact.
NEW_QUERY_FILE = """
queries:
  - name: gpu-nvlink-crc
    promql: max by (Hostname, gpu) (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL{<gpus>})
    value: {fact: gpu.nvlink_errors}
"""


def test_a_metric_is_added_by_one_query_file(prom: PromServer, history: History, tmp_path: Path) -> None:
    (tmp_path / "gpu-xid.yaml").write_text(NEW_QUERY_FILE, encoding="utf-8")
    catalog = load_catalog(tmp_path)
    result = collect_prometheus(prom.url, TRAINER, history.window, catalog=catalog)
    assert result.missing == []
    artifact = by_id(result)["prom-gpu-nvlink-crc.json"]
    assert artifact.command == ('max by (Hostname, gpu) (DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL'
                                '{Hostname="gpu-node-2"})')
    assert artifact.subject == "node/gpu-node-2"
    assert not [f for f in parse_artifact(artifact).facts if f.name == "gpu.nvlink_errors"]  # the parser: none
    declared = declared_facts(artifact, catalog)
    assert [(f.name, f.value, f.parser) for f in declared] == [("gpu.nvlink_errors", 37, "query_files")]
    assert declared_facts(artifact) == []  # the bundled files do not declare it


def test_artifacts_keep_query_and_evaluation_time(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, TRAINER, history.window)
    for artifact in result.artifacts:
        assert artifact.kind is ArtifactKind.PROMETHEUS_QUERY
        assert artifact.source == "prometheus"
        assert artifact.captured_at == history.window.until
        assert artifact.id.startswith("prom-") and artifact.id.endswith(".json")
        assert artifact.content.startswith('{\n  "status": "success",\n  "data": {')
        body = json.loads(artifact.content)
        stamps = [s["value"][0] for s in body["data"]["result"] if "value" in s]
        assert all(stamp == history.end for stamp in stamps), artifact.id  # evaluated at window.until
    ratio = by_id(result)["prom-memory-working-set-ratio.json"]
    assert ratio.command.startswith('max_over_time(container_memory_working_set_bytes{namespace="ml",pod="trainer-0"')
    assert ratio.subject == "pod/ml/trainer-0"
    assert len({a.id for a in result.artifacts}) == len(result.artifacts)


def test_gpu_node_with_xid_79(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, TRAINER, history.window)
    found = facts(result)
    assert {code for codes in found["xid.codes"] for code in codes} == {79}  # gpu-node-3's Xid 13 is out of scope
    assert {code for codes in found["xid.primary_codes"] for code in codes} == {79}
    assert found["gpu.throttle_reasons"] == [["thermal"]]
    assert found["gpu.temp_c"] == [pytest.approx(91, abs=0.6)]
    assert found["gpu.fb_used_ratio"] == [pytest.approx(79 / 80, abs=0.001)]
    assert found["gpu.ecc_dbe"] == [0]
    assert series(by_id(result)["prom-gpu-power-max.json"])[0]["value"][1] == "650"


def test_throttled_pod_latency_and_traffic(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, CHECKOUT, history.window)
    assert result.missing == []
    found = facts(result)
    assert found["cpu.throttled_ratio"] == [pytest.approx(0.42, abs=0.001)]
    # The 99th percentile falls halfway between the 1 s bucket (98%) and the 2.5 s one (100%).
    assert found["latency.p99_seconds"] == [pytest.approx(1.75, abs=0.01)]
    assert found["traffic.increase_ratio"] == [pytest.approx(4.0, rel=0.05)]
    assert found["dns.error_ratio"] == [pytest.approx(0.05, abs=0.001)]
    assert found["dns.p99_seconds"] == [pytest.approx(0.055, abs=0.001)]
    # A pod without GPUs gets no DCGM queries.
    assert not [a.id for a in result.artifacts if a.id.startswith("prom-gpu")]


def test_conntrack_near_full_on_the_pods_node(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, CHECKOUT, history.window)
    found = facts(result)
    # Matched by the node's address (instance="10.0.0.7:9100"); the full table on cpu-node-9 is out of scope.
    assert found["conntrack.usage_ratio"] == [pytest.approx(261_000 / 262_144, abs=0.0001)]
    assert found["conntrack.drops"] == [15]


def test_pod_names_with_regex_metacharacters_and_quotes(prom: PromServer, history: History) -> None:
    scope = Scope(namespace="weird", pods=[PodRef(name=n) for n in (ODD_POD, BACKSLASH_POD, CONTROL_POD)])
    result = collect_prometheus(prom.url, scope, history.window)
    assert result.missing == []  # every query parsed
    working_set = series(by_id(result)["prom-memory-working-set-range.json"])
    assert {s["metric"]["pod"] for s in working_set} == {ODD_POD, BACKSLASH_POD, CONTROL_POD}
    one = collect_prometheus(prom.url, Scope(namespace="weird", pods=[PodRef(name=ODD_POD)]), history.window)
    assert {s["metric"]["pod"] for s in series(by_id(one)["prom-memory-working-set-range.json"])} == {ODD_POD}


def test_a_scope_of_many_pods_is_sent_as_a_post(prom: PromServer, history: History) -> None:
    pods = [PodRef(name=f"trainer-{i}-{'x' * 40}") for i in range(1, 120)] + [PodRef(name="trainer-0")]
    result = collect_prometheus(prom.url, Scope(namespace="ml", pods=pods), history.window)
    assert result.missing == []
    ratio = by_id(result)["prom-memory-working-set-ratio.json"]
    assert len(ratio.command) > 3000  # longer than a GET URL should carry
    assert [s["metric"]["pod"] for s in series(ratio)] == ["trainer-0"]


def test_thirty_day_window_stays_within_the_point_limit(prom: PromServer, history: History) -> None:
    until = history.window.until
    month = Window(since=until - timedelta(days=30), until=until)
    result = collect_prometheus(prom.url, TRAINER, month)
    assert result.missing == []
    step = range_step(month.seconds)
    assert points(month.seconds, step) <= MAX_POINTS
    for artifact in (a for a in result.artifacts if a.id.endswith("-range.json")):
        for item in series(artifact):
            stamps = [v[0] for v in item["values"]]
            assert len(stamps) <= MAX_POINTS
            assert all(b - a == step for a, b in pairwise(stamps))


def test_the_real_server_enforces_the_limit_range_step_respects(prom: PromServer, history: History) -> None:
    until = history.window.until
    month = Window(since=until - timedelta(days=30), until=until)
    finest = range_step(month.seconds, target=MAX_POINTS)
    too_fine = month.seconds // MAX_POINTS  # one more point than Prometheus allows
    queries = [Query("finest", "DCGM_FI_DEV_GPU_UTIL", "cluster", finest),
               Query("too-fine", "DCGM_FI_DEV_GPU_UTIL", "cluster", too_fine)]
    with closing(PromClient(prom.url, 5.0, None)) as client:
        result = run_queries(client, queries, month)
    assert [a.id for a in result.artifacts] == ["prom-finest.json"]
    assert [m.source for m in result.missing] == ["prometheus:too-fine"]
    assert "exceeded maximum resolution of 11,000 points" in result.missing[0].reason


def test_bad_query_is_a_missing_entry_naming_it(prom: PromServer, history: History) -> None:
    broken = Query("broken", "sum(rate(container_cpu_cfs_periods_total[5m])", "cluster")
    good = Query("fine", "vector(1)", "cluster")
    with closing(PromClient(prom.url, 5.0, None)) as client:
        result = run_queries(client, [broken, good], history.window)
    assert [a.id for a in result.artifacts] == ["prom-fine.json"]
    (missing,) = result.missing
    assert missing.source == "prometheus:broken"
    assert missing.reason.startswith("HTTP 400 bad_data: ")
    assert missing.reason.endswith(f"(query: {broken.promql})")


def test_prometheus_down_is_one_fast_missing_entry() -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    started = time.monotonic()
    result = collect_prometheus(url, TRAINER, HOUR)
    assert time.monotonic() - started < 2.0  # no 6-second retry
    assert result.artifacts == []
    reason = f"prometheus unreachable at {url}: connection refused"
    assert result.missing == [Missing(source="prometheus", reason=reason)]


def test_prometheus_that_never_answers_times_out_once() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections into the backlog, never reads them
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        started = time.monotonic()
        result = collect_prometheus(url, CHECKOUT, HOUR, timeout=0.3)
    assert time.monotonic() - started < 2.0
    reason = f"prometheus unreachable at {url}: timed out after 0.3s"
    assert result.missing == [Missing(source="prometheus", reason=reason)]


def test_harness_cleans_up(tmp_path: Path) -> None:
    history = History(end=int(time.time()), span=120, step=30).gauge("up", {"job": "x"}, 1)
    with start_prometheus(tmp_path, history.render()) as server:
        assert server.data_dir.is_dir()
    assert not (tmp_path / "prometheus").exists()


def test_missing_binary_skips_on_a_laptop_and_fails_in_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"`no-such-prometheus` is not installed .*CI is unset"):
        require_binary("no-such-prometheus")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI must provide it"):
        require_binary("no-such-prometheus")


def test_live_triage_fetches_the_series_each_chart_declares(prom: PromServer, history: History) -> None:
    """Issue #13, point 8, against real Prometheus: the cpu-throttling chart plots the throttled ratio over the
    window (not request rate), and every series a playbook may chart is planned as a range query."""
    pending = Scope(namespace="ml", workload="job/trainer", pods=[PodRef(name="trainer-9", phase="Pending")])
    deployment = CHECKOUT.model_copy(update={"workload": "deployment/checkout"})
    planned = [q for scope in (TRAINER, deployment, pending) for key in RANGE_METRICS
               for q in chart_queries(scope, history.window, [key], build_plan(scope, history.window))]
    planned += [q for scope in (TRAINER, CHECKOUT) for q in build_plan(scope, history.window) if q.is_range]
    assert {RANGE_METRICS[key].query for key in RANGE_METRICS} <= {q.name for q in planned}
    assert {m for m in RANGE_METRICS if any(split_key(m)[0] in q.promql for q in planned if q.is_range)} == set(
        RANGE_METRICS)
    result = collect_prometheus(prom.url, CHECKOUT, history.window)
    artifacts = list(result.artifacts)
    chart = next(h.chart for p in load_playbooks() if p.spec.id == "latency" for h, _ in p.spec.walk()
                 if h.id == "cpu-throttling")
    assert isinstance(chart, Chart)
    spec = ChartSpec(metric=chart.metric, title=chart.title, unit=chart.unit, threshold=chart.threshold,
                     threshold_label=chart.threshold_label)
    picked = pick_declared(artifacts, spec)
    assert picked is not None
    artifact, lines = picked
    assert artifact.id == "prom-cpu-throttled-ratio-range.json"
    assert "http" not in artifact.command and "request" not in artifact.command
    values = [float(v) for s in lines for _, v in s["values"]]
    assert len(values) >= 10 and max(values) == pytest.approx(0.42, abs=0.01)
    lead = HypothesisResult(id="cpu-throttling", status="confirmed", score=0.97, claim="c", falsified_by="f",
                            chart=spec)
    report = Report(target=Target(service="checkout", namespace="shop"), symptoms=["latency"],
                    findings=[Finding(playbook="latency", title="t", hypotheses=[lead])], facts={}, artifacts=[])
    png = render_report_chart(report, artifacts)
    assert png is not None and png[:8] == b"\x89PNG\r\n\x1a\n"


def _catalog_queries(scope: Scope, window: Window) -> list[Query]:
    return [q for key in RANGE_METRICS if (q := series_query(RANGE_METRICS[key], scope, window)) is not None]


def test_every_catalog_query_is_promql_the_real_server_accepts(prom: PromServer, history: History) -> None:
    """Each template, filled in for targets with odd names, is a range query Prometheus runs (no 400)."""
    odd = Scope(namespace="weird", service='svc"q', workload="deployment/svc.v1",
                pods=[PodRef(name=ODD_POD, node="gpu-node-2", gpu_request=1)],
                nodes=[NodeRef(name="gpu-node-2", internal_ip="10.0.0.2", gpu_capacity=8)])
    queries = _catalog_queries(odd, history.window)
    assert {q.name for q in queries} == {s.query for s in RANGE_METRICS.values()}  # this target has them all
    with closing(PromClient(prom.url, 5.0, None)) as client:
        result = run_queries(client, queries, history.window)
    assert result.missing == []
    assert len(result.artifacts) == len(RANGE_METRICS)


def test_chart_series_read_the_targets_own_values(prom: PromServer, history: History) -> None:
    with closing(PromClient(prom.url, 5.0, None)) as client:
        result = run_queries(client, _catalog_queries(TRAINER, history.window) + _catalog_queries(CHECKOUT,
                             history.window), history.window)
    assert result.missing == []
    got = by_id(result)
    # The trainer's GPUs: framebuffer 79 of 80 GiB used, temperature rising to 91 °C; gpu-node-3 is not in scope.
    fb = series(got["prom-gpu-fb-used-ratio-range.json"])
    assert {s["metric"]["gpu"] for s in fb} == {"0", "1"} and {s["metric"]["Hostname"] for s in fb} == {"gpu-node-2"}
    assert float(fb[0]["values"][-1][1]) == pytest.approx(79 / 80)
    temps = [float(v) for s in series(got["prom-gpu-temp-range.json"]) for _, v in s["values"]]
    assert min(temps) < 65 and max(temps) == pytest.approx(91, abs=0.6)
    # The checkout pod's node (matched by its address): conntrack filling towards 261,000 of 262,144.
    conntrack = series(got["prom-conntrack-usage-ratio-range.json"])
    assert [s["metric"]["instance"] for s in conntrack] == ["10.0.0.7:9100"]
    ratios = [float(v) for _, v in conntrack[0]["values"]]
    assert ratios[0] < 0.5 and ratios[-1] == pytest.approx(261_000 / 262_144, abs=0.002)
    # CoreDNS: 5% of answers SERVFAIL, cluster-wide.
    dns = series(got["prom-dns-error-ratio-range.json"])
    assert float(dns[0]["values"][-1][1]) == pytest.approx(0.05, abs=0.001)


def test_a_chart_picker_sees_the_evidence_and_its_series_are_fetched(prom: PromServer, history: History) -> None:
    seen: list[str] = []

    def picker(artifacts: list[Artifact]) -> list[str]:
        seen.extend(a.id for a in artifacts)
        return ["DCGM_FI_DEV_GPU_TEMP", "node_nf_conntrack_entries", "DCGM_FI_DEV_XID_ERRORS", "no_such_series"]

    result = collect_prometheus(prom.url, TRAINER, history.window, charts=picker)
    assert result.missing == []
    assert "prom-gpu-xid-max.json" in seen and "prom-memory-working-set-ratio.json" in seen  # the first wave
    ids = [a.id for a in result.artifacts]
    assert ids.count("prom-gpu-xid-range.json") == 1  # already fetched by the first wave: not asked twice
    assert "prom-gpu-temp-range.json" in ids and "prom-conntrack-usage-ratio-range.json" in ids
    assert sum(1 for a in result.artifacts if json.loads(a.content)["data"]["resultType"] == "matrix") <= 20
    # The second wave adds no fact: the verdict is the first wave's.
    chart_only = [a for a in result.artifacts if a.id in ("prom-gpu-temp-range.json",
                                                          "prom-conntrack-usage-ratio-range.json")]
    assert [f.name for a in chart_only for f in parse_artifact(a).facts] == []


def test_a_picker_that_fails_costs_the_charts_not_the_evidence(prom: PromServer, history: History) -> None:
    def broken(artifacts: list[Artifact]) -> list[str]:
        raise RuntimeError("no playbooks today")

    result = collect_prometheus(prom.url, CHECKOUT, history.window, charts=broken)
    assert "prom-cpu-throttled-ratio.json" in {a.id for a in result.artifacts}
    assert [(m.source, m.reason) for m in result.missing] == [
        ("prometheus:charts", "could not choose the chart series: RuntimeError: no playbooks today")]


def test_a_chart_wave_past_the_deadline_is_dropped_not_the_evidence(prom: PromServer, history: History) -> None:
    result = collect_prometheus(prom.url, TRAINER, history.window, charts=lambda _: ["DCGM_FI_DEV_GPU_TEMP"],
                                finish_by=time.monotonic() - 1)
    ids = {a.id for a in result.artifacts}
    assert "prom-gpu-xid-max.json" in ids and "prom-gpu-temp-range.json" not in ids
    assert [(m.source, m.reason) for m in result.missing] == [
        ("prometheus:charts", "1 chart series not fetched: the triage's deadline was reached")]


def test_queries_still_running_when_the_budget_is_spent_become_missing() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)  # accepts connections into the backlog, never answers
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        query = Query("gpu-temp-range", "DCGM_FI_DEV_GPU_TEMP", "cluster", 15)
        started = time.monotonic()
        with closing(PromClient(url, 5.0, None)) as client:
            result = run_queries(client, [query], HOUR, budget=0.3)
    assert time.monotonic() - started < 2.0  # not the client's 5 s timeout
    assert result.artifacts == []
    assert [m.source for m in result.missing] == ["prometheus:gpu-temp-range"]
    assert result.missing[0].reason.startswith("not answered within the 0.3s left before the triage's deadline")


def test_joined_and_cluster_wide_series_compute_what_their_titles_say(prom: PromServer, history: History) -> None:
    pending = Scope(namespace="ml", workload="job/trainer", pods=[PodRef(name="trainer-9", phase="Pending")])
    queries = [q for scope in (pending, CHECKOUT) for q in _catalog_queries(scope, history.window)]
    with closing(PromClient(prom.url, 5.0, None)) as client:
        got = by_id(run_queries(client, list({q.name: q for q in queries}.values()), history.window))

    def last(artifact: str) -> dict[str, float]:
        return {json.dumps(s["metric"], sort_keys=True): float(s["values"][-1][1]) for s in series(got[artifact])}

    # Free GPUs: gpu-node-2 has 8 - 6 = 2, gpu-node-4 has 7 (the finished pod's request holds nothing).
    assert last("prom-gpu-free-range.json") == {'{"series": "most on one node"}': 7.0,
                                                '{"series": "whole cluster"}': 9.0}
    assert last("prom-gpu-unhealthy-range.json") == {"{}": 1.0}
    # Restarts per hour, labelled with the node the pod runs on.
    restarts = series(got["prom-restarts-range.json"])
    assert [s["metric"] for s in restarts] == [{"namespace": "shop", "pod": "checkout-7d9f-abcde",
                                                "node": "cpu-node-1"}]
    assert float(restarts[0]["values"][-1][1]) == pytest.approx(12, rel=0.05)
    # The checkout HPA went from 4 to 10 of its 10 replicas halfway through.
    hpa = [float(v) for _, v in series(got["prom-hpa-replicas-ratio-range.json"])[0]["values"]]
    assert hpa[0] == pytest.approx(0.4) and hpa[-1] == pytest.approx(1.0)
    # The Endpoints object exists with no address: zero ready, not an empty chart.
    assert last("prom-ready-endpoints-range.json") == {"{}": 0.0}


def test_a_node_next_check_finds_the_exporter_by_its_address(prom: PromServer) -> None:
    """The conntrack next check, rendered for a node whose alert named it by scrape address, run against real
    Prometheus: it selects that node's series (instance 10.0.0.7:9100) and not another node's."""
    latency = next(p for p in load_playbooks() if p.spec.id == "latency")
    stack = list(latency.hypotheses)
    while not any("node_nf_conntrack_entries{" in c for c in stack[0].spec.next_checks):
        stack = stack[1:] + stack[0].children
    check = next(c for c in stack[0].spec.next_checks if "node_nf_conntrack_entries{" in c)
    variables = template_variables(Target(node="cpu-node-7", instance="10.0.0.7:9100"), FactSet())
    query = render(check, variables)
    url = f"{prom.url}/api/v1/query?{urllib.parse.urlencode({'query': query})}"
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", body
    assert [s["metric"]["instance"] for s in body["data"]["result"]] == ["10.0.0.7:9100"]
    assert 0.5 < float(body["data"]["result"][0]["value"][1]) <= 1.0  # entries over the limit, a ratio
