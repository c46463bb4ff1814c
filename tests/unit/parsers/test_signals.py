"""The line-signal catalog (collectors/catalogs/signals.yaml): every signal is seen on real pasted text, and the
layer reads a line whatever wraps it, once, with bounded work."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from pydantic import ValidationError

from collectors.catalogs.signals import STATED_REASON, Signal, signals
from collectors.models import Artifact, ArtifactKind, Citation, Fact
from collectors.parsers.registry import PARSERS, parse_artifact
from collectors.parsers.text.signals import SYMPTOMS, read_signals, without_repeats
from collectors.unwrap import unwrap
from tests.unit.parsers.upstream_wordings import WORDINGS, rendered

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"
LINES = [line for p in sorted(REALWORLD.rglob("evidence.txt"))
         for line in unwrap(p.read_text(encoding="utf-8", errors="replace")).lines]
# Upstream wordings rendered as their program prints them (test_k8s_wordings.py checks what they are read as).
RENDERED = [rendered(entry) for entry in WORDINGS]
# The network catalog's pastes (network_pastes.yaml: single lines from public threads, each with its URL).
LINES += [line for paste in yaml.safe_load((Path(__file__).parent / "network_pastes.yaml").read_text(encoding="utf-8"))
          for line in unwrap(paste["text"]).lines]
# The MPI launcher catalog's pastes (launcher_pastes.yaml, each with its URL).
LINES += [line for paste in yaml.safe_load((Path(__file__).parent / "launcher_pastes.yaml").read_text(
    encoding="utf-8")) for line in unwrap(paste["text"]).lines]
# The training-framework catalog's pastes (framework_pastes.yaml, each with its URL).
LINES += [line for paste in yaml.safe_load((Path(__file__).parent / "framework_pastes.yaml").read_text(
    encoding="utf-8")) for line in unwrap(paste["text"]).lines]
# The proxy catalog's pastes (proxy_pastes.yaml, each with its URL).
LINES += [line for paste in yaml.safe_load((Path(__file__).parent / "proxy_pastes.yaml").read_text(encoding="utf-8"))
          for line in unwrap(paste["text"]).lines]
# Pastes of the families first-sight batches showed unread (first_sight_pastes.yaml, each with its URL).
LINES += [line for paste in yaml.safe_load((Path(__file__).parent / "first_sight_pastes.yaml").read_text(
    encoding="utf-8")) for line in unwrap(paste["text"]).lines]
# nginx error-log lines about its upstream, verbatim from public threads, with what each says of the failure.
NGINX_UPSTREAM_LINES = [
    # https://github.com/kubernetes/ingress-nginx/issues/12286 (description)
    ('2024/11/03 10:02:03 [error] 299#299: *174 upstream prematurely closed connection while reading response '
     'header from upstream, client: 192.168.56.140, server: opensearch-dashboard.example.com, request: "GET / '
     'HTTP/1.1", upstream: "http://10.244.3.84:5601/", host: "opensearch-dashboard.example.com"',
     "connection-failure"),
    # https://github.com/kubernetes/ingress-nginx/issues/759 (description)
    ('2017/05/23 21:52:25 [error] 317#317: *288785 connect() failed (113: No route to host) while connecting to '
     'upstream, client: 127.0.0.1, server: aaa.bbb.com, request: "GET /favicon.ico HTTP/2.0", upstream: '
     '"http://10.2.3.30:3000/favicon.ico", host: "aaa.bbb.com", referrer: "https://aaa.bbb.com/“',
     "connection-failure"),
    # https://github.com/rokerkony/dockerize-vps/issues/3 (description)
    ('2019/09/26 01:32:42 [error] 56#56: *63 no live upstreams while connecting to upstream, client: '
     '113.185.40.45, server: mywilldomain.tk, request: "GET /favicon.ico HTTP/1.1", upstream: '
     '"http://mywilldomain.tk/favicon.ico", host: "mywilldomain.tk", referrer: '
     '"http://mywilldomain.tk/wp-admin/setup-config.php"', "no-upstream"),
]
LINES += [line for line, _ in NGINX_UPSTREAM_LINES]
# Fix round f8: a browser's network error, as a line pasted on its own.
LINES += [
    # https://github.com/docker/for-mac/issues/3144 (description, "Actual behavior")
    "`ERR_CONNECTION_TIMED_OUT`",
]
# Network catalog entries whose wording is derived from upstream source and checked by rendering its template
# (test_network_catalog.py), for which no public paste has been found yet. Remove an id when a paste is added.
AWAITING_A_PASTE = {
    "portforward-containerd-dial-refused", "libpq-connection-failed", "redis-py-connect-failed",
    "urllib3-new-connection-refused", "node-connect-econnrefused",
    "cni-calico-ipam-none-assigned", "cni-azure-no-address", "cni-multus-default-network-not-ready",
    "curl-connect-failed-timeout", "wget-gnu-connect-no-route", "wget-gnu-read-reset",
    "wget-gnu-resolve-failed", "busybox-connect-no-route", "nc-openbsd-connect-timeout",
    "nc-openbsd-connect-no-route", "nc-openbsd-resolve-failed", "ncat-connect-failed", "ncat-timeout",
    "telnet-connect-timeout",
    # Round 11 (service-unreachable): curl before 7.31, a no-route with the port hidden, an empty EndpointSlice row.
    "curl-old-couldnt-connect", "curl-hidden-address-no-route", "kubectl-get-endpointslices-empty-row",
    # The proxy catalog (proxies.yaml), its templates rendered by test_network_catalog.py.
    "envoy-details-upstream-overflow", "traefik-gateway-timeout-body", "apiserver-proxy-reach-no-route",
    "vegeta-report-p99-s", "hey-latency-distribution-p99",
    "haproxy-error-page-timeout", "envoy-stats-upstream-rq-timeout",
    "kong-upstream-timing-out-body",
    # Knative's proxy error handler with a deadline for its error (the compact and pretty pastes found say EOF,
    # a refused dial or a cancel).
    "knative-proxy-error-timeout",
    # The node's memory and PID pressure taints, rendered by test_state_taints_and_proxy_lines.py (the disk one has
    # a real paste).
    "node-memory-pressure-taint", "node-pid-pressure-taint",
    # Calico's logrus fields (ContainerID=... Pod=...): the pastes found cut the line before its end.
    "cni-logrus-pod-field",
    # The MPI launcher catalog (launchers.yaml). hydra-host-address's one paste (open-mpi/ompi#7187) has the fence
    # glued to the line, so it is read as a whole paste in launcher_pastes.yaml but not as a line here.
    "orte-daemon-failed-after-launch", "orte-no-connect", "hydra-host-address",
    # Fatal records on an unreachable dependency (startup_exits.yaml, templates rendered by test_network_catalog.py):
    # the threads found paste these libraries' fatal lines about other failures, or the dial on a line of its own.
    "zap-console-fatal-dependency", "java-main-uncaught-dependency",
    "rust-main-panicked-dependency",
    # Fatal records on the process's own storage (startup_exits.yaml *-storage, issue 24 round 12): the threads
    # found paste VictoriaMetrics's console, JSON and panic lines; klog's F line and Java's uncaught main-thread
    # IOException on a full or failing volume await one.
    "klog-fatal-storage", "java-main-uncaught-storage",
    # Triton's start-up failures (startup_exits.yaml triton-*, fix round f5): the failed-to-stat one has a real paste
    # (tests/realworld crash-loop/triton-5341); the command-line and model-load ones are rendered from the source.
    "triton-creating-server-invalid-argument", "triton-creating-server-model-load",
    # A browser's reset and unreachable errors (network.yaml chromium-net-*, fix round f8): the names are
    # net/base/net_error_list.h's; the threads found paste the refused and timed-out ones.
    "chromium-net-connection-reset", "chromium-net-address-unreachable",
    # Training frameworks and launchers (frameworks.yaml, issue 24 round 16, templates rendered by
    # test_network_catalog.py): the threads found quote these lines cut short or inside prose.
    "tf-skipping-gpu-devices", "tf-bfc-allocator-oom", "jax-cuda-backend-failed", "jax-cuda-backend-unable",
    "xla-device-out-of-memory", "torch-driver-too-old", "torch-driver-init-failed", "torch-no-cuda-gpus",
    "lightning-gpu-available-unused", "lightning-gpu-available-not-used-warning",
    "deepspeed-launcher-child-sigkilled", "srun-task-killed",
    # The NVIDIA device plugin's "No devices found. Waiting indefinitely." (gpu_stack.yaml, round 16): the threads found
    # (k8s-device-plugin#1080, #1552) name it in their titles but cut the log before the line.
    "device-plugin-no-devices",
    # bash's /dev/tcp refusals, timeouts and missing routes (network.yaml, fix round 19): the realworld case shows
    # the lookup that failed; these are tested on real lines from other threads in test_fix_round_19_i1.py.
    "bash-dev-tcp-refused", "bash-dev-tcp-refused-loopback", "bash-dev-tcp-timed-out", "bash-dev-tcp-no-route",
}


def test_every_signal_pattern_compiles() -> None:
    # Patterns compile when first needed (collectors/catalogs/signals.py), so a bad one must fail here.
    assert all(s.regex.groups >= 0 for s in signals())


@pytest.mark.parametrize("signal", signals(), ids=lambda s: s.spec.id)
def test_every_signal_matches_a_real_line_or_an_upstream_wording(signal: object) -> None:
    spec = signal.spec  # type: ignore[attr-defined]
    hits = [line for line in LINES + RENDERED if any(h in line for h in spec.hints)
            and not any(u in line for u in spec.unless) and signal.regex.search(line)]  # type: ignore[attr-defined]
    if spec.id in AWAITING_A_PASTE:
        assert not hits, f"{spec.id} now has a real paste: take it off AWAITING_A_PASTE"
        return
    assert hits, f"no line in tests/realworld and no upstream wording matches {spec.id}"


def _facts(text: str) -> dict[str, object]:
    artifact = Artifact(id="p", kind=ArtifactKind.TEXT, content=text)
    return {f.name: f.value for f in parse_artifact(artifact).facts}


@pytest.mark.parametrize("wrapped", [
    '  "message": "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",',  # a JSON string
    "    message: '0/4 nodes are available: 4 Insufficient nvidia.com/gpu.'",  # a YAML value
    "| FailedScheduling | 0/4 nodes are available: 4 Insufficient nvidia.com/gpu. |",  # a table cell
    "I1122 06:01:02.1 1 schedule_one.go:1] 0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",  # a log
])
def test_a_message_is_read_whatever_wraps_it(wrapped: str) -> None:
    facts = _facts(wrapped)
    assert facts["scheduling.reasons"] == ["insufficient-gpu"] and facts["scheduling.nodes_total"] == 4


@pytest.mark.parametrize(("row", "node"), [
    # longhorn/longhorn#1835: a `-o wide` row in backticks, no header; IP and the two later columns <none>.
    ("`dhub-mysql-app-0                           0/1     ContainerCreating   0          3m8s   <none>          "
     "node3    <none>           <none>`", "node3"),
    ("dhub-mysql-app-0   0/1   ContainerCreating   0   3m8s", None),  # the default columns name no node
])
def test_a_wide_pod_row_names_its_node(row: str, node: str | None) -> None:
    facts = _facts("\n".join(unwrap(row).lines))  # as a paste is read: the inline-code backticks unwrapped
    assert facts["container.waiting.reason"] == "ContainerCreating" and facts.get("pod.node") == node


def test_a_percentage_is_read_as_a_ratio_and_a_veto_word_stops_a_signal() -> None:
    assert _facts("44% throttling of CPU in namespace monitoring for container x in pod y")["cpu.throttled_ratio"] \
        == 0.44
    # A probe that failed with "connection refused" is the probe's failure, not the app's dependency.
    assert "app.errors" not in _facts('Readiness probe failed: Get "http://10.0.0.1:8080/": dial tcp: connect: '
                                      "connection refused")


@pytest.mark.parametrize(("line", "seconds"), [
    # https://github.com/coredns/coredns/issues/3163 (description): a curl-format.txt template, the slow run.
    ("    time_namelookup:  5.513", 5.513),
    # https://github.com/kubernetes/kubernetes/issues/21604 (description): the reporter's own -w labels.
    ("DNS-Lookup [5.582] Time-Connect [5.584] Time-PreTransfer [5.602] Time-StartTransfer [6.035] Total-Time [6.035]",
     5.582),
    # curl's %{json} member, rendered as curl 7.70+ prints it (seconds, six decimals).
    ('{"time_connect":0.035512,"time_namelookup":0.004201,"time_total":0.150221}', 0.004201),
])
def test_a_client_timed_name_lookup_is_read_in_seconds(line: str, seconds: float) -> None:
    assert _facts(line)["dns.lookup_seconds"] == seconds


@pytest.mark.parametrize("line", ["DNS Lookup: 5ms", "time_namelookup: 5", "namelookups: 12.5"])
def test_a_lookup_time_without_seconds_is_not_read(line: str) -> None:
    assert "dns.lookup_seconds" not in _facts(line)


@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/51135 (comment of 2018-03-15)
    "When we dropped the CPU limit, container_cpu_cfs_throttled_seconds_total is not appearing anymore and the "
    "latency p99 and p999 dropped from 60ms and 100ms to ~5ms.",
    # https://github.com/zalando-incubator/kubernetes-on-aws/pull/923 (description)
    "Reduce latency of ingress 5-10 times, because of 100ms time slices set by Kubernetes for having the limits.",
])
def test_latency_that_fell_with_the_cpu_limit_is_read(line: str) -> None:
    assert _facts(line)["cpu.limit_slowed"] is True


@pytest.mark.parametrize("line", [
    "We removed the CPU limit. The latency did not change and p99 dropped only when we scaled out.",
    "We increased the CPU limit to 2 cores.",
    "Reduce latency of the API by caching responses.",
    # Round 17 negatives: the next sentence's fall is another figure's, or the change is said not to help.
    "We removed the CPU limits on the api pods. The memory usage was reduced a lot.",
    "Removing the CPU limit did not help. Latency dropped only after we scaled out.",
])
def test_a_cpu_limit_change_without_a_latency_fall_is_not_read(line: str) -> None:
    assert "cpu.limit_slowed" not in _facts(line)


@pytest.mark.parametrize("line", [
    # Round 17: the fall said in the sentence after the change, of the response or queue time. Composed in the
    # words of kubernetes/kubernetes#51135 and #67577 (no other public thread found that splits it so).
    "We deployed without the CPU limits on the checkout service. The p95 response time was reduced by half.",
    "Then we tried removing the CPU limit on one app. Its mean and p99 queue time dropped within minutes.",
])
def test_latency_that_fell_in_the_next_sentence_is_read(line: str) -> None:
    assert _facts(line)["cpu.limit_slowed"] is True


@pytest.mark.parametrize(("line", "kind"), NGINX_UPSTREAM_LINES, ids=lambda v: v[-40:])
def test_nginx_says_how_it_failed_a_request_upstream(line: str, kind: str) -> None:
    assert _facts(line)["http.failure_kinds"] == [kind]


@pytest.mark.parametrize("line", [
    "read: connection reset by peer",  # a generic reset: no proxy said it failed a request
    "2024/11/03 10:02:03 [error] 12#12: *5 recv() failed (104: Connection reset by peer) while reading client "
    "request line, client: 10.0.0.1",  # the client's side, not the upstream's
])
def test_a_reset_that_is_not_nginx_failing_upstream_is_not_a_failure_kind(line: str) -> None:
    assert "http.failure_kinds" not in _facts(line)


def test_a_lookup_that_timed_out_is_a_dns_error_and_a_bare_timeout_is_not() -> None:
    # https://github.com/cilium/cilium/issues/4853 (description)
    line = ("Two attempts to resolve `AAA? www.google.com.us-west-2.compute.internal` time out, each causing a 5 "
            "second delay.")
    assert _facts(line)["dns.errors"] is True
    for generic in ("request timed out", "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    "Readiness probe failed: Get \"http://10.0.0.1:8080/\": context deadline exceeded: timeout"):
        assert "dns.errors" not in _facts(generic), generic


def test_each_fact_names_the_signal_that_read_it() -> None:
    result = read_signals(Artifact(id="p", kind=ArtifactKind.TEXT,
                                   content="Back-off restarting failed container app in pod web-1"), PARSERS)
    read = [(f.name, f.parser) for f in result.facts]
    assert read == [("evidence.symptoms", "signal:kubelet-restart-backoff"),
                    ("container.restart_backoff", "signal:kubelet-restart-backoff")]


def test_work_is_bounded_on_a_flood_of_one_message() -> None:
    text = "0/5 nodes are available: 5 Insufficient cpu.\n" * 50_000
    facts = read_signals(Artifact(id="p", kind=ArtifactKind.TEXT, content=text), PARSERS).facts
    # The first occurrence is cited; the flood adds nothing and is not read past the per-hint budget.
    reasons = [f for f in facts if f.name == "scheduling.reasons"]
    assert len(reasons) == 1 and reasons[0].citation.start == 1


def test_the_catalog_refuses_a_signal_with_no_way_to_facts_or_an_unknown_fact() -> None:
    base = {"id": "x", "hints": ["x"], "pattern": "x", "source": "test"}
    with pytest.raises(ValidationError, match="exactly one of"):
        Signal.model_validate(base)
    with pytest.raises(ValidationError, match="unknown facts"):
        Signal.model_validate({**base, "facts": {"no.such.fact": True}})


def test_nginx_failing_upstream_alone_triggers_the_error_rate_playbook() -> None:
    from collectors.paste import artifacts_from_text
    from playbooks.pipeline import analyse

    report = analyse(artifacts_from_text(NGINX_UPSTREAM_LINES[2][0], "p"))
    finding = next(f for f in report.findings if f.playbook == "error-rate")
    assert {h.id: h.status for h in finding.hypotheses}["no-ready-backends"] == "likely"
    assert "error-rate" not in analyse(artifacts_from_text("read: connection reset by peer", "p")).symptoms


def test_a_stale_non_ready_condition_row_is_not_a_not_ready_node() -> None:
    # kubernetes/kubernetes#73397: the node lifecycle controller set OutOfDisk Unknown with the same message
    # it writes on Ready; only a Ready row at Unknown would say the kubelet stopped posting.
    row = ("  OutOfDisk            Unknown   Mon, 21 Jan 2019 19:29:36 +0000   Fri, 25 Jan 2019 13:57:23 +0000   "
           "NodeStatusUnknown            Kubelet stopped posting node status.")
    assert "node.not_ready_reasons" not in _facts(row)
    assert _facts(row.replace("OutOfDisk", "Ready    "))["node.not_ready_reasons"] == ["kubelet-stopped-posting"]


def test_an_ipv6_restore_failure_is_not_the_ipv4_rules_failing() -> None:
    # kubernetes/kubernetes#99031: IPVS kube-proxy on a node without the IPv6 nat table; healthy jobs log it too.
    v6 = ("E0212 11:16:50.751646       1 proxier.go:1619] Failed to execute iptables-restore: exit status 2 "
          "(ip6tables-restore v1.8.5 (legacy): ip6tables-restore: unable to initialize table 'nat'")
    assert "proxy.sync_failed" not in _facts(v6)
    # The same message from the IPv4 restore (the rendered template) is a sync failure.
    v4 = v6.replace("ip6tables-restore", "iptables-restore")
    assert _facts(v4)["proxy.sync_failed"] is True


def _fact(name: str, value: object, line: int) -> Fact:
    return Fact(name=name, value=value, citation=Citation(artifact="paste", start=line, end=line))


@pytest.mark.parametrize(("first", "later", "kept"), [
    # A symptom no reader named yet is kept, even on a line another reader drew symptoms from.
    ([_fact(SYMPTOMS, ["error-rate"], 3)], [_fact(SYMPTOMS, ["service-unreachable"], 3)], True),
    # One already named is not named twice.
    ([_fact(SYMPTOMS, ["error-rate"], 3)], [_fact(SYMPTOMS, ["error-rate"], 9)], False),
    # Any other fact a reader gave is not given again from elsewhere in the artifact.
    ([_fact("http.error_statuses", [503], 3)], [_fact("http.error_statuses", [502], 9)], False),
    ([], [_fact("http.error_statuses", [502], 9)], True),
])
def test_a_later_reader_adds_only_what_no_reader_gave(first: list[Fact], later: list[Fact], kept: bool) -> None:
    assert (without_repeats(first, later) == later) is kept


def test_an_event_whose_line_states_its_reason_needs_a_reason_group() -> None:
    with pytest.raises(ValidationError):
        Signal(id="x", hints=("h",), pattern="h (?P<message>.*)", event=STATED_REASON, source="s")
    ok = Signal(id="x", hints=("h",), pattern="h (?P<reason>[A-Za-z]+)", event=STATED_REASON, source="s")
    assert ok.event == STATED_REASON


def test_a_logged_event_names_its_reason_but_a_bare_message_does_not() -> None:
    # The kubelet's own message alone is evidence of the failure; the reason is named only where the line states it.
    bare = _facts("Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox")
    assert "events.reasons" not in bare
    logged = _facts("I0612 08:15:02.123456    2211 event.go:294] \"Event occurred\" object=\"default/web-0\" "
                    "fieldPath=\"\" kind=\"Pod\" apiVersion=\"v1\" type=\"Normal\" reason=\"SandboxChanged\" "
                    "message=\"Pod sandbox changed, it will be killed and re-created.\"")
    assert logged["events.reasons"] == ["SandboxChanged"]


# A gang scheduler's verdict on the whole group, as users pasted it.
GANG_PASTES = [
    # https://github.com/kubernetes-sigs/scheduler-plugins/issues/364 (description): the scheduler's log.
    ('"PreFilter failed" err="pre-filter pod mysql-0 cannot find enough sibling pods, current pods number: 1, '
     'minMember of group: 5" pod="test/mysql-0"', 5),
    # https://github.com/volcano-sh/volcano/issues/2462 (description): the PodGroup's status, its message folded.
    ("  conditions:\n"
     "  - lastTransitionTime: \"2022-08-25T09:28:19Z\"\n"
     "    message: '12/8 tasks in gang unschedulable: pod group is not ready, 20 minAvailable,\n"
     "      8 Running'\n"
     "    reason: NotEnoughResources\n"
     "    status: \"True\"\n", 20),
]


@pytest.mark.parametrize(("line", "minimum"), GANG_PASTES)
def test_a_gang_schedulers_verdict_on_the_group_is_read(line: str, minimum: int) -> None:
    got = _facts(line)
    assert (got.get("gang.unschedulable"), got.get("gang.min_available")) == (True, minimum)


@pytest.mark.parametrize("line", [
    "0/4 nodes are available: 4 Insufficient nvidia.com/gpu.",  # a plain fit error: no gang
    '"PreFilter failed" err="pod with pgName: test/pod-group-8pvf2 last failed in 3s, deny" pod="test/mysql-1"',
    "Does Volcano print 'tasks in gang unschedulable' when minAvailable is larger than the replicas?",
])
def test_no_gang_verdict_without_the_gang_schedulers_words(line: str) -> None:
    assert "gang.unschedulable" not in _facts(line)


@pytest.mark.parametrize("line", [
    # https://github.com/lyulyul/shine-cluster/issues/171: the GPUs beside the lost one answer with their revision.
    "1a:00.0 VGA compatible controller: NVIDIA Corporation TU102GL [Quadro RTX 6000/8000] (rev a1)",
    # The same card's audio function reading all ones says nothing the GPU function does not.
    "1c:00.1 Audio device: NVIDIA Corporation TU102 High Definition Audio Controller (rev ff)",
    # Not an NVIDIA GPU (an lspci -v paste from a public thread of a card reader that had gone away).
    "03:09.4 System peripheral: Ricoh Co Ltd xD-Picture Card Controller (rev ff) (prog-if ff)",
])
def test_an_answering_gpu_or_another_device_at_rev_ff_is_no_lost_gpu(line: str) -> None:
    assert "gpu.fallen_off_bus" not in _facts(line)


# Fix round f9: distribution's ErrNoBasicAuthCredentials ("no basic auth credentials") as clients relay it,
# verbatim from public threads.
NO_BASIC_AUTH_PASTES = [
    # https://github.com/moby/moby/issues/19159 (description, docker pull)
    "Error response from daemon: Get https://myregistrydomain.com:5000/v2/runcom/busybox/manifests/latest: "
    "no basic auth credentials",
    # https://github.com/jenkinsci/docker-plugin/issues/528 (comment of 2018-02-08, docker-java's exception)
    'com.github.dockerjava.api.exception.InternalServerErrorException: {"message":"Get '
    'https://docker-hub.holisticon.de:4443/v2/holi_ci/jenkins_node_jdk8/manifests/latest: no basic auth '
    'credentials"}',
    # https://github.com/kubernetes/kubernetes/issues/95231 (description; the kubelet's line as typed there)
    'Failed  to pull image "ip:port/repository/ydocker-repo/apps:tag": rpc error: code = Unknown desc = Error '
    "response from daemon: Get http://ip:port/v2/repository/docker/app/manifests/1.0: no basic auth credentials",
]


@pytest.mark.parametrize("line", NO_BASIC_AUTH_PASTES)
def test_a_registry_request_without_credentials_is_an_unauthorized_pull(line: str) -> None:
    facts = {f.name: f.value for f in parse_artifact(Artifact(id="a", kind=ArtifactKind.TEXT, content=line)).facts}
    assert facts.get("image.pull_error") == "unauthorized", facts


# Fix round f9: a claim's row as `kubectl get pvc` prints it while unbound (kubectl-pvc-row-pending).
def _pvc_pending(text: str) -> object:
    facts = {f.name: f.value for f in parse_artifact(Artifact(id="a", kind=ArtifactKind.TEXT, content=text)).facts}
    return facts.get("pvc.pending")


def test_a_claim_row_left_pending_names_the_claim() -> None:
    # https://github.com/openebs/openebs/issues/3312 (description)
    assert _pvc_pending("kubectl get pvc local-device-pvc\n"
                        "NAME               STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS     AGE\n"
                        "local-device-pvc   Pending                                      openebs-device   39s\n"
                        ) == ["local-device-pvc"]
    # composed in kubectl's 1.29+ columns (VOLUMEATTRIBUTESCLASS "<unset>"), with -A's NAMESPACE first
    assert _pvc_pending("NAMESPACE   NAME     STATUS    VOLUME   CAPACITY   ACCESS MODES   STORAGECLASS   "
                        "VOLUMEATTRIBUTESCLASS   AGE\n"
                        "db          data-0   Pending                                      gp3            <unset>"
                        "                 5m\n") == ["data-0"]


@pytest.mark.parametrize("text", [
    # composed in kubectl's columns: a bound claim, and a pod row (READY before STATUS)
    "NAME     STATUS   VOLUME                                     CAPACITY   ACCESS MODES   STORAGECLASS   AGE\n"
    "data-0   Bound    pvc-3c1a1f0e-5b7e-4a53-9b8f-1f0e2d1c0b9a   10Gi       RWO            gp3            5m\n",
    "NAME                     READY   STATUS    RESTARTS   AGE\n"
    "hello-local-device-pod   0/1     Pending   0          90s\n",
])
def test_a_bound_claim_or_a_pending_pod_row_is_no_pending_claim(text: str) -> None:
    assert _pvc_pending(text) is None
