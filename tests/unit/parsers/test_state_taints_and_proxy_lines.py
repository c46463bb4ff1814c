"""Families first sight showed misread (issue 24, round 11, class d): the taints Kubernetes puts on a node for its
state (pressure, unreachable, not-ready) read as that state rather than as a taint someone chose. Each is read
from a paste of another public thread than the case that revealed it (the URL is in first_sight_pastes.yaml);
the wordings are catalogued from the upstream source (signals.yaml, k8s_wordings.yaml)."""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.messages.k8s_scheduling import scheduling_facts
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import first_facts, joined_facts


def _symptoms(read: dict[str, object]) -> list[str]:
    value = read.get("evidence.symptoms")
    return [str(v) for v in value] if isinstance(value, list) else []


def test_a_pressure_taint_in_a_node_description_is_read_as_the_nodes_taint() -> None:
    read = first_facts(PASTES["k8s-93711-describe-node-disk-pressure-taint"])
    assert read.get("node.taints") == ["node.kubernetes.io/disk-pressure:NoSchedule"]
    # The controller sets the taint only while the condition holds (read as a text; a node description's own
    # Conditions table says it where it was pasted).
    assert joined_facts(PASTES["k8s-93711-describe-node-disk-pressure-taint"]).get("node.conditions") == [
        "DiskPressure"]
    # The taint alone names no symptom: new pods wait, running ones may be evicted.
    assert not read.get("evidence.symptoms")


@pytest.mark.parametrize(("key", "condition"), [
    ("memory-pressure", "MemoryPressure"), ("disk-pressure", "DiskPressure"), ("pid-pressure", "PIDPressure")])
@pytest.mark.parametrize("layout", [
    # k8s.io/kubectl pkg/describe printTaintsMultiline: the first taint after the field's name, the rest indented.
    "Taints:             node.kubernetes.io/{key}:NoSchedule\nUnschedulable:      false\n",
    "Taints:             example.com/dedicated=gpu:NoSchedule\n"
    "                    node.kubernetes.io/{key}:NoSchedule\n",
])
def test_every_pressure_taint_line_gives_its_condition(key: str, condition: str, layout: str) -> None:
    read = joined_facts(layout.format(key=key))
    assert f"node.kubernetes.io/{key}:NoSchedule" in (read.get("node.taints") or [])  # type: ignore[operator]
    assert read.get("node.conditions") == [condition]


def test_the_scheduler_naming_a_pressure_taint_leads_with_the_pressure() -> None:
    read = first_facts(PASTES["snowdrop-k8s-infra-249-failedscheduling-disk-pressure-taint"])
    assert read.get("scheduling.leading_reasons") == ["node-pressure"]
    assert read.get("scheduling.reason_nodes") == ["node-pressure=1"]
    # The taint is still named: the pod does not tolerate it.
    assert read.get("scheduling.reasons") == ["node-pressure", "untolerated-taint"]


@pytest.mark.parametrize(("key", "state"), [
    ("node.kubernetes.io/memory-pressure", "node-pressure"),
    ("node.kubernetes.io/pid-pressure", "node-pressure"),
    ("node.kubernetes.io/disk-pressure", "node-pressure"),
    ("node.kubernetes.io/not-ready", "node-not-ready"),
    ("node.kubernetes.io/unreachable", "node-not-ready"),
    ("node.kubernetes.io/unschedulable", "unschedulable-node"),
    ("node.kubernetes.io/network-unavailable", "node-not-ready"),
])
@pytest.mark.parametrize("template", [
    # pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go, 1.25-1.31 and 1.19-1.24
    "0/{n} nodes are available: {n} node(s) had untolerated taint {{{key}: }}. preemption: 0/{n} nodes are "
    "available: {n} Preemption is not helpful for scheduling.",
    "0/{n} nodes are available: {n} node(s) had taint {{{key}: }}, that the pod didn't tolerate.",
])
def test_every_state_taint_leads_as_its_state(key: str, state: str, template: str) -> None:
    read = dict(scheduling_facts(template.format(n=3, key=key)))
    assert read["scheduling.leading_reasons"] == [state]
    assert read["scheduling.reason_nodes"] == [f"{state}=3"]


def test_a_taint_someone_chose_beside_a_state_taint_is_still_counted() -> None:
    read = dict(scheduling_facts(
        "0/4 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/disk-pressure: }, 3 node(s) "
        "had untolerated taint {nvidia.com/gpu: present}."))
    assert read["scheduling.leading_reasons"] == ["untolerated-taint"]
    assert read["scheduling.reason_nodes"] == ["untolerated-taint=3", "node-pressure=1"]


