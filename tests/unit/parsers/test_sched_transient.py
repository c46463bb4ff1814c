"""Scheduling read by construction (issue 24, round 6): reasons weighed by the nodes they rule out, a wait that a
later Scheduled event ends, and the cluster-autoscaler's NotTriggerScaleUp verdict."""

from __future__ import annotations

from string import Template

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes.k8s_messages import reason_node_counts, scheduling_facts
from collectors.parsers.registry import parse_artifact


def facts_of(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


# https://github.com/Cambricon/cambricon-k8s-device-plugin/issues/16 (the title)
CAMBRICON = ("0/2 nodes are available: 1 Insufficient cambricon.com/mlu370, 1 node(s) had taint "
             "{node-role.kubernetes.io/master: }, that the pod didn't tolerate.")

# https://github.com/pangeo-data/pangeo-cloud-federation/issues/140 (KubeSpawner's spawn event log)
PANGEO = """Server requested
2019-03-06 17:49:34+00:00 [Warning] 0/3 nodes are available: 2 Insufficient cpu, 3 Insufficient memory.
2019-03-06 17:49:48+00:00 [Normal] pod didn't trigger scale-up (it wouldn't fit if a new node is added)
"""

# https://github.com/MetaCell/NetPyNE-UI/issues/542 (one line of the spawn page)
NETPYNE = ("2022-05-26T14:58:54Z [Normal] pod didn't trigger scale-up (it wouldn't fit if a new node is added): "
           "1 node(s) didn't match pod affinity/anti-affinity rules, 1 node(s) didn't match pod affinity rules")

# https://github.com/jupyterhub/jupyterhub/issues/4391 (a spawn with no scheduling failure at all)
ASSIGNED_ONLY = "\n".join([
    "Server requested",
    "2023-03-09T02:50:56.148450Z [Normal] Successfully assigned default/jupyter-student007-5f-5401 to "
    "cn-zhangjiakou.172.26.41.106",
    '2023-03-09T02:50:56Z [Normal] Container image "jupyterhub/k8s-network-tools:2.0.0" already present on machine',
    "2023-03-09T02:50:56Z [Normal] Created container block-cloud-metadata",
])


def test_nodes_kept_for_the_control_plane_do_not_lead() -> None:
    # Both reasons rule out one node, but the tainted one is the control plane: the pod was never meant for it.
    facts = dict(scheduling_facts(CAMBRICON))
    assert facts["scheduling.reason_nodes"] == ["insufficient-other=1", "untolerated-taint=1"]
    assert facts["scheduling.leading_reasons"] == ["insufficient-other"]


ROLE = Template("0/${total} nodes are available: ${roles} node(s) had untolerated taint {node-role.kubernetes.io/"
                "${role}: }, ${gpu} Insufficient nvidia.com/gpu.")


@pytest.mark.parametrize("role", ["master", "control-plane", "controlplane", "etcd", "infra"])
def test_every_node_role_taint_is_set_aside_when_weighing(role: str) -> None:
    message = ROLE.substitute(total=9, roles=5, role=role, gpu=4)
    assert reason_node_counts(message) == [("untolerated-taint", 5), ("insufficient-gpu", 4)]
    assert dict(scheduling_facts(message))["scheduling.leading_reasons"] == ["insufficient-gpu"]


def test_a_workload_taint_still_weighs() -> None:
    # A taint that keeps workloads apart (dedicated GPU nodes) is a reason the pod may not run there.
    message = ROLE.template.replace("node-role.kubernetes.io/${role}", "dedicated")
    facts = dict(scheduling_facts(Template(message).substitute(total=9, roles=5, gpu=4)))
    assert facts["scheduling.leading_reasons"] == ["untolerated-taint"]


def test_only_role_taints_still_lead() -> None:
    # A single-node cluster whose only node is the control plane: that taint is the whole story.
    rendered = ROLE.substitute(total=1, roles=1, role="control-plane", gpu=0)
    message = rendered.replace(", 0 Insufficient nvidia.com/gpu", "")
    assert dict(scheduling_facts(message))["scheduling.leading_reasons"] == ["untolerated-taint"]


def test_kubespawner_log_with_the_autoscalers_refusal_is_a_waiting_pod() -> None:
    facts = facts_of(PANGEO)
    assert facts["scheduling.failed"] is True
    assert facts["scheduling.leading_reasons"] == ["insufficient-memory"]
    assert "scheduling.resolved" not in facts


def test_not_trigger_scale_up_alone_is_a_failure_without_scheduler_reasons() -> None:
    # The reasons are the autoscaler's, counted in node groups: they are not read as the scheduler's.
    facts = facts_of(NETPYNE)
    assert facts["scheduling.failed"] is True
    assert "scheduling.reasons" not in facts
    assert "node.conditions" not in facts_of("pod didn't trigger scale-up: 2 node(s) didn't match node selector, "
                                             "1 not ready for scale-up")


def test_a_scheduled_pod_with_no_failure_says_nothing_about_scheduling() -> None:
    facts = facts_of(ASSIGNED_ONLY)
    assert "scheduling.failed" not in facts and "scheduling.resolved" not in facts


ASSIGNED = Template("${ts} [Normal] Successfully assigned ${ns}/${pod} to ${node}")
FAILED = "2019-03-06 17:49:34+00:00 [Warning] 0/3 nodes are available: 2 Insufficient cpu, 3 Insufficient memory."


def test_a_later_scheduled_event_resolves_the_wait() -> None:
    text = FAILED + "\n" + ASSIGNED.substitute(ts="2019-03-06 17:51:02+00:00", ns="hub", pod="jupyter-a", node="n-1")
    facts = facts_of(text)
    assert facts["scheduling.failed"] is True and facts["scheduling.resolved"] is True


def test_failing_again_after_being_placed_is_not_resolved() -> None:
    placed = ASSIGNED.substitute(ts="2019-03-06 17:51:02+00:00", ns="hub", pod="jupyter-a", node="n-1")
    again = FAILED.replace("17:49:34", "17:58:00").replace("2 Insufficient cpu", "1 Insufficient cpu")
    facts = facts_of("\n".join([FAILED, placed, again]))
    assert facts["scheduling.failed"] is True
    assert "scheduling.resolved" not in facts


def test_before_1_11_the_scheduled_message_named_no_namespace() -> None:
    text = FAILED + "\n" + "Successfully assigned jupyter-a to n-1"
    assert facts_of(text)["scheduling.resolved"] is True


EVENTS = """Events:
  Type     Reason             Age   From                Message
  ----     ------             ----  ----                -------
  Warning  FailedScheduling   3m    default-scheduler   0/3 nodes are available: 3 Insufficient cpu.
  Normal   NotTriggerScaleUp  3m    cluster-autoscaler  pod didn't trigger scale-up: 1 max node group size reached
  Normal   Scheduled          1m    default-scheduler   Successfully assigned default/web-0 to node-4
"""


def test_describe_events_keep_the_failure_and_say_it_resolved() -> None:
    facts = facts_of(EVENTS)
    assert facts["scheduling.failed"] is True and facts["scheduling.resolved"] is True
    assert facts["scheduling.reasons"] == ["insufficient-cpu"]
