"""Drains evict through the Eviction API, which leaves no Evicted status: what shows one is the pod's DisruptionTarget
condition and the drain's own lines and events (node.draining), read from the wording of the programs that print
them (collectors/catalogs/signals.yaml drain entries, k8s_event_facts.py, k8s_pod_object.py). A cordon alone, a dry
run, or a refused drain evicts nothing, and the kubelet's own eviction stays eviction.seen.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.unit.parsers.paste_facts import first_facts, joined_facts

# ---- real pastes ----------------------------------------------------------------------------------------------

# https://github.com/k8s-club/k8s-club/pull/66 (kubectl drain against a PodDisruptionBudget)
KUBECTL_DRAIN_BLOCKED = """\
evicting pod test/pause-deployment-6cb695d7d6-x7bt5
evicting pod test/pause-deployment-6cb695d7d6-fvgf8
evicting pod kube-system/tke-kube-state-metrics-0
...
error when evicting pods/"pause-deployment-6cb695d7d6-fvgf8" -n "test" (will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.
"""  # noqa: E501

# https://github.com/kubernetes/community/issues/6169 (kubectl drain's output before kubernetes#105736)
KUBECTL_DRAIN_OLD_VERB = """\
pod/bar evicted
node/node evicted
"""

# https://github.com/kubernetes/kubernetes/issues/37592 (the drain refused: it cordoned and evicted nothing)
KUBECTL_DRAIN_REFUSED = """\
$ k drain e2e-test-beeps-minion-group-iinp
node "e2e-test-beeps-minion-group-iinp" cordoned
error: pods with local storage (use --delete-local-data to override): busybox-uid, zoo-0; pods not managed by ReplicationController, ReplicaSet, Job, or DaemonSet (use --force to override): busybox-uid, default-http, host-test-container-pod, netserver-1, netserver-1, test-container-pod, netserver-0, test-container-pod, host-test-container-pod, netserver-0, fluentd-cloud-logging-e2e-test-beeps-minion-group-iinp, kube-proxy-e2e-test-beeps-minion-group-iinp; DaemonSet-managed pods (use --ignore-daemonsets to ignore): node-problem-detector-v0.1-yifp5
"""  # noqa: E501

# https://github.com/aws/karpenter-provider-aws/issues/5806 (kubectl get events -A during a Karpenter expiration)
KARPENTER_EVENTS = """\
default       0s          Normal    DisruptionTerminating        node/ip-10-0-40-247.ec2.internal                           Disrupting Node: Expiration/Replace
default       0s          Normal    DisruptionTerminating        nodeclaim/blenderer-video-node-pool-wbgfz                  Disrupting NodeClaim: Expiration/Replace
default       0s          Warning   FailedDraining               node/ip-10-0-40-247.ec2.internal                           Failed to drain node, 4 pods are waiting to be evicted
backend       0s          Normal    Evicted                      pod/blenderer-video-6fb9f65599-kmm59                       Evicted pod
backend       0s          Normal    Killing                      pod/blenderer-video-6fb9f65599-kmm59                       Stopping container blenderer-video
"""  # noqa: E501

# https://github.com/kubernetes/kubernetes/issues/105467 (a pod the kubelet evicted, its status synced before the
# reason was: only the DisruptionTarget condition names the eviction)
KUBELET_TERMINATION_CONDITION = """\
status:
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2025-05-29T07:30:02Z"
    message: 'The node was low on resource: ephemeral-storage. Threshold quantity:
      1Gi, available: 898240Ki. Container discovery was using 4Ki, request is 0, has
      larger consumption of ephemeral-storage. '
    reason: TerminationByKubelet
    status: "True"
    type: DisruptionTarget
  - lastProbeTime: null
    lastTransitionTime: "2025-05-29T07:30:02Z"
    status: "False"
    type: PodReadyToStartContainers
"""


def test_kubectl_drain_evicting_lines_show_a_drain() -> None:
    facts = joined_facts(KUBECTL_DRAIN_BLOCKED)
    assert facts["node.draining"] is True
    assert facts["evidence.symptoms"] == ["evicted"]
    assert "eviction.seen" not in facts  # an API eviction, not the kubelet's


def test_kubectl_drain_pod_evicted_line_shows_a_drain() -> None:
    facts = joined_facts(KUBECTL_DRAIN_OLD_VERB)
    assert facts["node.draining"] is True
    assert "eviction.seen" not in facts


def test_a_refused_drain_is_only_a_cordon() -> None:
    facts = joined_facts(KUBECTL_DRAIN_REFUSED)
    assert facts["node.unschedulable"] is True
    assert "node.draining" not in facts
    assert "evidence.symptoms" not in facts


def test_karpenter_disruption_events_are_a_drain_not_a_kubelet_eviction() -> None:
    facts = first_facts(KARPENTER_EVENTS)
    assert facts["node.draining"] is True
    assert "eviction.seen" not in facts
    assert "eviction.resource" not in facts


def test_kubelet_termination_condition_is_the_kubelet_s_eviction() -> None:
    facts = first_facts(KUBELET_TERMINATION_CONDITION)
    assert facts["pod.disruption_target"] == "TerminationByKubelet"
    assert facts["eviction.seen"] is True
    assert facts["eviction.resource"] == "ephemeral-storage"
    assert "node.draining" not in facts


# ---- the upstream wordings rendered with sample values --------------------------------------------------------

# kubernetes/kubectl pkg/drain/drain.go and pkg/cmd/drain/drain.go (1.18-1.34; the quoted forms before 1.11)
KUBECTL_LINES = [
    ("evicting pod ml/trainer-0", {"node.draining": True}),
    ('pod/trainer-0 evicted', {"node.draining": True}),
    ('pod "trainer-0" evicted', {"node.draining": True}),
    ("node/gpu-a100-07 drained", {"node.draining": True}),
    ('node "gpu-a100-07" drained', {"node.draining": True}),
    ('error when evicting pods/"trainer-0" -n "ml" (will retry after 5s): Cannot evict pod as it would violate '
     "the pod's disruption budget.", {"node.draining": True}),
    ("node/gpu-a100-07 cordoned", {"node.unschedulable": True}),
    ("node/gpu-a100-07 already cordoned", {"node.unschedulable": True}),
    ('node "gpu-a100-07" cordoned', {"node.unschedulable": True}),
]


@pytest.mark.parametrize(("line", "expected"), KUBECTL_LINES, ids=[line[:40] for line, _ in KUBECTL_LINES])
def test_kubectl_wordings(line: str, expected: dict[str, object]) -> None:
    facts = joined_facts(line + "\n")
    assert {k: facts.get(k) for k in expected} == expected
    if "node.unschedulable" in expected:
        assert "node.draining" not in facts  # a cordon evicts nothing


@pytest.mark.parametrize("line", ["evicting pod ml/trainer-0 (dry run)", "evicting pod ml/trainer-0 (server dry run)"])
def test_a_dry_run_evicts_nothing(line: str) -> None:
    assert "node.draining" not in joined_facts(line + "\n")


def _events_table(rows: list[tuple[str, str, str, str]]) -> str:
    """`kubectl get events` as kubectl prints it (LAST SEEN TYPE REASON OBJECT MESSAGE)."""
    out = f"{'LAST SEEN':<12}{'TYPE':<10}{'REASON':<24}{'OBJECT':<40}MESSAGE\n"
    return out + "".join(f"{'2m':<12}{t:<10}{r:<24}{o:<40}{m}\n" for t, r, o, m in rows)


# kubernetes/autoscaler cluster-autoscaler/core/scaledown/actuation (drain.go, actuator.go), 1.21-1.31
AUTOSCALER = [("Normal", "ScaleDown", "node/gpu-a100-07", "marked the node as toBeDeleted/unschedulable"),
              ("Normal", "ScaleDown", "pod/trainer-0", "deleting pod for node scale down")]
# kubernetes-sigs/karpenter pkg/controllers/disruption/events/events.go and terminator/events/events.go
KARPENTER = [("Normal", "DisruptionTerminating", "node/gpu-a100-07", "Disrupting Node: Underutilized/Delete"),
             ("Normal", "Evicted", "pod/trainer-0", "Evicted pod: Underutilized")]


@pytest.mark.parametrize("rows", [AUTOSCALER, KARPENTER, AUTOSCALER[1:], KARPENTER[1:]],
                         ids=["autoscaler", "karpenter", "autoscaler-pod", "karpenter-pod"])
def test_controller_drain_events(rows: list[tuple[str, str, str, str]]) -> None:
    facts = first_facts(_events_table(rows))
    assert facts["node.draining"] is True
    assert "eviction.seen" not in facts


def test_the_kubelet_s_evicted_event_is_no_drain() -> None:
    facts = first_facts(_events_table([("Warning", "Evicted", "pod/trainer-0",
                                        "The node was low on resource: memory. Threshold quantity: 100Mi, "
                                        "available: 91260Ki.")]))
    assert facts["eviction.seen"] is True
    assert "node.draining" not in facts


def test_the_autoscaler_s_klog_event_line() -> None:
    line = ('I0912 20:02:21.630121       1 event_sink_logging_wrapper.go:48] Event(v1.ObjectReference{Kind:"Pod", '
            'Namespace:"ml", Name:"trainer-0"}): type: \'Normal\' reason: \'ScaleDown\' deleting pod for node scale '
            "down\n")
    assert joined_facts(line)["node.draining"] is True


def test_karpenter_disrupting_line() -> None:
    assert joined_facts("Disrupting Node: Drift/Delete\n")["node.draining"] is True


# kubernetes pkg/registry/core/pod/storage/eviction.go (addConditionAndDeletePod, 1.26 on) and the other writers of
# the DisruptionTarget condition (pkg/apis/core types: PreemptionByScheduler, DeletionByTaintManager)
def _pod(reason: str, message: str) -> str:
    return f"""apiVersion: v1
kind: Pod
metadata:
  name: trainer-0
  namespace: ml
spec:
  nodeName: gpu-a100-07
status:
  phase: Running
  conditions:
  - lastProbeTime: null
    lastTransitionTime: "2026-11-02T03:10:00Z"
    message: '{message}'
    reason: {reason}
    status: "True"
    type: DisruptionTarget
"""


def test_eviction_api_condition() -> None:
    facts = first_facts(_pod("EvictionByEvictionAPI", "Eviction API: evicting"))
    assert facts["pod.disruption_target"] == "EvictionByEvictionAPI"
    assert "eviction.seen" not in facts
    assert "scheduling.preempted" not in facts


def test_scheduler_preemption_condition() -> None:
    facts = first_facts(_pod("PreemptionByScheduler", "Preempted by pod 1b2c"))
    assert facts["pod.disruption_target"] == "PreemptionByScheduler"
    assert facts["scheduling.preempted"] is True


def test_taint_manager_condition() -> None:
    facts = first_facts(_pod("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint"))
    assert facts["pod.disruption_target"] == "DeletionByTaintManager"
    assert "eviction.seen" not in facts
    assert "node.draining" not in facts


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=200))
def test_drain_wordings_never_raise(tail: str) -> None:
    facts = joined_facts(f"evicting pod {tail}\npod/{tail} evicted\nnode/{tail} drained\n")
    assert facts.get("node.draining") in (None, True)


# ---- kubectl drain's lines kept as a JSON string by the program that ran it (signals.yaml
# kubectl-drain-evicted-quoted) --------------------------------------------------------------------------------
# https://github.com/litmuschaos/litmus/pull/399 (an Ansible task's registered stdout, its lines joined by "\n")
ANSIBLE_DRAIN_STDOUT = (
    '"stdout": "node/gke-e2e-cstor-dev-1-default-pool-224a4771-k4z6 cordoned\\npod/litmus-percona-p9f2g-2z6j4 '
    'evicted\\npod/openebs-provisioner-7c944cfd97-jmsh6 evicted\\n"'
)


@pytest.mark.parametrize("text", [
    ANSIBLE_DRAIN_STDOUT,
    # Composed: Ansible's stdout_lines list of the same output, as its command module registers it.
    '"stdout_lines": ["node/n1 cordoned", "pod/web-1 evicted", "node/n1 drained"]',
])
def test_drain_output_kept_in_a_json_string_is_a_drain(text: str) -> None:
    facts = joined_facts(text)
    assert facts["node.draining"] is True and facts["evidence.symptoms"] == ["evicted"]


@pytest.mark.parametrize("text", [
    '"stdout": "node/n1 cordoned\\npod/web-1 evicted (dry run)\\n"',  # a dry run evicts nothing
    '"msg": "the pod/web-1 evicted yesterday was rescheduled"',  # words around it: not the drain's line
])
def test_a_quoted_dry_run_or_sentence_is_no_drain(text: str) -> None:
    assert "node.draining" not in joined_facts(text)