def test_a_tolerations_line_names_no_taint_of_the_node() -> None:
    # A pod's tolerations name the same keys (kubectl describe pod, DaemonSet pods); they are not the node's taints.
    read = joined_facts("Tolerations:     node.kubernetes.io/disk-pressure:NoSchedule op=Exists")
    assert "node.taints" not in read


# ---- Kong's own answers (proxies.yaml kong-*; the templates are rendered by test_network_catalog.py) -------------

def test_kongs_ring_balancer_body_is_a_request_kong_answered_for_want_of_a_peer() -> None:
    read = joined_facts(PASTES["kong-7156-ring-balancer-body-in-prose"])
    assert read.get("http.failure_kinds") == ["no-upstream"]
    assert read.get("evidence.symptoms") == ["error-rate"]


def test_kongs_502_body_is_a_connection_it_could_not_use() -> None:
    read = joined_facts(PASTES["kong-7165-invalid-upstream-response-body-in-prose"])
    assert read.get("http.failure_kinds") == ["connection-failure"]
    assert read.get("evidence.symptoms") == ["error-rate"]


@pytest.mark.parametrize("line", [
    # Kong's 404 for a path no Route matches is routing, not a failing backend.
    '{"message":"no Route matched with those values"}',
    # A question naming the message is no answer Kong gave.
    "what does the upstream server is timing out mean?",
])
def test_kongs_other_answers_name_no_failing_backend(line: str) -> None:
    read = joined_facts(line)
    assert "error-rate" not in _symptoms(read)
    assert "http.failure_kinds" not in read


# ---- CSI node plugins refusing an operation while an earlier one on the volume is held (signals.yaml) ----------

# The node server's own line, as ceph-csi (internal/cephfs/nodeserver.go, behind its "ID: <n> Req-ID: <volume>"
# prefix) and the drivers with a node.go (aws-ebs, gce-pd) log it, rendered with sample values.
CSI_NODE_TEMPLATE = ("E0101 10:00:00.000001       1 {file}:{line}] ID: 12 Req-ID: {vol} an operation with the given "
                     "Volume ID {vol} already exists")


@pytest.mark.parametrize("file", ["nodeserver.go", "node.go"])
def test_a_node_plugin_refusing_a_held_volume_is_a_mount_that_does_not_happen(file: str) -> None:
    read = joined_facts(CSI_NODE_TEMPLATE.format(file=file, line=540, vol="0001-0009-rook-ceph-0000000000000001-ab"))
    assert read.get("volume.mount_failed") is True
    assert read.get("evidence.symptoms") == ["container-creating"]


@pytest.mark.parametrize("line", [
    # The controller refuses CreateVolume with the same words: a claim that waits, not a pod's mount.
    PASTES["ceph-csi-2712-controllerserver-operation-exists"],
    # The kubelet's unmount of a volume that waits: a pod going away.
    PASTES["ceph-csi-4851-kubelet-unmountdevice-operation-exists"],
    # An unmount that waits is a pod going away.
    "E0101 10:00:00.000001       1 nodeserver.go:612] ID: 9 Req-ID: v-1 NodeUnstageVolume: an operation with the "
    "given Volume ID v-1 already exists",
])
def test_the_same_words_from_the_controller_or_an_unmount_name_no_stuck_start(line: str) -> None:
    read = joined_facts(line)
    assert "volume.mount_failed" not in read
    assert "container-creating" not in _symptoms(read)


# ---- an alertname label holding spaces (Alertmanager's default.tmpl __text_alert_list, rendered) ----------------

TEXT_ALERT_LIST = """\
Labels:
 - alertname = {name}
 - instance = node-3
 - severity = warning
Annotations:
 - summary = disk almost full
"""


def test_an_alertname_label_is_the_alerts_name_whatever_it_holds() -> None:
    read = first_facts(TEXT_ALERT_LIST.format(name="test DiskRunningFull2"))
    assert read.get("alert.names") == ["test DiskRunningFull2"]


def test_a_template_placeholder_is_no_alert_name() -> None:
    read = first_facts(TEXT_ALERT_LIST.format(name="{{ $labels.alertname }}"))
    assert "alert.names" not in read



# ---- a CPU limit said to slow a service ------------------------------------------------------------------------
# Its before/after experiment told in prose (signals.yaml cpu-limit-removed-latency-fell), and CFS throttling said
# in words to raise the latency (signals.yaml cpu-throttling-said-to-slow).

