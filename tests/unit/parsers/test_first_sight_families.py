"""Families of text that batches e and f showed unread at first sight, each read from a paste of ANOTHER public
thread than the case that revealed it (the URL beside each), so the reading is shown to generalise. The
wordings themselves are catalogued from the upstream source of the program that prints them."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import first_facts as facts


@pytest.mark.parametrize(("text", "kind"), [
    # https://github.com/ciiiii/cloudflare-docker-proxy/issues/90 (a comment)
    ("-> docker pull 14790897/openwrt:86_64\n"
     "Error response from daemon: manifest for 14790897/openwrt:86_64 not found: manifest unknown: manifest unknown",
     "not-found"),
    # https://github.com/docker/hub-feedback/issues/1518 (description; a 2018 daemon, without the registry's cause)
    ("Error response from daemon: manifest for aaronngray/bpi-build:default not found", "not-found"),
])
def test_the_docker_daemons_pull_errors_are_pull_errors(text: str, kind: str) -> None:
    assert facts(text).get("image.pull_error") == kind


# https://github.com/kubernetes/kubernetes/issues/122338 (description): a kubelet 0.4 s after a manual restart.
KUBELET_STARTING = (
    'Dec 15 17:25:41 single1 kubenswrapper[1832249]: I1215 17:25:41.121883 1832249 setters.go:549] "Node became not '
    'ready" node="single1" condition={Type:Ready Status:False LastHeartbeatTime:2023-12-15 17:25:41.121753163 +0800 '
    'CST m=+0.403692528 LastTransitionTime:2023-12-15 17:25:41.121753163 +0800 CST m=+0.403692528 '
    'Reason:KubeletNotReady Message:[container runtime status check may not have completed yet, PLEG is not healthy: '
    'pleg has yet to be successful]}')
# https://github.com/kubernetes/kubernetes/issues/101056 (description): the same start-up phrase beside a PLEG that
# has not relisted for 16 minutes, which is a fault.
PLEG_STALLED = (
    'Apr 13 13:22:22 i-ie33j8hy kubelet[19792]: E0413 13:22:22.676030   19792 kubelet.go:1765] skipping pod '
    'synchronization - [container runtime status check may not have completed yet, PLEG is not healthy: pleg was last '
    'seen active 16m6.559177445s ago; threshold is 3m0s]')


def test_a_starting_kubelets_not_ready_names_no_fault() -> None:
    read = facts(KUBELET_STARTING)
    assert "node.not_ready_reasons" not in read
    assert "NotReady" not in (read.get("node.conditions") or [])


def test_the_start_up_phrase_beside_a_real_fault_keeps_the_fault() -> None:
    assert facts(PLEG_STALLED).get("node.not_ready_reasons") == ["pleg-unhealthy"]


STOPPED_POSTING_READY_CUT = PASTES["eks-ami-79-stopped-posting-ready-row-cut"]


def test_rows_the_controller_marked_unknown_say_ready_is_unknown_when_the_ready_row_is_cut() -> None:
    read = facts(STOPPED_POSTING_READY_CUT)
    assert read.get("node.conditions") == ["NotReady"]
    assert read.get("node.not_ready_reasons") == ["kubelet-stopped-posting"]


def test_a_shown_ready_row_decides_over_a_stale_unknown_row() -> None:
    # a synthetic Ready row appended to the paste: the rule under test, not evidence
    ready = ("  Ready            True      Tue, 13 Nov 2018 17:26:36 -0500   Fri, 02 Nov 2018 22:39:57 -0400   "
             "KubeletReady              kubelet is posting ready status\n")
    assert facts(STOPPED_POSTING_READY_CUT + ready).get("node.conditions") == []


REALWORLD = Path(__file__).resolve().parents[2] / "realworld"


def case_facts(case: str) -> dict[str, object]:
    return facts((REALWORLD / case / "evidence.txt").read_text(encoding="utf-8"))


def test_a_node_table_of_kubectl_1_5_without_version_or_roles_is_read() -> None:
    read = case_facts("node-not-ready/cabin-46-old-get-nodes-schedulingdisabled-negative")
    assert read.get("node.unschedulable") is True
    assert "pod.name" not in read  # not a pod table


def test_node_rows_under_their_command_without_a_header_are_read() -> None:
    read = case_facts("node-not-ready/k8s-issue-32522-gke-kc-get-nodes-no-roles")
    assert read.get("node.conditions") == ["NotReady"]
    assert read.get("node.name") == "gke-cluster-1-default-pool-777adf16-erra"


def test_a_namespace_table_is_not_a_node_table() -> None:
    # the header kubectl get namespaces shares with kubectl 1.5's nodes (synthetic rows)
    read = facts("$ kubectl get ns\nNAME          STATUS    AGE\ndefault       Active    21d\n"
                 "kube-system   Active    21d\n")
    assert "node.conditions" not in read and "node.unschedulable" not in read


def test_a_runtime_whose_init_was_oom_killed_says_the_containers_cgroup_ran_out() -> None:
    read = facts(PASTES["ecs-agent-3021-runc-init-oom-killed"])
    assert (read.get("kernel.oom_kill"), read.get("kernel.oom_memcg")) == (True, True)


@pytest.mark.parametrize(("row", "reason"), [
    # https://github.com/alauda/kubeflow-chart/issues/45 (description): an -A row quoted inline, cut after STATUS
    ("`kubeflow                    training-operator-8569f97489-zkxbt                            0/1     OOMKilled`。",
     "OOMKilled"),
])
def test_a_pod_row_quoted_inline_and_cut_after_its_status_is_read(row: str, reason: str) -> None:
    assert facts(row).get("container.last_terminated.reason") == reason


@pytest.mark.parametrize(("line", "target"), [
    # https://github.com/kubernetes/kubernetes/issues/22688 (kube-proxy's userspace proxier, a Go before 1.5)
    ("E0308 12:06:14.968642   28933 proxysocket.go:104] Dial failed: dial tcp 172.17.0.5:8080: connection refused",
     "172.17.0.5:8080"),
])
def test_a_go_clients_refused_dial_is_a_client_refusal(line: str, target: str) -> None:
    read = facts(line)
    assert (read.get("client.errors"), read.get("client.targets")) == (["refused"], [target])


@pytest.mark.parametrize("line", [
    # https://github.com/rancher/rancher/issues/16052 (description)
    'W1009 07:01:57.954692       5 controller.go:769] Service "cms/ingress-e213c2b4c622329de7aa2c0c28dc37e5" does '
    'not have any active Endpoint.',
])
def test_an_ingress_controller_finding_no_active_endpoint_says_none_is_ready(line: str) -> None:
    assert facts(line).get("endpoints.ready") == 0


def test_an_access_line_the_terminal_wrapped_is_joined_back() -> None:
    # the wrap fell on a space, which the paste then lost with the line's trailing blanks
    read = case_facts("error-rate/ingress-nginx-7673-504-html-body-wrapped-access-line")
    assert read.get("http.error_statuses") == [504]
    assert read.get("http.failing_upstreams") == ["cloudservices-aks-check-80"]


def test_fortios_result_codes_give_the_share_answered_5xx() -> None:
    read = facts(PASTES["istio-docs-circuit-breaking-fortio-codes"])
    assert (read.get("http.error_statuses"), read.get("http.error_ratio")) == ([503], 0.05)


def test_envoys_local_reply_says_how_it_failed_the_request() -> None:
    # https://github.com/istio/istio/issues/20475 (description): the body of the 503 fortio aborted on
    line = ('Aborting because error 503 for http://fortioserver:8080/echo?size=1024: "HTTP/1.1 503 Service Unavailable'
            '\\r\\ncontent-length: 91\\r\\ncontent-type: text/plain\\r\\ndate: Fri, 24 Jan 2020 00:13:10 GMT\\r\\n'
            'server: envoy\\r\\n\\r\\nupstream connect error or disconnect/reset before headers. reset reason: '
            'connection failure"')
    assert facts(line).get("http.failure_kinds") == ["connection-failure"]


def test_rancher_shows_the_last_state_and_an_empty_exit_code_is_not_read() -> None:
    # https://github.com/alpinelinux/docker-alpine/issues/368 (description)
    line = ("CrashLoopBackOff (back-off 5m0s restarting failed container=container-0 pod=nfs-datafile-acesss-"
            "577587b9bf-jbl8k_default(6a514d22-c7a7-405a-a2f7-2f57b6e39358)) | Last state: Terminated with : "
            "Completed, started: "
            "Thu, Dec 28 2023 9:48:26 am, finished: Thu, Dec 28 2023 9:48:26 am")
    read = facts(line)
    assert read.get("container.last_terminated.reason") == "Completed"
    assert "container.last_terminated.exit_code" not in read


def test_perf_analyzer_gives_the_p99_and_the_share_spent_queued() -> None:
    read = facts(PASTES["triton-docs-perf-analyzer-concurrency-4"])
    assert read.get("latency.p99_seconds") == 0.063609
    assert read.get("latency.queue_share") == round(33577 / 45602, 4)


def test_a_profiler_table_gives_the_share_spent_in_the_dataloader() -> None:
    read = case_facts("gpu-underutilized/clinicaldg-2-torch-profiler-dataloader-88pct")
    assert read.get("train.data_wait_ratio") == 0.8918  # CPU total %, not Self CPU % (88.64%)


def test_the_kubelets_shutdown_event_says_the_shutdown_was_planned() -> None:
    # https://github.com/siderolabs/talos/issues/9991 (an Events row of the node's description)
    row = ("  Normal   Shutdown                 9m7s                   kubelet          "
           "Shutdown manager detected shutdown event")
    assert facts(row).get("node.graceful_shutdown") is True


def test_a_table_of_cfs_periods_and_throttled_periods_gives_the_throttled_ratio() -> None:
    # the most throttled row counts: 2189 of 3653 periods
    assert case_facts("latency/devantler-platform-pr-1727-homepage-cfs-throttled-60pct").get(
        "cpu.throttled_ratio") == 0.5992


def test_haproxy_tcp_sessions_the_server_refused_are_connection_failures_even_wrapped_at_80_columns() -> None:
    read = case_facts("error-rate/rancher-3360-haproxy-503-sc-wrapped-syslog")
    assert read.get("http.failure_kinds") == ["connection-failure"]
    assert "http.error_ratio" not in read  # a TCP session has no status to count a 5xx share from


@pytest.mark.parametrize(("paste", "codes"), [
    ("gpud-100-xid-61-and-65-in-prose", [61, 65]),
    ("marin-7344-xid-13-43-markdown-bullets", [13, 43]),
])
def test_xid_codes_named_in_prose_are_read_however_quoted_or_listed(paste: str, codes: list[int]) -> None:
    read = [f for a in artifacts_from_text(PASTES[paste], "paste") for f in parse_artifact(a).facts
            if f.name == "xid.codes"]
    assert sorted({c for f in read for c in f.value}) == codes


@pytest.mark.parametrize("text", [
    # Ranges and version-like numbers are no Xid codes (gpud's own PR titles say "XID 144-150").
    "fix XID 144-150 reboot handling",
    "xid 1.5 is out",
])
def test_numbers_after_xid_that_are_no_code_are_not_read(text: str) -> None:
    assert "xid.codes" not in facts(text)


@pytest.mark.parametrize("reason", [
    # Kueue's flavor assigner's reasons (pkg/scheduler/flavorassigner/flavorassigner.go), rendered with samples.
    "resource memory unavailable in ClusterQueue",
    "insufficient unused quota for nvidia.com/gpu in flavor gpu-a100, 2 more needed",
    "insufficient quota for cpu in flavor default-flavor, request > maximum capacity (24 > 16)",
    "borrowing limit for nvidia.com/gpu in flavor ml.g5.8xlarge exceeded",
])
def test_kueue_holding_a_workload_for_its_cluster_queue_quota_is_a_quota_fact(reason: str) -> None:
    assert facts(f"couldn't assign flavors to pod set main: {reason}").get("quota.exceeded") is True


@pytest.mark.parametrize("paste", [
    "jupyterhub-3384-configproxy-503-econnrefused",
    "jupyterhub-1244-configproxy-legacy-socket-hang-up",
])
def test_configurable_http_proxy_failing_to_reach_its_target_is_a_connection_failure(paste: str) -> None:
    assert facts(PASTES[paste]).get("http.failure_kinds") == ["connection-failure"]


def test_xid_codes_named_in_prose_say_which_are_faults_of_their_own() -> None:
    # As the kernel reader does: 13 and 43 are application faults, not after-effects (45 would be one).
    read = [f for a in artifacts_from_text(PASTES["marin-7344-xid-13-43-markdown-bullets"], "paste")
            for f in parse_artifact(a).facts if f.name == "xid.primary_codes"]
    assert sorted({c for f in read for c in f.value}) == [13, 43]


def test_rays_memory_monitor_killing_a_worker_is_read_in_its_older_wording_too() -> None:
    assert facts(PASTES["ray-27716-raylet-system-memory-low-kill"]).get("app.memory_monitor_kill") is True


# https://github.com/kubernetes-retired/heapster/issues/1837 (description; heapster 1.2.0 behind a syslog prefix)
HEAPSTER_NODE_NOT_READY = (
    "Oct 2 06:37:03 heapster-v1.2.0-1448994189-8c5qs heapster  E1002 13:37:03.876291       1 summary.go:390] "
    "Node k8s-master-a00b044c-0 is not ready")


def test_the_metrics_pipeline_skipping_a_node_that_is_not_ready_says_it_is_not_ready() -> None:
    read = facts(HEAPSTER_NODE_NOT_READY)
    assert read.get("node.conditions") == ["NotReady"]
    assert read.get("evidence.symptoms") == ["node-not-ready"]


def test_a_failed_scrape_of_the_kubelet_alone_names_no_node_symptom() -> None:
    # https://github.com/kubernetes-retired/heapster/issues/787 (description): the kubelet did not answer, which a
    # firewall or a certificate gives as well; only the Ready condition says the node is NotReady.
    read = facts('E1214 12:37:55.008564       1 kube_nodes.go:59] Failed to get container stats from Kubelet on '
                 'node "node-3-samantha.internal"')
    assert "node-not-ready" not in (read.get("evidence.symptoms") or [])
    assert "node.conditions" not in read


def test_an_eviction_message_naming_usage_above_the_request_says_so() -> None:
    # https://github.com/kubernetes/kubernetes/issues/91600 (description; an event row of kubectl describe pod)
    read = facts("  Warning  Evicted         18m                kubelet, mgt04     The node was low on resource: "
                 "ephemeral-storage. Container calico-node was using 92Ki, which exceeds its request of 0.")
    assert read.get("eviction.over_request") is True
    assert read.get("eviction.resource") == "ephemeral-storage"


def test_an_eviction_message_without_a_container_says_nothing_of_its_request() -> None:
    # https://github.com/kubernetes/kubernetes/issues/66151 (a comment's describe pod)
    read = facts("Status:       Failed\nReason:       Evicted\nMessage:      The node was low on resource: imagefs.\n")
    assert read.get("eviction.seen") is True
    assert "eviction.over_request" not in read


@pytest.mark.parametrize("paste", ["img-360-buildkit-cache-key-pull-access-denied",
                                   "prompt-generator-20-buildkit-from-pull-access-denied"])
def test_a_build_tool_refused_its_base_image_is_an_image_pull_error(paste: str) -> None:
    read = facts(PASTES[paste])
    assert read.get("image.pull_error") == "denied-or-missing"
    assert read.get("evidence.symptoms") == ["image-pull"]


def test_a_build_refused_its_push_is_no_image_pull() -> None:
    read = facts(PASTES["edx-notes-api-405-buildkit-push-access-denied"])
    assert "image.pull_error" not in read
    assert "image-pull" not in (read.get("evidence.symptoms") or [])


def test_the_external_attachers_failed_attach_is_an_attach_failure() -> None:
    read = facts(PASTES["csi-packet-48-attacher-error-processing-failed-to-attach"])
    assert read.get("volume.mount_failed") is True
    assert read.get("volume.errors") == ["attach-failed"]


@pytest.mark.parametrize("paste", ["nfs-ganesha-105-describe-pvc-wait-for-first-consumer",
                                   "heketi-1829-get-pvc-pending"])
def test_a_claim_pending_its_binding_is_no_pod_and_no_node(paste: str) -> None:
    read = facts(PASTES[paste])
    assert not {"pod.phase", "pods.pending", "pod.name", "node.name"} & set(read), read


def test_a_pending_pod_beside_its_pending_claim_is_still_read() -> None:
    read = facts(PASTES["postgres-operator-723-get-pods-pending-then-get-pvc"])
    assert read.get("pods.pending") == ["acid-minimal-cluster-0"]


def test_the_kubelets_pulled_message_says_how_long_the_pull_took() -> None:
    read = facts(PASTES["capvcd-140-pulled-in-17m-row-in-a-broken-fence"])
    assert read.get("image.pull_seconds") == pytest.approx(1051.526, abs=1e-3)


def test_the_pulled_message_in_the_kubelets_own_log_is_read() -> None:
    # Rendered from the kubelet's template (image_manager.go, 1.28+) as its structured event log prints it.
    line = ('I1129 01:00:00.000000     123 event.go:294] "Event occurred" object="default/web-0" kind="Pod" '
            'reason="Pulled" message="Successfully pulled image \\"registry.example.com/big:1\\" in 4m32.1s '
            '(4m32.1s including waiting)"')
    assert facts(line).get("image.pull_seconds") == pytest.approx(272.1)


def _symptoms(text: str) -> set[str]:
    return {s for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts
            if f.name == "evidence.symptoms" for s in f.value}


@pytest.mark.parametrize("paste", ["openseq2seq-456-horovod-stalled-ops-missing-rank-0",
                                   "horovod-2564-stall-inspector-missing-ranks-head"])
def test_horovods_stall_warning_is_a_distributed_hang(paste: str) -> None:
    # Horovod's stall inspector (operations.cc 0.10-0.16, stall_inspector.cc 0.16.1-0.28): some ranks wait for
    # the rest to submit a collective.
    assert facts(PASTES[paste]).get("dist.stall_warning") is True
    assert "nccl-hang" in _symptoms(PASTES[paste])


def test_horovods_missing_ranks_are_the_suspects() -> None:
    assert facts(PASTES["openseq2seq-456-horovod-stalled-ops-missing-rank-0"]).get("nccl.suspect_ranks") == [0]


def test_every_rank_an_op_line_names_as_missing_is_a_suspect() -> None:
    # Rendered from operations.cc's per-op line (0.14-0.16): the tensor name, then the ranks that never submitted.
    line = ("[2019-04-13 13:55:31.858119: W horovod/common/operations.cc:588] "
            "HorovodAllreduce_gradients_AddN_3_0 [missing ranks: 1, 12, 3]")
    assert facts(line).get("nccl.suspect_ranks") == [1, 12, 3]


def test_ranks_that_were_ready_are_not_suspects_and_name_no_hang_by_themselves() -> None:
    read = facts(PASTES["horovod-530-stalled-ops-ready-ranks"])
    assert "nccl.suspect_ranks" not in read and "dist.stall_warning" not in read


def test_the_kubelets_system_oom_event_is_an_oom_kill_outside_container_limits() -> None:
    read = facts(PASTES["k3s-838-describe-node-system-oom-rows"])
    assert read.get("kernel.oom_kill") is True and read.get("kernel.system_oom_event") is True
    # Not proof of a node-wide kill (kubernetes#100483): kernel.oom_global stays for the kernel's own words.
    assert "kernel.oom_global" not in read


def test_a_system_oom_message_in_a_log_exports_json_names_its_victim() -> None:
    # Rendered from oom_watcher_linux.go's message as a Cloud Logging jsonPayload carries it.
    line = '    "message": "System OOM encountered, victim process: postgres, pid: 1234",'
    read = facts(line)
    assert read.get("kernel.oom_victims") == ["postgres"] and read.get("kernel.system_oom_event") is True


@pytest.mark.parametrize(("line", "code"), [
    # The fields of the driver's Xid 31 MMU fault message (kern_gmmu.c), as a person condenses them.
    ("08-05 11:02:13 Xid 31 GPC0 GPCCLIENT_T1_3 @ 0x7f1b_a0000000 FAULT_PTE ACCESS_TYPE_VIRT_WRITE", 31),
    ("node-4: XID 31, HUBCLIENT_CE0 faulted, FAULT_INFO_TYPE_REGION_VIOLATION", 31),
])
def test_an_xid_code_beside_its_mmu_fault_fields_is_read(line: str, code: int) -> None:
    assert facts(line).get("xid.codes") == [code]


def test_mmu_fault_fields_without_an_xid_code_are_no_xid() -> None:
    assert "xid.codes" not in facts("GPCCLIENT_T1_9 faulted @ 0xede3_7fa00000 FAULT_PDE ACCESS_TYPE_VIRT_READ")
