"""Node and kubelet forms first-sight batches showed unread (round 12), each read from a paste of ANOTHER public
thread than the case that revealed it (the URL beside each), with the neighbours that must stay unread. The
wordings are catalogued from upstream source in collectors/catalogs/signals.yaml and k8s_wordings.yaml."""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.messages.k8s_scheduling import scheduling_reasons
from collectors.text import normalise
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import first_facts as facts

# https://github.com/moby/moby/issues/38642 (a comment): the kubelet's image status call through dockershim.
KUBELET_DOCKERSHIM_UNREACHABLE = (
    'Jan 29 18:05:56 ip-x-x-x-x kubelet[8755]: E0129 18:05:55.999452    8755 kuberuntime_image.go:87] ImageStatus '
    'for image {"k8s.gcr.io/pause-amd64:3.0"} failed: rpc error: code = Unknown desc = Cannot connect to the Docker '
    'daemon at unix:///var/run/docker.sock. Is the docker daemon running?')
# https://github.com/kubernetes/kubernetes/issues/33433 (description): a 1.4 kubelet before the CRI, lines as pasted.
KUBELET_PRE_CRI_UNREACHABLE = (
    "22:06:11.000\n"
    "GenericPLEG: Unable to retrieve pods: Cannot connect to the Docker daemon. Is the docker daemon running on this "
    "host?\n"
    "22:06:13.000\n"
    "Container runtime sanity check failed: docker: failed to get docker version: Cannot connect to the Docker daemon. "
    "Is the docker daemon running on this host?")
# https://github.com/moby/moby/issues/34944 (a comment): a person's own docker CLI, no kubelet in it.
DOCKER_CLI_UNREACHABLE = (
    "docker ps\n"
    "Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?")


# https://github.com/kubernetes/kubernetes/issues/101444 (description): the lines after the FailedMount event's first.
MOUNT_REPORT_CUT = (
    "Mounting command: systemd-run\n"
    "Mounting arguments: --description=Kubernetes transient mount for /var/lib/kubelet/plugins/kubernetes.io/aws-ebs/"
    "mounts/aws/us-east-2a/vol-087b3e95d1aa21e03 --scope -- mount -t xfs -o debug,defaults /dev/xvdbq "
    "/var/lib/kubelet/plugins/kubernetes.io/aws-ebs/mounts/aws/us-east-2a/vol-087b3e95d1aa21e03\n"
    "Output: Running scope as unit run-4113.scope.\n"
    "mount: /var/lib/kubelet/plugins/kubernetes.io/aws-ebs/mounts/aws/us-east-2a/vol-087b3e95d1aa21e03: wrong fs "
    "type, bad option, bad superblock on /dev/nvme1n1, missing codepage or helper program, or other error.")
# https://github.com/k3s-io/k3s/issues/1902 (a comment): the same report without systemd-run, an iSCSI volume.
MOUNT_REPORT_ISCSI = (
    "Mounting command: mount\n"
    "Mounting arguments: -t ext4 -o defaults /dev/disk/by-path/ip-10.42.2.21:3260-iscsi-iqn.2020-06.k3s-test:testvol-"
    "lun-0 /var/lib/kubelet/plugins/kubernetes.io/iscsi/iface-default/10.42.2.21:3260-iqn.2020-06.k3s-test:testvol-"
    "lun-0")
# https://github.com/hpe-storage/python-hpedockerplugin/issues/101 (description): mount(8)'s words from a Docker
# volume plugin, not the kubelet: no pod waits on it.
MOUNT_OUTSIDE_KUBELET = (
    "mount: /opt/hpe/data/hpedocker-scsi-360002ac00000000000015be400019d52: wrong fs type, bad option, bad superblock "
    "on /dev/sdg, missing codepage or helper program, or other error.")


# https://github.com/gardener/machine-controller-manager/issues/208 (a comment): a kubelet starting, nothing wrong.
KUBELET_START_EVENTS = PASTES["mcm-208-node-events-kubelet-starting"]


def test_a_kubelet_starting_says_nothing_is_wrong_with_the_node() -> None:
    read = facts(KUBELET_START_EVENTS)
    assert "NotReady" not in (read.get("node.conditions") or [])
    assert "node-not-ready" not in (read.get("evidence.symptoms") or [])


def test_entities_for_non_breaking_spaces_read_as_spaces_line_for_line() -> None:
    assert normalise("a&nbsp;b&#160;c\r\nd") == "a b c\nd"
    assert normalise("AT&T &amp; co") == "AT&T &amp; co"


