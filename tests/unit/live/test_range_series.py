"""The chart series catalog and the range queries live triage plans from it, without a server.

Every series a playbook declares is planned for a target of that playbook's kind, within the bound; counters are
charted as rates; chart queries give the Prometheus parser no fact (a picture must not change the verdict).
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from unittest.mock import patch

import pytest

from bot.runner.triage import chart_picker
from collectors.catalogs.queries import RANGE_METRICS, UNITS, split_key
from collectors.live.base import NodeRef, PodRef, Scope, Window
from collectors.live.prom_plan import (
    MAX_RANGE_QUERIES,
    Query,
    build_plan,
    chart_queries,
    series_query,
)
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from playbooks.charts import declared_series
from playbooks.loader import CompiledHypothesis, CompiledPlaybook, load_playbooks
from playbooks.model import Chart, Hypothesis, NoChart, Playbook
from playbooks.pipeline import triggered_by
from tests.unit.live.hour import HOUR, UNTIL

# One target of each kind the playbooks are about.
SERVICE = Scope(namespace="serving", service="ranker", workload="deployment/ranker",
                pods=[PodRef(name="ranker-7d9f-abcde", node="gpu-node-1", gpu_request=1, phase="Running",
                             containers=["server"])],
                nodes=[NodeRef(name="gpu-node-1", internal_ip="10.0.0.1", gpu_capacity=8)])
PENDING = Scope(namespace="ml", workload="job/trainer", pods=[PodRef(name="trainer-0", phase="Pending", gpu_request=8)])
GPU_NODE = Scope(namespace="", pods=[PodRef(name="trainer-0", node="gpu-node-2", gpu_request=8)],
                 nodes=[NodeRef(name="gpu-node-2", internal_ip="10.0.0.2", gpu_capacity=8)])
TRAINING = Scope(namespace="ml", workload="pytorchjob/trainer",
                 pods=[PodRef(name=f"trainer-worker-{i}", node=f"gpu-node-{i}", gpu_request=8) for i in range(2)],
                 nodes=[NodeRef(name=f"gpu-node-{i}", internal_ip=f"10.0.1.{i}", gpu_capacity=8) for i in range(2)])
KIND = {"pending": PENDING, "gpu-xid": GPU_NODE, "node-not-ready": GPU_NODE, "nccl-hang": TRAINING}
DISCOVERED = ["http_request_duration_seconds_bucket", "http_requests_total"]
MARKERS = {"pods", "containers", "namespace", "service", "endpoint", "deployment", "scaled", "instance", "node",
           "gpus", "window"}
# Names that only ever grow (Prometheus' `_total`, histogram parts, DCGM's totals and counters, netstat, Triton's
# cumulative microseconds): their catalog entry must say so and take a rate.
_COUNTER_NAME = re.compile(r"(_total|_count|_bucket|_sum|_COUNTER)$|^node_netstat_|^nv_inference_.*_us$",
                           re.IGNORECASE)
# Exporters that break the naming convention: ingress-nginx's request counter has no `_total`, and the cluster
# autoscaler's `_count` is a gauge (pods it sees now).
_NAMED_OTHERWISE = {"nginx_ingress_controller_requests": True, "cluster_autoscaler_unschedulable_pods_count": False}


def declared(book: Playbook) -> list[str]:
    return list(dict.fromkeys(h.chart.metric for h, _ in book.spec.walk() if isinstance(h.chart, Chart)))


BOOKS = {book.spec.id: book for book in load_playbooks()}


# ---- the catalog ---------------------------------------------------------------------------------------------


def test_every_catalog_entry_is_charted_by_a_playbook_and_names_its_own_query() -> None:
    charted = {key for book in BOOKS.values() for key in declared(book)}
    assert charted == set(RANGE_METRICS)  # lint holds the other direction; no entry is fetched for nothing
    queries = [s.query for s in RANGE_METRICS.values()]
    assert len(set(queries)) == len(queries) and all(q.endswith("-range") for q in queries)
    assert {s.unit for s in RANGE_METRICS.values()} <= set(UNITS)


@pytest.mark.parametrize("key", sorted(RANGE_METRICS))
def test_templates_use_known_markers_and_counters_take_a_rate(key: str) -> None:
    series = RANGE_METRICS[key]
    name, _ = split_key(key)
    assert set(re.findall(r"<([a-z]+)>", series.promql)) <= MARKERS
    assert series.counter == _NAMED_OTHERWISE.get(name, bool(_COUNTER_NAME.search(name))), "counter= is wrong"
    if series.counter:
        assert re.search(rf"\b(rate|increase)\((?:[^()]*\()?{re.escape(name)}\b", series.promql), series.promql
        assert series.unit not in ("count", "bytes"), "a counter's rate is per second or per hour, or a ratio"


def test_a_key_is_a_metric_with_at_most_one_matcher() -> None:
    assert split_key("DCGM_FI_DEV_GPU_UTIL") == ("DCGM_FI_DEV_GPU_UTIL", None)
    assert split_key('node_cpu_seconds_total{mode="steal"}') == ("node_cpu_seconds_total", 'mode="steal"')
    for bad in ("node_cpu_seconds_total{mode=steal}", 'x{a="1",b="2"}', "rate(x[5m])"):
        with pytest.raises(ValueError, match="not a series key"):
            split_key(bad)


# ---- planning ---------------------------------------------------------------------------------------------------


def planned_range(scope: Scope, series: list[str]) -> dict[str, Query]:
    plan = build_plan(scope, HOUR, DISCOVERED)
    queries = [*plan, *chart_queries(scope, HOUR, series, plan)]
    assert len({q.name for q in queries}) == len(queries)
    return {q.name: q for q in queries if q.is_range}


@pytest.mark.parametrize("playbook", sorted(BOOKS))
def test_every_declared_series_is_planned_for_a_target_of_the_playbooks_kind(playbook: str) -> None:
    scope = KIND.get(playbook, SERVICE)
    series = declared(BOOKS[playbook])
    ranged = planned_range(scope, series)
    assert len(ranged) <= MAX_RANGE_QUERIES
    for key in series:
        query = ranged.get(RANGE_METRICS[key].query)
        assert query is not None, f"{playbook}: {key} is not planned for its target"
        assert split_key(key)[0] in query.promql
        assert query.step > 0 and "<" not in re.sub(r"\s<\s|\) < 5", "", query.promql)  # every marker replaced


def test_series_are_scoped_to_the_target_with_escaped_values() -> None:
    odd = Scope(namespace='we"ird', service="svc.v1", workload="deployment/svc.v1",
                pods=[PodRef(name="svc.v1-0", node="node.a")], nodes=[NodeRef(name="node.a", gpu_capacity=8)])
    queries = {key: series_query(RANGE_METRICS[key], odd, HOUR) for key in RANGE_METRICS}
    restarts = queries["kube_pod_container_status_restarts_total"]
    assert restarts is not None and 'namespace="we\\"ird",pod="svc.v1-0"' in restarts.promql
    assert restarts.subject == 'pod/we"ird/svc.v1-0'
    steal = queries['node_cpu_seconds_total{mode="steal"}']
    assert steal is not None and 'instance=~"(node\\\\.a)(:[0-9]+)?"' in steal.promql
    hpa = queries["kube_horizontalpodautoscaler_status_current_replicas"]
    assert hpa is not None and 'scaletargetref_name="svc.v1"' in hpa.promql
    gpus = queries["DCGM_FI_DEV_GPU_TEMP"]
    assert gpus is not None and 'Hostname="node.a"' in gpus.promql and gpus.subject == "node/node.a"
    dns = queries["coredns_dns_responses_total"]
    assert dns is not None and dns.subject == "cluster" and "we" not in dns.promql


def test_a_series_the_target_has_nothing_for_is_not_planned() -> None:
    no_nodes = Scope(namespace="ml", pods=[PodRef(name="trainer-0", phase="Pending")])
    assert series_query(RANGE_METRICS['node_cpu_seconds_total{mode="steal"}'], no_nodes, HOUR) is None
    assert series_query(RANGE_METRICS["DCGM_FI_DEV_GPU_TEMP"], no_nodes, HOUR) is None
    assert series_query(RANGE_METRICS["kube_endpoint_address"], no_nodes, HOUR) is None  # no service
    assert series_query(RANGE_METRICS["kube_deployment_metadata_generation"], no_nodes, HOUR) is None
    assert series_query(RANGE_METRICS["kube_pod_status_phase"], no_nodes, HOUR) is not None


def test_a_triage_never_plans_more_than_the_bound_and_keeps_the_order_asked() -> None:
    every = list(RANGE_METRICS)
    ranged = planned_range(SERVICE, every)
    assert len(ranged) == MAX_RANGE_QUERIES
    charts = chart_queries(SERVICE, HOUR, every, build_plan(SERVICE, HOUR, DISCOVERED))
    # The first series asked for that the target has and the trend queries did not already fetch, in order.
    fits = [k for k in every if series_query(RANGE_METRICS[k], SERVICE, HOUR) is not None
            and not RANGE_METRICS[k].always]
    assert [q.name for q in charts] == [RANGE_METRICS[k].query for k in fits[:len(charts)]]
    # Repeats and unknown keys cost nothing.
    assert [q.name for q in chart_queries(SERVICE, HOUR, ["DCGM_FI_DEV_GPU_TEMP"] * 3 + ["no_such_metric"])] == [
        "gpu-temp-range"]


def test_a_long_window_rates_over_the_step() -> None:
    month = Window(since=UNTIL - timedelta(days=30), until=UNTIL)
    query = series_query(RANGE_METRICS["kube_pod_container_status_restarts_total"], SERVICE, month)
    assert query is not None and query.step == 10800 and "[3h]" in query.promql
    assert "[5m]" in (series_query(RANGE_METRICS["kube_pod_container_status_restarts_total"], SERVICE, HOUR)
                      or Query("", "", "")).promql


# ---- a picture must not change the verdict --------------------------------------------------------------------


def _matrix_with(labels: dict[str, str]) -> str:
    values = [[UNTIL.timestamp() - 60 * (3 - i), str(v)] for i, v in enumerate([1, 2, 4, 8])]
    return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": labels, "values": values}]}}, indent=2)


@pytest.mark.parametrize("key", sorted(k for k, s in RANGE_METRICS.items() if not s.always))
def test_chart_queries_give_the_parser_no_fact(key: str) -> None:
    query = series_query(RANGE_METRICS[key], SERVICE, HOUR) or series_query(RANGE_METRICS[key], TRAINING, HOUR)
    assert query is not None
    labels = {"namespace": "serving", "pod": "ranker-7d9f-abcde", "container": "server", "instance": "10.0.0.1:9100",
              "reason": "ImagePullBackOff", "phase": "Pending", "Hostname": "gpu-node-1", "gpu": "0"}
    artifact = Artifact(id=f"prom-{query.name}.json", kind=ArtifactKind.PROMETHEUS_QUERY, source="prometheus",
                        command=query.promql, content=_matrix_with(labels))
    parsed = parse_artifact(artifact)
    assert parsed.problems == []
    assert [f.name for f in parsed.facts] == []


def test_a_ratio_of_request_counters_is_not_read_as_traffic() -> None:
    """The 5xx share at the ingress grows eightfold here; traffic.increase_ratio must not say traffic did."""
    query = series_query(RANGE_METRICS['nginx_ingress_controller_requests{status=~"5.."}'], SERVICE, HOUR)
    assert query is not None
    artifact = Artifact(id="r.json", kind=ArtifactKind.PROMETHEUS_QUERY, command=query.promql,
                        content=_matrix_with({}))
    assert "traffic.increase_ratio" not in {f.name for f in parse_artifact(artifact).facts}
    rate = replace(artifact, command='sum(rate(http_requests_total{namespace="serving"}[5m]))')
    assert "traffic.increase_ratio" in {f.name for f in parse_artifact(rate).facts}


# ---- which series live triage asks for: the triggered playbooks' declarations -----------------------------------


def _node(metric: str | None, *children: CompiledHypothesis) -> CompiledHypothesis:
    chart = Chart(metric=metric, title="t", unit="count") if metric else NoChart(none="no metric shows a typo in a tag")
    return CompiledHypothesis(spec=Hypothesis.model_construct(chart=chart), predicates={}, children=list(children))


def _book(*hypotheses: CompiledHypothesis) -> CompiledPlaybook:
    return CompiledPlaybook(spec=Playbook.model_construct(), path="", trigger=BOOKS["pending"].trigger,
                            hypotheses=list(hypotheses))


def test_each_playbooks_series_in_turn_parents_first_without_repeats_or_none() -> None:
    a = _book(_node("m_a1", _node("m_a1_child")), _node(None), _node("m_shared"))
    b = _book(_node("m_b1"), _node("m_shared"), _node("m_b3"))
    # Turns: a's first and b's first, then a's second (its first child) and b's second, then the rest.
    assert declared_series([a, b]) == ["m_a1", "m_b1", "m_a1_child", "m_shared", "m_b3"]
    assert declared_series([b, a]) == ["m_b1", "m_a1", "m_shared", "m_a1_child", "m_b3"]
    assert declared_series([_book(_node(None))]) == [] and declared_series([]) == []


# An OOMKilled pod, as `kubectl describe pod` shows it (tests/fixtures/parsers/describe_pod/oomkilled.txt).
OOM = Artifact(id="describe", kind=ArtifactKind.DESCRIBE_POD,
               content=(Path(__file__).parents[2] / "fixtures/parsers/describe_pod/oomkilled.txt").read_text())


def test_the_evidence_triggers_its_playbooks_and_a_forced_symptom_comes_first() -> None:
    assert [p.spec.id for p in triggered_by([OOM])] == ["crash-loop", "oom-killed"]
    assert [p.spec.id for p in triggered_by([OOM], ["pending"])] == ["pending", "crash-loop", "oom-killed"]
    assert triggered_by([]) == [] and triggered_by([replace(OOM, unavailable="forbidden")]) == []
    series = declared_series(triggered_by([OOM]))
    assert "container_memory_working_set_bytes" in series and "scheduler_unschedulable_pods" not in series


def test_the_chart_picker_judges_no_hypothesis() -> None:
    """The picker reads triggers only: the one analysis of a live triage runs when all the evidence is in."""
    with patch("playbooks.pipeline.evaluate", side_effect=AssertionError("a hypothesis was judged")):
        series = chart_picker(None)([OOM])
    assert series == declared_series(triggered_by([OOM]))
