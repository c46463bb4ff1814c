"""Events parser: `kubectl get events` tables, describe Events blocks, JSON, and what the events mean."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes import events
from collectors.parsers.kubernetes.messages.k8s_messages import eviction_resource, library_repository, pull_error_kind
from collectors.parsers.kubernetes.messages.k8s_scheduling import nodes_total, scheduling_reasons
from tests.unit.parsers.cited_fixtures import cited, fixture_tests

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "events"


def parse_text(text: str, **kwargs: str) -> ParseResult:
    return events.parse(Artifact(id="a1", kind=ArtifactKind.EVENTS, content=text, **kwargs))


def parse(name: str) -> ParseResult:
    return parse_text((FIXTURES / name).read_text(encoding="utf-8"))


EXPECTED = [
    ("get_events.txt", "rollout.recent", True, 2, 2, "deployment/checkout"),
    ("get_events.txt", "scheduling.failed", True, 4, 4, "pod/llm-finetune-worker-3"),
    ("get_events.txt", "scheduling.nodes_total", 20, 4, 4, "pod/llm-finetune-worker-3"),
    ("get_events.txt", "scheduling.reasons",
     ["untolerated-taint", "insufficient-memory", "insufficient-gpu", "preemption-not-helpful"], 4, 4,
     "pod/llm-finetune-worker-3"),
    ("get_events.txt", "eviction.seen", True, 5, 5, "pod/checkout-7d9f8c6b5-x2lzp"),
    ("get_events.txt", "eviction.resource", "memory", 5, 5, "pod/checkout-7d9f8c6b5-x2lzp"),
    # the specific pull error wins over `Error: ErrImagePull` and `Back-off pulling image`
    ("get_events.txt", "image.pull_error", "not-found", 8, 8, "pod/report-gen-5f6d7c8b9-q7w2e"),
    ("get_events.txt", "image.name", "registry.example.com/shop/report-gen:2.3.0", 8, 8,
     "pod/report-gen-5f6d7c8b9-q7w2e"),
    ("get_events.txt", "probe.failures", ["liveness"], 12, 12, "pod/triton-serving-gpu-6c9d8f7b5-kx2vq"),
    ("get_events.txt", "container.liveness_killed", True, 13, 13, "pod/triton-serving-gpu-6c9d8f7b5-kx2vq"),
    ("get_events.txt", "volume.mount_failed", True, 14, 14, "pod/imagenet-loader-0"),
    ("get_events.txt", "events.reasons", ["BackOff"], 10, 10, ""),
    # -A -o wide: NAMESPACE, SUBOBJECT and SOURCE columns, MESSAGE in the middle
    ("get_events_wide.txt", "quota.exceeded", True, 2, 2, "job/ml-team/nightly-eval"),
    ("get_events_wide.txt", "scheduling.reasons", ["quota-exceeded"], 2, 2, "job/ml-team/nightly-eval"),
    ("get_events_wide.txt", "quota.resources_at_limit", ["requests.nvidia.com/gpu"], 2, 2,
     "job/ml-team/nightly-eval"),
    ("get_events_wide.txt", "scheduling.preempted", True, 3, 3, "pod/ml-team/sweep-trial-17"),
    ("get_events_wide.txt", "kernel.oom_kill", True, 4, 4, "node/gpu-node-2"),
    ("get_events_wide.txt", "kernel.oom_global", True, 4, 4, "node/gpu-node-2"),
    ("get_events_wide.txt", "kernel.oom_victims", ["dataloader"], 4, 4, "node/gpu-node-2"),
    ("get_events_wide.txt", "image.pull_error", "unauthorized", 5, 5, "pod/ml-team/private-model-0"),
    # a describe Events block on its own; seed 004 scenario 3, with the message wrapped by the terminal
    ("describe_block.txt", "scheduling.reasons", ["insufficient-gpu", "preemption-not-helpful"], 4, 5, ""),
    ("describe_block.txt", "scheduling.nodes_total", 10, 4, 5, ""),
    ("describe_block.txt", "events.reasons", ["NotTriggerScaleUp"], 6, 6, ""),
    # older scheduler wording
    ("old_wording.txt", "scheduling.reasons",
     ["untolerated-taint", "node-affinity", "volume-node-affinity", "unschedulable-node", "node-pressure"], 2, 2, ""),
    ("old_wording.txt", "scheduling.reasons", ["unbound-pvc"], 3, 3, ""),
    ("old_wording.txt", "scheduling.reasons", ["too-many-pods", "node-pressure"], 4, 4, ""),
    # an EventList as JSON goes through the object parser and is cited to the event's lines
    ("events.json", "scheduling.reasons", ["untolerated-taint", "insufficient-gpu", "preemption-not-helpful"], 19, 27,
     "pod/default/distributed-training-2"),
    ("events.json", "image.pull_error", "rate-limited", 50, 56, "pod/default/model-server-0"),
    ("events.json", "image.name", "docker.io/library/python:3.13-slim", 50, 56, "pod/default/model-server-0"),
]


test_fact_is_read_and_cited, _ = fixture_tests(parse, EXPECTED, FIXTURES)


@pytest.mark.parametrize("fixture", sorted(p.name for p in FIXTURES.iterdir()))
def test_fixtures_parse_cleanly_and_always_name_reasons(fixture: str) -> None:
    result = parse(fixture)
    assert result.problems == []
    assert "events.reasons" in cited(result)


def test_the_wrapped_message_is_joined() -> None:
    message = cited(parse("describe_block.txt"))["scheduling.message"][0][0]
    assert isinstance(message, str) and message.endswith("No preemption victims found for incoming pod.")


# k8s.io/mount-utils mount_linux.go (MountSensitive) puts the mount command and its output on lines of their own,
# at column 0 in a describe table; the rows after them are still rows of the same table. Rendered template.
MOUNT_OUTPUT = (
    "Events:\n"
    "  Type     Reason       Age   From     Message\n"
    "  ----     ------       ----  ----     -------\n"
    '  Warning  FailedMount  2m    kubelet  MountVolume.SetUp failed for volume "data" : mount failed: exit status 32\n'
    "Mounting command: mount\n"
    "Mounting arguments: -t nfs 10.0.0.5:/export /var/lib/kubelet/pods/uid/volumes/kubernetes.io~nfs/data\n"
    "Output: mount.nfs: Connection timed out\n"
    "  Warning  FailedMount  30s   kubelet  Unable to attach or mount volumes: unmounted volumes=[data], "
    "unattached volumes=[data]: timed out waiting for the condition\n")


def test_a_mount_failure_output_continues_the_message_and_the_table() -> None:
    facts = cited(parse_text(MOUNT_OUTPUT))
    errors = {e for value, *_ in facts["volume.errors"] for e in value}  # type: ignore[union-attr]
    assert errors == {"mount-failed", "mount-timeout"}


def test_namespace_comes_from_the_command_when_the_table_has_no_column() -> None:
    text = (FIXTURES / "get_events.txt").read_text(encoding="utf-8")
    result = parse_text(text, command="kubectl get events -n shop")
    assert ("pod/shop/checkout-7d9f8c6b5-x2lzp" in
            {f.subject for f in result.facts if f.name == "eviction.seen"})


def test_events_none_still_says_events_were_read() -> None:
    assert cited(parse_text("Events:  <none>\n  Type  Reason  Age  From  Message\n")).get("events.reasons") == [
        ([], 2, 2, "")]


def test_a_row_pasted_without_its_header() -> None:
    row = "  Warning  FailedScheduling  30m  default-scheduler  0/10 nodes are available: 10 Insufficient cpu"
    facts = cited(parse_text(row))
    assert facts["scheduling.reasons"] == [(["insufficient-cpu"], 1, 1, "")]


# A describe row as kubelet prints it (pkg/kubelet/kuberuntime/kuberuntime_manager.go, event
# FailedCreatePodSandBox), rendered, in each wrapper people paste one row in: Markdown inline code, a label of
# their own or a test runner's before it, a quote.
_SANDBOX_ROW = ("Warning  FailedCreatePodSandBox  3s (x4 over 6s)  kubelet, node-2  Failed to create pod sandbox: "
                "rpc error: code = Unknown desc = failed to setup network for sandbox \"0f31\": netplugin failed")


@pytest.mark.parametrize("wrapped", [
    f"``{_SANDBOX_ROW}``", f"`{_SANDBOX_ROW}`", f"[Error Message]  {_SANDBOX_ROW}", f"> `{_SANDBOX_ROW}`",
    f"[FAILED] event fired, got: LAST SEEN TYPE REASON OBJECT MESSAGE\n20s  {_SANDBOX_ROW}",
])
def test_a_row_in_a_wrapper_still_names_its_reason(wrapped: str) -> None:
    assert events.sniff(wrapped) >= 50
    assert cited(parse_text(wrapped))["events.reasons"][0][0] == ["FailedCreatePodSandBox"]


def test_a_json_array_is_still_structured_and_a_label_is_not() -> None:
    assert events._STRUCTURED.match('[\n  {"kind": "Event"}]') is not None
    assert events._STRUCTURED.match("[Error Message]  Warning  Failed") is None


SCHEDULING = [
    ("0/20 nodes are available: 1 node(s) had untolerated taint {spot-instance: true}, 3 Insufficient memory, "
     "16 Insufficient nvidia.com/gpu. preemption: 0/20 nodes are available: 20 Preemption is not helpful for "
     "scheduling.", ["untolerated-taint", "insufficient-memory", "insufficient-gpu", "preemption-not-helpful"]),
    ("0/20 nodes are available: 1 node had taint that pod didn't tolerate", ["untolerated-taint"]),
    ("0/10 nodes are available: 10 Insufficient nvidia.com/gpu", ["insufficient-gpu"]),
    ("0/4 nodes are available: 4 Insufficient cpu, 4 Insufficient nvidia.com/mig-1g.5gb.",
     ["insufficient-cpu", "insufficient-gpu"]),
    ("0/3 nodes are available: 3 node(s) had taints that the pod didn't tolerate.", ["untolerated-taint"]),
    ("0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unschedulable: }, "
     "2 node(s) had untolerated taint {node.kubernetes.io/memory-pressure: }.",
     ["unschedulable-node", "untolerated-taint", "node-pressure"]),
    ("0/2 nodes are available: 2 node(s) had taint {node.kubernetes.io/not-ready: }, that the pod didn't tolerate.",
     ["node-not-ready", "untolerated-taint"]),
    # A system taint is both: the node's state, and a taint this pod does not tolerate.
    ("0/3 nodes are available: 1 node(s) had untolerated taint {node.kubernetes.io/unreachable: }, 2 Insufficient "
     "cpu.", ["node-not-ready", "untolerated-taint", "insufficient-cpu"]),
    ("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector.", ["node-affinity"]),
    ("0/5 nodes are available: 5 node(s) didn't match pod anti-affinity rules.", ["pod-affinity"]),
    ("0/5 nodes are available: 5 node(s) didn't match pod topology spread constraints.", ["topology-spread"]),
    ('0/5 nodes are available: persistentvolumeclaim "data" not found.', ["unbound-pvc"]),
    ("0/5 nodes are available: 5 node(s) didn't have free ports for the requested pod ports.", ["host-port"]),
    ("0/5 nodes are available: 5 Insufficient rdma/hca.", ["insufficient-other"]),
    ("no nodes available to schedule pods", []),
    ("pod group is not ready, 2 Pending, 4 minAvailable", []),
]


@pytest.mark.parametrize(("message", "reasons"), SCHEDULING)
def test_scheduling_reasons(message: str, reasons: list[str]) -> None:
    assert scheduling_reasons(message) == reasons


@pytest.mark.parametrize(("message", "total"), [
    ("0/20 nodes are available: 1 node had taint that pod didn't tolerate", 20),
    ("no nodes available to schedule pods", 0), ("pod group is not ready", None),
])
def test_nodes_total(message: str, total: int | None) -> None:
    assert nodes_total(message) == total


PULLS = [
    ('failed to resolve reference "docker.io/library/foo:bar": docker.io/library/foo:bar: not found', "not-found"),
    ("manifest unknown: manifest tagged by \"v9\" is not found", "not-found"),
    ("failed to authorize: failed to fetch anonymous token: unexpected status: 401 Unauthorized", "unauthorized"),
    # The registry will not say whether the repository is missing or private...
    ("pull access denied for acme/private, repository does not exist or may require 'docker login'",
     "denied-or-missing"),
    # ...nor for a one-part name (an official docker.io/library image, all public: image.library_repository says
    # that, below; real text: carvel-dev/kapp-controller#378 and nigelpoulton/ckad#22).
    ("Error response from daemon: pull access denied for kbld, repository does not exist or may require 'docker "
     "login': denied: requested access to the resource is denied", "denied-or-missing"),
    ('failed to resolve reference "docker.io/library/ckad:blue": pull access denied, repository does not exist or '
     "may require authorization: server message: insufficient_scope: authorization failed", "denied-or-missing"),
    ('couldn\'t parse image name "images:ubuntu/24.04": invalid reference format', "not-found"),
    # cilium/image-tools#61: the tag has no build for the node's platform.
    ("rpc error: code = Unknown desc = no matching manifest for linux/arm/v7 in the manifest list entries",
     "not-found"),
    ("no basic auth credentials / authentication required", "unauthorized"),
    ("dial tcp 10.20.0.8:443: i/o timeout", "timeout"),
    ("rpc error: code = DeadlineExceeded desc = context deadline exceeded", "timeout"),
    ("429 Too Many Requests - Server message: toomanyrequests: You have reached your pull rate limit.",
     "rate-limited"),
    ("failed to extract layer: write /var/lib/containerd/tmp: no space left on device", "no-space"),
    ("x509: certificate signed by unknown authority", "tls"),
    ("Back-off pulling image \"nginx:1.27\"", "other"),
]


@pytest.mark.parametrize(("message", "kind"), PULLS)
def test_pull_error_kind(message: str, kind: str) -> None:
    assert pull_error_kind(message) == kind


@pytest.mark.parametrize(("message", "library"), [
    (PULLS[4][0], True),
    (PULLS[5][0], True),
    # kubernetes/website#14257, the whole pasted line
    ('Failed to pull image "rmeuser-auth:latest": rpc error: code = Unknown desc = Error response from daemon: pull '
     "access denied for rmeuser-auth, repository does not exist or may require 'docker login'", True),
    # cut right after the repository: moby always goes on with ", repository does not exist ..."
    ("Error response from daemon: pull access denied for kbld", True),
    ("pull access denied for acme/private, repository does not exist or may require 'docker login'", False),
    ('failed to resolve reference "docker.io/acme/app:1": pull access denied, repository does not exist or may '
     "require authorization", False),
])
def test_a_denial_under_the_library_namespace(message: str, library: bool) -> None:
    assert library_repository(message) is library


@pytest.mark.parametrize(("message", "resource"), [
    ("The node was low on resource: memory. Threshold quantity: 100Mi, available: 52Mi. Container x was using 8Gi, "
     "request is 2Gi, has larger consumption of memory.", "memory"),
    ("The node was low on resource: ephemeral-storage. Container x was using 12Gi, which exceeds its request of 0.",
     "ephemeral-storage"),
    ("The node had condition: [DiskPressure].", "ephemeral-storage"),
    # kubelet 1.5-1.8 formatted the admission refusal with "low on resource" and the node's condition list:
    # kubernetes/kubernetes#57442 (kube 1.8.5), https://github.com/kubernetes/kubernetes/issues/57442
    ("The node was low on resource: [DiskPressure].", "ephemeral-storage"),
    ("The node was low on resource: [MemoryPressure].", "memory"),
    # A condition the kubelet does not evict for is no resource.
    ("The node was low on resource: [NetworkUnavailable].", ""),
    ("Pod ephemeral local storage usage exceeds the total limit of containers 1Gi.", "ephemeral-storage"),
    ("Preempted by a pod on node gpu-node-1", ""),
])
def test_eviction_resource(message: str, resource: str) -> None:
    assert eviction_resource(message) == resource


def test_sniff() -> None:
    assert events.sniff((FIXTURES / "get_events.txt").read_text(encoding="utf-8")) >= 90
    assert events.sniff((FIXTURES / "events.json").read_text(encoding="utf-8")) >= 90
    assert events.sniff((FIXTURES / "describe_block.txt").read_text(encoding="utf-8")) >= 80
    pod = (FIXTURES.parent / "describe_pod" / "oomkilled.txt").read_text(encoding="utf-8")
    assert events.sniff(pod) < 30
    assert events.sniff('{"kind": "Pod", "apiVersion": "v1"}') == 0


def test_fifty_thousand_event_lines_keep_first_citation() -> None:
    # Speed is measured in benchmarks/, not here; this checks a long table is read to the same result.
    rows = (FIXTURES / "get_events.txt").read_text(encoding="utf-8").splitlines()
    text = "\n".join([rows[0]] + [rows[1 + i % (len(rows) - 1)] for i in range(50_000)])
    result = parse_text(text)
    assert ("not-found", 8, 8) in [(f.value, f.citation.start, f.citation.end) for f in result.facts
                                   if f.name == "image.pull_error"]


# ScalingReplicaSet, rendered as the deployment controller prints it (kubernetes pkg/controller/deployment/sync.go,
# scaleReplicaSet) in its three orders, as a `kubectl get events` row (finding 29.5).
_ROW = "3m   Normal   ScalingReplicaSet   deployment/{d}   Scaled {op} replica set {rs} {counts}\n"
_HEAD = "LAST SEEN   TYPE     REASON              OBJECT            MESSAGE\n"


@pytest.mark.parametrize("counts", ["to 0", "to 0 from 3", "from 3 to 0"])
def test_a_replica_set_scaled_to_zero_alone_is_no_rollout(counts: str) -> None:
    got = cited(parse_text(_HEAD + _ROW.format(d="web", op="down", rs="web-7f98c7b879", counts=counts)))
    assert "rollout.recent" not in got
    assert got["rollout.scaled_to_zero"] == [(True, 2, 2, "deployment/web")]


def test_an_old_replica_set_emptied_for_a_new_one_is_a_rollout() -> None:
    text = (_HEAD + _ROW.format(d="web", op="up", rs="web-68cdb75dc", counts="to 3 from 0")
            + _ROW.format(d="web", op="down", rs="web-7f98c7b879", counts="to 0 from 3"))
    got = cited(parse_text(text))
    assert "rollout.scaled_to_zero" not in got
    assert [v for v, *_ in got["rollout.recent"]] == [True]


def test_another_workload_s_rollout_does_not_make_a_scale_to_zero_one() -> None:
    text = (_HEAD + _ROW.format(d="api", op="up", rs="api-68cdb75dc", counts="to 2")
            + _ROW.format(d="web", op="down", rs="web-7f98c7b879", counts="to 0"))
    got = cited(parse_text(text))
    assert got["rollout.scaled_to_zero"] == [(True, 3, 3, "deployment/web")]
    assert got["rollout.recent"] == [(True, 2, 2, "deployment/api")]


def test_a_real_scale_up_is_still_a_rollout_or_scaling() -> None:
    # kedacore/http-add-on#601 (https://github.com/kedacore/http-add-on/issues/601), `kubectl get events` rows.
    text = ("53m         Normal    ScalingReplicaSet              deployment/podinfo"
            "                                               Scaled up replica set podinfo-64cd6479c9 to 1 from 0\n")
    got = cited(parse_text(text))
    assert [v for v, *_ in got["rollout.recent"]] == [True]
    assert "rollout.scaled_to_zero" not in got


@pytest.mark.parametrize("marker", ["[...]", "[ ... ]", "[…]", "[snip]", "[Cut]", "[truncated]"])
def test_rows_after_an_elision_marker_are_read_as_rows_not_json(marker: str) -> None:
    # People cut a describe down to its event rows and mark the cut with "[...]": that bracket opens no JSON.
    text = (f"{marker}\n"
            "  Warning  FailedCreatePodSandBox  19m   kubelet, node-1  Failed create pod sandbox: boom\n"
            "  Normal   SandboxChanged          16m (x21 over 21m)   kubelet, node-1  Pod sandbox changed, it will be"
            " killed and re-created.\n")
    assert events.sniff(text) >= 30
    reasons = [r for f in parse_text(text).facts if f.name == "events.reasons" for r in f.value]
    assert reasons == ["FailedCreatePodSandBox", "SandboxChanged"]


def test_a_json_list_still_goes_to_the_object_reader() -> None:
    text = '[{"kind": "Event", "reason": "BackOff", "type": "Warning", "message": "Back-off restarting"}]'
    assert events.sniff(text) == 95


def test_a_wrapped_eviction_row_keeps_its_per_container_sentence() -> None:
    # JiRaska/open-bank-oss#1218 (https://github.com/JiRaska/open-bank-oss/issues/1218): the kubelet's message ends
    # a sentence ("available: 392404Ki.") before the "Container ... was using" sentence it appends.
    text = ("Warning  Evicted  pod/openbank-build-7gwj7-runner-lbcb6\n"
            "  The node was low on resource: memory. Threshold quantity: 400Mi, available: 392404Ki.\n"
            "  Container dind was using 99532Ki, request is 0, has larger consumption of memory.\n")
    got = cited(parse_text(text))
    assert [(v, s, e) for v, s, e, _ in got["eviction.over_request"]] == [(True, 1, 3)]


def test_a_finished_sentence_still_ends_a_wrapped_row() -> None:
    # Synthetic: prose after a finished row is not its message (only the kubelet's per-container sentence is).
    text = ("Warning  Evicted  pod/web-1\n"
            "  The node was low on resource: memory. Threshold quantity: 100Mi, available: 90Mi.\n"
            "  Some later prose said the request is 0 here.\n")
    got = cited(parse_text(text))
    assert "eviction.over_request" not in got
    assert [v for v, *_ in got["eviction.resource"]] == ["memory"]


def test_an_old_kubelet_eviction_names_the_condition_in_brackets() -> None:
    # openshift/release#516 (https://github.com/openshift/release/issues/516), kubectl 1.8's tab-separated row.
    text = ("  1m\t\t1m\t\t1\tkubelet, origin-ci-ig-n-kwtq\t\t\tWarning\t\tEvicted\t\t"
            "The node was low on resource: [DiskPressure].\n")
    got = cited(parse_text(text))
    assert [v for v, *_ in got["eviction.resource"]] == ["ephemeral-storage"]
    assert [v for v, *_ in got["node.conditions"]] == [["DiskPressure"]]