def test_the_old_gpu_resource_name_is_a_gpu() -> None:
    # kubernetes/kubernetes pkg/api/types.go ResourceNvidiaGPU, 1.3-1.9.
    assert scheduling_reasons("0/3 nodes are available: 3 Insufficient alpha.kubernetes.io/nvidia-gpu.") == [
        "insufficient-gpu"]
    assert scheduling_reasons("0/3 nodes are available: 3 Insufficient example.com/gpu-memory.") == [
        "insufficient-other"]


# kubectl 1.0-1.1 printed NAME LABELS STATUS; a page copied from its HTML keeps &nbsp; as the padding, and a
# markdown quote keeps its "> " marks. Synthetic, in the layout of pkg/kubectl/resource_printer.go nodeColumns.
LABELLED_NODE_TABLE = ("> kubectl get nodes\n"
                       "> NAME&nbsp;&nbsp;&nbsp; LABELS&nbsp;&nbsp;&nbsp; STATUS&nbsp;&nbsp; AGE\n"
                       "> node-1&nbsp;&nbsp; kubernetes.io/hostname=node-1&nbsp; Ready&nbsp; 2d\n"
                       "> node-2&nbsp;&nbsp; <none>&nbsp;&nbsp; NotReady&nbsp; 2d\n")
RUNTIME_DOWN = {"node.not_ready_reasons": ["runtime-down"]}
MOUNT_FAILED = {"volume.mount_failed": True, "volume.errors": ["mount-failed"]}
EVICTED = {"eviction.seen": True, "pod.status.reason": "Evicted"}

# (text, the facts it gives, None: not given; whether it names node-not-ready, None: not asked)
CASES = [
    pytest.param(KUBELET_DOCKERSHIM_UNREACHABLE, RUNTIME_DOWN, True, id="the-kubelet-failing-to-reach-dockershim"),
    pytest.param(KUBELET_PRE_CRI_UNREACHABLE, RUNTIME_DOWN, True,
                 id="the-kubelet-before-the-cri-failing-to-reach-docker"),
    pytest.param(DOCKER_CLI_UNREACHABLE, {"node.not_ready_reasons": None}, False,
                 id="a-person-failing-to-reach-docker-names-no-node-fault"),
    pytest.param(MOUNT_REPORT_CUT, MOUNT_FAILED, None, id="the-mount-librarys-report-is-a-failed-mount"),
    pytest.param(MOUNT_REPORT_ISCSI, MOUNT_FAILED, None, id="the-mount-librarys-report-of-an-iscsi-volume"),
    pytest.param(MOUNT_OUTSIDE_KUBELET, {"volume.mount_failed": None}, None,
                 id="mounts-words-outside-the-kubelet-are-not-a-pods-mount"),
    # A sentence written for the test: the stated catalog's NodeNotReady term (the event reason) in prose.
    pytest.param("After a minute the node went to NodeNotReady and every pod on it stayed Pending.",
                 {"node.conditions": ["NotReady"]}, None, id="node-not-ready-said-as-the-events-name-is-the-condition"),
    pytest.param(LABELLED_NODE_TABLE, {"node.conditions": ["NotReady"], "node.name": "node-2"}, None,
                 id="a-labelled-node-table-behind-quotes-and-entities-is-read"),
    # No public paste of the key=value pair other than the case's was found: synthetic lines, the pair as
    # pkg/kubelet/eviction/eviction_manager.go evictPod sets it (Phase Failed, Reason Evicted), printed as key=value.
    pytest.param("trainer-7c9f8-x2x7q   phase=Failed reason=Evicted   3h", EVICTED, None,
                 id="phase-failed-beside-reason-evicted-is-an-eviction"),
    pytest.param("status: {phase: Failed, reason: Evicted}", EVICTED, None,
                 id="phase-failed-and-reason-evicted-in-yaml"),
    pytest.param("worker-0 reason=Evicted phase=Failed", EVICTED, None, id="reason-evicted-before-phase-failed"),
    pytest.param("phase=Running reason=Evicted", {"eviction.seen": None}, None,
                 id="reason-evicted-without-a-failed-phase-is-not-the-pair"),
]


@pytest.mark.parametrize(("text", "expected", "node_not_ready"), CASES)
def test_a_node_or_kubelet_form_is_read(text: str, expected: dict[str, object], node_not_ready: bool | None) -> None:
    read = facts(text)
    assert {name: read.get(name) for name in expected} == expected
    if node_not_ready is not None:
        assert ("node-not-ready" in (read.get("evidence.symptoms") or [])) is node_not_ready
