"""Round 20 (j1): the kubelet's PLEG check said failed in words (stated.yaml pleg-said-unhealthy) and HAMi's scheduler
extender refusing a node that has fewer devices than the pod asks for (signals.yaml hami-node-insufficient-device;
k8s_wordings.yaml renders both of HAMi's wordings). No other public thread saying PLEG timed out in words could be
searched this round: the positive sentences are rule sentences, each beside the negatives of the same shape."""

from __future__ import annotations

from typing import Any

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.paste_facts import said_facts


def _facts(text: str) -> dict[str, Any]:
    return {f.name: f.value for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts}


@pytest.mark.parametrize("text", [
    "The worker went NotReady and the kubelet log shows PLEG timed out again.",
    "After the upgrade, PLEG is unhealthy on two nodes every few hours.",
    "节点NotReady,排查kubelet日志发现PLEG超时。",
    "PLEG relist timeouts keep flipping the node between Ready and NotReady.",
])
def test_pleg_said_to_fail_is_the_not_ready_reason(text: str) -> None:
    assert said_facts(text).get("node.not_ready_reasons") == ["pleg-unhealthy"]


@pytest.mark.parametrize("text", [
    "PLEG is not healthy 如何发生?",  # asked about
    "Why does PLEG time out on busy nodes?",  # asked about
    "PLEG did not time out, the runtime answered within a second.",  # denied
    "The pod timed out waiting for its volume while PLEG events kept coming.",  # another subject timed out
    "kubelet_pleg_relist_duration_seconds stays under 1s on every node.",  # the metric's name is no complaint
])
def test_pleg_named_without_its_failure_is_not_read(text: str) -> None:
    assert "pleg-unhealthy" not in (said_facts(text).get("node.not_ready_reasons") or [])


def test_hami_fitting_a_node_or_filtering_it_for_another_reason_gives_no_gpu_shortage() -> None:
    # HAMi's pkg/scheduler/score.go logs NodeFitPod for a node the pod fits and CardInsufficientMemory for a card
    # short of memory: neither says the node has too few devices.
    for line in [
        'I0312 08:11:02.113402       1 score.go:120] "NodeFitPod" pod="ml/trainer-0" node="gpu-1" devices=2',
        'I0312 08:11:02.113402 1 device.go:700] "CardInsufficientMemory" pod="ml/trainer-0" card request mem=20000',
    ]:
        assert "insufficient-gpu" not in (_facts(line).get("scheduling.reasons") or [])


@pytest.mark.parametrize("text", [
    "容器里访问外部服务时,DNS解析很慢,要好几秒。",
    "每次请求都要等域名解析延迟过去才开始传输数据。",
])
def test_dns_said_slow_in_chinese_is_read(text: str) -> None:
    assert said_facts(text).get("dns.said_slow") is True


@pytest.mark.parametrize("text", [
    "DNS解析没有延迟,问题在应用本身。",  # denied between the lookup and its delay
    "没有DNS解析延迟,问题在应用本身。",  # denied before
    "是否是DNS解析延迟?",  # asked about
    "DNS解析失败,返回SERVFAIL。",  # a failure, not a delay
])
def test_dns_in_chinese_without_a_delay_said_is_not_read(text: str) -> None:
    assert "dns.said_slow" not in said_facts(text)


def test_dig_query_time_is_the_lookup_in_seconds_and_a_fast_answer_turns_nothing_on() -> None:
    slow = _facts(";; Query time: 2187 msec\n;; SERVER: 10.0.0.10#53(10.0.0.10)\n")
    assert slow["dns.lookup_seconds"] == 2.187
    # A healthy dig: the figure is read, but at 3 ms it is no slow lookup (latency's trigger asks for 1 s).
    fast = _facts(";; Query time: 3 msec\n;; SERVER: 10.96.0.10#53(10.96.0.10)\n")
    assert fast["dns.lookup_seconds"] == 0.003
    assert "latency" not in (fast.get("evidence.symptoms") or [])