# (sentence, cpu.limit_slowed: True when read, None when not)
LIMIT_SLOWED: list[tuple[str, bool | None]] = [
    # A limit lifted and the latency that fell.
    # https://github.com/kubernetes/kubernetes/issues/51135 (comment by szuecs, 2018-03-15)
    ("This is kind of a blocker for production clusters, because you can not set CPU limits for all latency critical "
     "applications. When we dropped the CPU limits from our ingress controller we got 12-20x less latency for the p99.",
     True),
    # Rendered: the limit's removal and the spikes it stopped, as operators write it.
    ("Removing the CPU limit stopped the latency spikes on the proxy.", True),
    # A limit with no latency falling.
    # https://github.com/davidsbond/homelab/pull/187 (description): limits added to cap CPU spikes, no latency.
    ("Currently, prometheus, minio and the minecraf backup cause CPU spikes. Adding these small CPU limits\n"
     "should mitigate this somewhat.", None),
    # https://github.com/giantswarm/happa/pull/676: the experiment made, with no effect.
    ("Testing the impact of our current CPU limit compared with no limit.\nThis had no measureable effect.", None),
    # CPU spikes a removal stopped are the limit's own business, not a latency.
    ("Removing the CPU limit stopped the CPU spikes from being throttled.", None),
    # CPU throttling said to raise the latency.
    # Rule sentences: the CPU, a throttled container and a latency in one line.
    ("The sidecar gets CPU throttled at its limit and this raises our p99 latency.", True),
    ("Our tail latency went up because the pods are being throttled by the CFS quota.", True),
    # Throttling that is not the CPU's, or is denied.
    # client-go's rate limiter, not the CPU's quota.
    ("I1121 10:00:00.000000 1 request.go:601] Waited for 1.0s due to client-side throttling, not priority and "
     "fairness, request: GET:https://10.96.0.1:443/api/v1/pods?cpu=1 latency", None),
    # Throttling of something else, no CPU named.
    ("The API is throttled by the rate limiter and the request latency is fine.", None),
    # Throttling said to be absent.
    ("There is no CPU throttling at all, yet the p99 latency is high.", None),
]


@pytest.mark.parametrize(("sentence", "slowed"), LIMIT_SLOWED)
def test_a_cpu_limit_said_to_slow_a_service_is_read(sentence: str, slowed: bool | None) -> None:
    assert joined_facts(sentence).get("cpu.limit_slowed") == slowed


@pytest.mark.parametrize("line", [
    # https://github.com/traefik/traefik/issues/9242 (the reporter expected a 503 and got a 404)
    'I expected in this case, that an error "503 Service Unavailable" in this case, indicating that the requested '
    "service is known, but not available currently. IIRC, Traefik1 behaved that way, but I am not sure. ",
])
def test_a_status_someone_expected_is_not_one_they_saw(line: str) -> None:
    assert "http.error_statuses" not in first_facts(line)


# ---- CFS throttling said in words to be heavy, or to stop a container short of its CPU (signals.yaml
# cpu-throttling-said-heavy) ----------------------------------------------------------------------------------

@pytest.mark.parametrize("sentence", [
    # https://github.com/coreos/bugs/issues/2623 (description, Actual Behavior)
    "Highly threaded, I/O blocked containers running on Kubernetes on CoreOS are heavily throttled well before they "
    "approach their CPU request. We are seeing **CPU performance impact of 50% in production for some Java web "
    "applications**- i.e. if we request 6 cores, we are throttled at 3.",
    # Rule sentence: the CPU quota first, the heavy throttling after it.
    "With a CPU limit of 2 the JVM is severely throttled during garbage collection.",
])
def test_cpu_throttling_said_heavy_is_read(sentence: str) -> None:
    assert joined_facts(sentence).get("cpu.limit_slowed") is True


@pytest.mark.parametrize("sentence", [
    "The GPU is heavily throttled, the CPU is at 20%.",  # a GPU's clocks, not the CPU quota
    "The pods are not heavily throttled by the CPU limit.",  # denied
    "Is the container heavily throttled by its CPU quota?",  # asked
    "Our API calls are heavily throttled by the cloud provider's rate limit.",  # no CPU named
    "I0301 10:00:00.000 1 request.go:601] Waited for 1.0s due to client-side throttling, not priority and fairness",
])
def test_other_throttling_or_a_denied_one_is_not_read(sentence: str) -> None:
    assert "cpu.limit_slowed" not in joined_facts(sentence)
