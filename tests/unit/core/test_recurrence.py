"""Recurrence (bot/memory/keys.py, bot/memory/recurrence.py, bot/render/memory/recurrence.py): stored incident summaries
in, links and patterns out; linking never joins incidents that share nothing."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from bot.memory.keys import Gpu, IncidentKeys, bus_id, image_key, incident_keys, workload_of
from bot.memory.recurrence import BURST, Recurrence, Seen, link_keys, recall
from bot.render.memory.recurrence import (
    link_sentence,
    ordinal,
    plain_lines,
    recurrence_markdown,
    shown,
    slack_text,
)

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)


def xid_report(node: str, codes: list[int], gpu: str = "1", bus: str = "0000:2b:00",
               lead: str = "gpu-xid/gpu-fallen-off-bus") -> dict[str, Any]:
    playbook, hypothesis = lead.split("/")
    return {"target": {"node": node, "service": f"node/{node}"}, "symptoms": ["gpu-xid"],
            "facts": {"xid.codes": codes, "xid.hosts": [node], "xid.pci_bus_ids": [bus],
                      "alert.labels": [f"gpu={gpu}", f"Hostname={node}", "alertname=GPUXidError"]},
            "lead": {"playbook": playbook, "hypothesis": hypothesis, "status": "likely", "supporting": []}}


def crash_report(namespace: str, deployment: str, image: str) -> dict[str, Any]:
    return {"target": {"namespace": namespace, "service": f"deployment/{deployment}"}, "symptoms": ["crash-loop"],
            "facts": {"container.image": image, "container.waiting.reason": "CrashLoopBackOff",
                      "pod.node": f"node-{namespace}"},
            "lead": {"playbook": "crash-loop", "hypothesis": "app-error", "status": "likely", "supporting": []}}


def nccl_report(job: str, suspects: list[str]) -> dict[str, Any]:
    return {"target": {"namespace": "train", "service": f"job/{job}"}, "symptoms": ["nccl-hang"],
            "facts": {"nccl.suspect_hosts": suspects, "nccl.suspect_ranks": [3]},
            "lead": {"playbook": "nccl-hang", "hypothesis": "straggler-rank", "status": "likely", "supporting": []}}


def seen(incident: int, days_ago: float, report: dict[str, Any], title: str = "") -> Seen:
    return Seen(incident_id=incident, at=NOW - timedelta(days=days_ago), title=title or f"incident {incident}",
                keys=incident_keys(report), channel="C0ALERTS", thread_ts=f"17000000{incident:02d}.000100")


# --- keys ---------------------------------------------------------------------------------------------------------

def test_keys_of_an_xid_report_name_the_node_and_the_gpu_by_bus_id_on_its_node() -> None:
    keys = incident_keys(xid_report("node-a", [79, 45]))
    assert keys.nodes == {"node-a"}
    assert [(g.key, g.label) for g in keys.gpus] == [("bus:node-a/0000:2b:00", "GPU 1 on node-a")]
    assert keys.hardware_xids == {79}  # 45 is an after-effect in the Xid catalog, not hardware
    assert keys.leader == "gpu-xid/gpu-fallen-off-bus"


def test_keys_from_dcgm_labels_use_the_uuid_and_agree_on_bus_id_spellings() -> None:
    report = {"target": {}, "facts": {"xid.codes": [48], "alert.labels": [
        "UUID=GPU-8f1c2a", "pci_bus_id=00000000:2B:00.0", "Hostname=node-b", "gpu=3"]}}
    keys = incident_keys(report)
    assert {g.key for g in keys.gpus} == {"uuid:gpu-8f1c2a", "bus:node-b/0000:2b:00"}
    assert bus_id("00000000:2B:00.0") == bus_id("0000:2b:00") == "0000:2b:00"
    assert bus_id("not a bus") is None


def test_a_bus_id_without_one_node_keys_no_gpu() -> None:
    # Two hosts: the bus id could be either's; saying it is one GPU would join strangers.
    report = {"target": {}, "facts": {"xid.codes": [79], "xid.hosts": ["a", "b"], "xid.pci_bus_ids": ["0000:2b:00"]}}
    assert incident_keys(report).gpus == ()


def test_image_keys_prefer_the_digest() -> None:
    assert image_key("repo/app:v2@sha256:abc") == "sha256:abc"
    assert image_key("repo/app:v2") == "repo/app:v2"
    assert image_key("  ") is None


def test_workload_from_the_target_or_a_deployment_pod_name() -> None:
    assert workload_of({"service": "deployment/api"}, {}, "shop") == "shop/deployment/api"
    assert workload_of({"service": "checkout"}, {}, "shop") == "shop/checkout"
    assert workload_of({"service": "pod/api-7d9f8c6b5-x2kqz", "pod": "api-7d9f8c6b5-x2kqz"}, {}, "shop") == \
        "shop/deployment/api"
    assert workload_of({"service": "node/n1", "node": "n1"}, {}, "shop") is None
    assert workload_of({"service": "deployment/api"}, {}, None) is None


def test_keys_of_garbage_are_empty() -> None:
    keys = incident_keys({"target": "x", "facts": [1], "lead": "y", "symptoms": 3})
    assert keys == IncidentKeys()
    assert link_keys(keys) == {}


# --- links --------------------------------------------------------------------------------------------------------

def test_the_issue_example_node_a_third_incident_with_xid_79_on_gpu_1_twice() -> None:
    history = [seen(1, 2, xid_report("node-a", [79]), "Xid on node-a"),
               seen(2, 5, {"target": {"node": "node-a", "service": "node/node-a"}, "facts": {},
                           "lead": {"playbook": "node-not-ready", "hypothesis": "kubelet-down"}}),
               seen(3, 9, xid_report("node-a", [79]))]  # older than the week
    rec = recall(seen(10, 0, xid_report("node-a", [79])), history)
    node = next(ln for ln in rec.links if ln.kind == "node")
    assert [s.incident_id for s in node.earlier] == [1, 2]
    assert link_sentence(node, rec.days) == \
        "node-a: 3rd incident in 7 days — Xid 79 on GPU 1 twice, gpu-xid/gpu-fallen-off-bus twice"
    gpu = next(ln for ln in rec.links if ln.kind == "gpu")
    assert (gpu.subject, gpu.count) == ("GPU 1 on node-a", 2)
    assert gpu.echoes[0].what == "Xid 79"  # the GPU's own link names it once, as its subject


def test_gpu_1_of_two_nodes_is_not_one_gpu_in_an_echo() -> None:
    same_verdict = [seen(1, 2, {**xid_report("node-b", [79]), "target": {"node": "node-b", "namespace": "ml"}})]
    rec = recall(seen(10, 0, {**xid_report("node-a", [79]), "target": {"node": "node-a", "namespace": "ml"}}),
                 same_verdict)
    (link,) = rec.links
    assert link.kind == "verdict"
    assert [e.what for e in link.echoes] == ["gpu-xid/gpu-fallen-off-bus"]  # not "Xid 79 on GPU 1" twice


def test_a_link_naming_the_same_incidents_as_a_more_specific_one_is_not_repeated() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79])), [seen(1, 1, xid_report("node-a", [79]))])
    assert [ln.kind for ln in rec.links] == ["gpu"]  # node-a names incident 1 too: said once, as the GPU


def test_a_namespace_or_a_verdict_alone_links_nothing() -> None:
    a = {"target": {"namespace": "ml", "service": "deployment/a"}, "facts": {},
         "lead": {"playbook": "oom-killed", "hypothesis": "limit-too-low"}}
    b = {"target": {"namespace": "ml", "service": "deployment/b"}, "facts": {},
         "lead": {"playbook": "pending", "hypothesis": "insufficient-gpu"}}
    c = {"target": {"namespace": "web", "service": "deployment/c"}, "facts": {},
         "lead": {"playbook": "oom-killed", "hypothesis": "limit-too-low"}}
    assert not recall(seen(10, 0, a), [seen(1, 1, b), seen(2, 1, c)])
    # The same verdict in the same namespace does link.
    d = {**b, "lead": {"playbook": "oom-killed", "hypothesis": "limit-too-low"}}
    rec = recall(seen(10, 0, a), [seen(1, 1, d)])
    assert [(ln.kind, ln.subject) for ln in rec.links] == [("verdict", "oom-killed/limit-too-low in ml")]


def test_only_the_window_before_the_incident_counts() -> None:
    report = xid_report("node-a", [79])
    history = [seen(1, 8, report), seen(2, -1, report), seen(10, 3, report)]  # too old, later, itself
    assert not recall(seen(10, 0, report), history)
    assert recall(seen(10, 0, report), history, window=timedelta(days=9)).links[0].earlier[0].incident_id == 1


def test_an_incident_of_the_same_burst_makes_no_link_but_counts_for_a_pattern() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79])), [seen(4, 0.02, xid_report("node-a", [79]))])  # 29 min
    assert rec.links == ()
    assert [p.incidents for p in rec.patterns] == [(4,)]


# --- patterns -----------------------------------------------------------------------------------------------------

def test_the_same_gpu_with_hardware_xids_again_asks_for_cordon_and_an_rma_bundle() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79])), [seen(4, 3, xid_report("node-a", [48]))])
    (pattern,) = rec.patterns
    assert (pattern.kind, pattern.subject, pattern.incidents) == ("gpu-hardware-xids", "GPU 1 on node-a", (4,))
    assert "hardware Xid 48, 79 in 2 incidents" in pattern.claim
    assert pattern.next_checks[0] == "kubectl cordon node-a"
    assert "nvidia-bug-report.sh" in pattern.next_checks[1] and "#4" in pattern.next_checks[1]


def test_application_xids_on_the_same_gpu_are_no_hardware_pattern() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [13], lead="gpu-xid/app-memory-fault")),
                 [seen(4, 3, xid_report("node-a", [13], lead="gpu-xid/app-memory-fault"))])
    assert rec.links and not rec.patterns


def test_another_gpu_on_the_same_node_is_no_gpu_pattern() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79], gpu="1", bus="0000:2b:00")),
                 [seen(4, 3, xid_report("node-a", [79], gpu="5", bus="0000:9a:00"))])
    assert not rec.patterns
    assert [ln.kind for ln in rec.links] == ["node"]


def test_one_image_crash_looping_in_two_namespaces_points_at_its_rollout() -> None:
    image = "registry.example/api:2.4.1"
    rec = recall(seen(10, 0, crash_report("shop", "api", image)), [seen(5, 1, crash_report("billing", "api", image))])
    (pattern,) = rec.patterns
    assert (pattern.kind, pattern.subject) == ("image-crash-loop", image)
    assert "2 namespaces (billing, shop)" in pattern.claim
    assert pattern.next_checks[:2] == ("kubectl rollout history deployment/api -n shop",
                                       "kubectl rollout history deployment/api -n billing")


def test_the_same_image_crash_looping_in_one_namespace_is_no_cross_namespace_pattern() -> None:
    image = "registry.example/api:2.4.1"
    rec = recall(seen(10, 0, crash_report("shop", "api", image)), [seen(5, 1, crash_report("shop", "api", image))])
    assert not rec.patterns


def test_a_pinned_digest_is_found_by_image_id() -> None:
    image = "registry.example/api@sha256:0f3a"
    rec = recall(seen(10, 0, crash_report("shop", "api", image)), [seen(5, 1, crash_report("ml", "web", image))])
    assert rec.patterns[0].subject == "sha256:0f3a"
    assert "imageID" in rec.patterns[0].next_checks[-1] and "grep -F sha256:0f3a" in rec.patterns[0].next_checks[-1]


def test_one_node_in_most_of_a_jobs_nccl_hangs_is_named() -> None:
    history = [seen(1, 1, nccl_report("llama", ["gpu-7"])), seen(2, 2, nccl_report("llama", ["gpu-7", "gpu-2"])),
               seen(3, 3, nccl_report("llama", ["gpu-3"])), seen(4, 1, nccl_report("other-job", ["gpu-2"]))]
    rec = recall(seen(10, 0, nccl_report("llama", ["gpu-7", "gpu-2"])), history)
    assert [(p.kind, p.subject, p.incidents) for p in rec.patterns] == [("nccl-hang-node", "gpu-7", (1, 2))]
    assert "3 of 4 NCCL hangs of train/job/llama" in rec.patterns[0].claim
    assert "kubectl describe node gpu-7" in rec.patterns[0].next_checks


# --- words --------------------------------------------------------------------------------------------------------

def test_the_note_in_every_form() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79])), [seen(4, 3, xid_report("node-a", [79]), "Xid <79>")])
    text = slack_text(rec, {4: "https://acme.slack.com/archives/C0ALERTS/p1700000004000100"})
    assert "<https://acme.slack.com/archives/C0ALERTS/p1700000004000100|#4 Xid &lt;79&gt;>" in text
    assert "`kubectl cordon node-a`" in text
    assert "in <#C0ALERTS>" in slack_text(rec)  # no permalink: the channel, not a link
    assert plain_lines(rec)[1].startswith("  - GPU 1 on node-a: 2nd incident in 7 days — Xid 79 twice")
    assert "- `kubectl cordon node-a`" in recurrence_markdown(rec)
    doc = json.loads(json.dumps(rec.to_json()))
    assert doc["window_days"] == 7
    assert doc["links"][0]["earlier"][0]["incident"] == 4
    assert doc["patterns"][0]["next_checks"][0] == "kubectl cordon node-a"


def test_permalinks_take_nothing_unexpected_and_survive_the_json() -> None:
    rec = recall(seen(10, 0, xid_report("node-a", [79])), [seen(4, 3, xid_report("node-a", [79]))])
    assert [s.incident_id for s in shown(rec)] == [4]
    good = "https://acme.slack.com/archives/C0ALERTS/p1700000004000100?thread_ts=1700000004.000100&cid=C0ALERTS"
    assert f"<{good}|#4" in slack_text(rec, {4: good})
    for bad in ("https://evil.example/x|click>", "javascript:alert(1)", "https://a b/c", ""):
        assert "<http" not in slack_text(rec, {4: bad}) and "in <#C0ALERTS>" in slack_text(rec, {4: bad})
    again = Recurrence.from_json(json.loads(json.dumps(rec.to_json())))
    assert slack_text(again, {4: good}) == slack_text(rec, {4: good})
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st"]


# --- properties: linking never joins incidents that share nothing -------------------------------------------------

_nodes = st.frozensets(st.sampled_from(["n1", "n2", "n3", "n4"]), max_size=2)
_gpus = st.lists(st.builds(Gpu, key=st.sampled_from(["uuid:a", "uuid:b", "bus:n1/0000:2b:00"]),
                           name=st.sampled_from(["GPU 0", "GPU 1"]), node=st.sampled_from([None, "n1"])),
                 max_size=2).map(tuple)
_keys = st.builds(
    IncidentKeys, nodes=_nodes, gpus=_gpus, images=st.frozensets(st.sampled_from(["i1", "i2", "sha256:x"]),
                                                                 max_size=2),
    workload=st.sampled_from([None, "a/job/j1", "b/deployment/d"]), namespace=st.sampled_from([None, "a", "b"]),
    leader=st.sampled_from([None, "gpu-xid/ecc", "crash-loop/app-error"]),
    hardware_xids=st.frozensets(st.sampled_from([48, 79]), max_size=1), crash_looping=st.booleans(),
    nccl_hang=st.booleans(), suspect_nodes=_nodes)
_seen = st.builds(Seen, incident_id=st.integers(1, 40), at=st.integers(0, 14 * 24).map(
    lambda h: NOW - timedelta(hours=h)), title=st.just("t"), keys=_keys)


@settings(max_examples=150, deadline=None)
@given(new=_keys, history=st.lists(_seen, max_size=12, unique_by=lambda s: s.incident_id))
def test_every_link_and_pattern_rests_on_something_shared(new: IncidentKeys, history: list[Seen]) -> None:
    mine = link_keys(new)
    rec = recall(Seen(incident_id=99, at=NOW, title="new", keys=new), history)
    for link in rec.links:
        assert link.key in mine
        assert all(link.key in link_keys(s.keys) for s in link.earlier)
        assert all(NOW - timedelta(days=7) <= s.at <= NOW - BURST and s.incident_id != 99 for s in link.earlier)
    by_id = {s.incident_id: s for s in history}
    for pattern in rec.patterns:
        for incident in pattern.incidents:
            assert set(link_keys(by_id[incident].keys)) & set(mine)


@settings(max_examples=150, deadline=None)
@given(new=_keys, history=st.lists(_seen, max_size=12, unique_by=lambda s: s.incident_id))
def test_incidents_that_share_no_key_are_never_joined(new: IncidentKeys, history: list[Seen]) -> None:
    mine = set(link_keys(new))
    strangers = [s for s in history if not mine & set(link_keys(s.keys))]
    assert not recall(Seen(incident_id=99, at=NOW, title="new", keys=new), strangers)
