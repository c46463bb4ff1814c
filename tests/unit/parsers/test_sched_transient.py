"""Scheduling read by construction (issue 24, round 6): reasons weighed by the nodes they rule out, a wait that a
later Scheduled event ends, and the cluster-autoscaler's NotTriggerScaleUp verdict."""

from __future__ import annotations

from string import Template

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes.messages.k8s_scheduling import reason_node_counts, scheduling_facts
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


# https://github.com/equinixmetal-archive/csi-packet/issues/48 (the kubelet/k3s log in the issue description, a run
# of lines from the middle): the scheduler waits six seconds for the claim, then the volume is attached.
CLAIM_BEING_PROVISIONED = "\n".join([
    "Oct 08 09:50:39 k1.ovrclk.net k3s[11703]: E1008 09:50:39.811161   11703 factory.go:678] Error scheduling "
    "akash-sanity-1570528238/sanity-pod: pod has unbound immediate PersistentVolumeClaims; retrying",
    "Oct 08 09:50:39 k1.ovrclk.net k3s[11703]: E1008 09:50:39.820339   11703 scheduler.go:485] error selecting node "
    "for pod: pod has unbound immediate PersistentVolumeClaims",
    'Oct 08 09:50:45 k1.ovrclk.net k3s[11703]: I1008 09:50:45.226291   11703 event.go:258] Event(v1.ObjectReference{'
    'Kind:"PersistentVolumeClaim", Namespace:"akash-sanity-1570528238", Name:"sanity-pvc", UID:"b71827b4-9e13-43f7-'
    '80a8-efbf446bb6bb", APIVersion:"v1", ResourceVersion:"653", FieldPath:""}): type: \'Normal\' reason: '
    '\'ExternalProvisioning\' waiting for a volume to be created, either by external provisioner "net.packet.csi" '
    "or manually created by system administrator",
    "Oct 08 09:50:45 k1.ovrclk.net k3s[11703]: E1008 09:50:45.417645   11703 factory.go:678] Error scheduling "
    "akash-sanity-1570528238/sanity-pod: pod has unbound immediate PersistentVolumeClaims; retrying",
    "Oct 08 09:50:45 k1.ovrclk.net k3s[11703]: E1008 09:50:45.417671   11703 scheduler.go:485] error selecting node "
    "for pod: pod has unbound immediate PersistentVolumeClaims",
])


def test_a_claim_wait_of_a_few_seconds_is_no_pending_pod() -> None:
    facts = facts_of(CLAIM_BEING_PROVISIONED)
    assert facts["scheduling.reasons"] == ["unbound-pvc"]
    assert "scheduling.failed" not in facts


# kube-scheduler's klog line (pkg/scheduler/factory.go MakeDefaultErrorFunc, 1.11-1.18) with sample values.
KLOG = Template("E0108 ${clock}.954949       1 factory.go:660] Error scheduling ${ns}/${pod}: pod has unbound "
                "immediate PersistentVolumeClaims; retrying")


@pytest.mark.parametrize(("clocks", "waits"), [
    (["22:07:45", "22:07:47", "22:07:50"], False),  # seconds: a claim being provisioned
    (["22:07:45", "22:07:50", "22:08:48"], True),   # a minute and more: the claim does not bind
])
def test_a_claim_wait_counts_when_it_lasts(clocks: list[str], waits: bool) -> None:
    text = "\n".join(KLOG.substitute(clock=c, ns="default", pod="kafka-0") for c in clocks)
    assert ("scheduling.failed" in facts_of(text)) is waits


def test_a_repeated_claim_wait_event_counts() -> None:
    row = ("  Warning  FailedScheduling  16s (x13 over 6m)  default-scheduler  pod has unbound immediate "
           "PersistentVolumeClaims")
    assert facts_of(row)["scheduling.failed"] is True


def test_another_reason_beside_the_claim_still_counts() -> None:
    text = "0/3 nodes are available: 3 pod has unbound immediate PersistentVolumeClaims, 2 Insufficient cpu."
    assert facts_of(text)["scheduling.failed"] is True
