"""Text near a finding that is none: read through the whole registry as a paste, it gives no such fact and names
no such symptom.

A generic error any client prints, a line of another program with the same words, a question, a denial, the
informational lines of the program whose faults the parsers read. One table and one test rather than a "names
nothing" test in each parser's file; each list says which file holds its finding's own cases.
"""

from __future__ import annotations

from typing import cast

import pytest

from tests.unit.parsers.paste_facts import first_facts, joined_facts

# The near misses of test_registry_token_refused.py.
# A 401 or an "unexpected status" that is no registry request: an API call, a webhook, a web page.
TOKEN_REFUSED_NOT_A_PULL = [
    "curl: (22) The requested URL returned error: 401 Unauthorized",
    "Error from server (Unauthorized): error when retrieving current configuration: 401 Unauthorized",
    "unexpected status from POST request to https://hooks.example.com/notify: 401 Unauthorized",
    "HTTP/1.1 401 Unauthorized",
]

# The near misses of test_registry_denied.py.
DENIED_NOT_A_PULL = [
    "Error from server (Forbidden): pods is forbidden: User \"dev\" cannot list resource \"pods\": access denied",
    "permission denied",
    "Is 'denied' from ghcr.io a missing image or a private one?",
]

# The near misses of test_registry_tls.py.
TLS_NOT_A_PULL = [
    # the API server's certificate: kubectl and client-go, not a pull
    "Unable to connect to the server: x509: certificate signed by unknown authority",
    'Get "https://10.96.0.1:443/api/v1/namespaces?limit=500": x509: certificate signed by unknown authority',
    # a webhook or any other HTTPS service whose path happens to hold v2 deeper down
    'Post "https://webhook.example.com/api/v2/validate?timeout=10s": x509: certificate signed by unknown authority',
    "curl: (60) SSL certificate problem: unable to get local issuer certificate",
]

# The near misses of test_cri_socket.py.
CRI_NOT_READ = [
    # https://github.com/NVIDIA/gpu-operator/issues/426 (its title: the GPU operator's pod, not the kubelet)
    "node draining fails & transport: Error while dialing dial unix /var/run/containerd/containerd.sock: connect: "
    "connection refused",
    # a generic dial error to another socket (synthetic): no runtime named
    "kubelet: dial unix /var/run/app.sock: connect: connection refused",
    # a question about the socket, not an error
    "does the kubelet need /run/containerd/containerd.sock to exist before it starts?",
]

# The near misses of test_nvrm_messages.py.
NVRM_NOT_A_FAULT = [
    # https://github.com/NVIDIA/NVSentinel/issues/155: the module loading
    "[ 1843.439669] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01  Release Build  "
    "(dvs-builder@U22-I3-B10-02-5)  Mon Jun  2 13:13:04 UTC 2025",
    "NVRM: GPU 0000:3b:00.0: Opening GPU with minor number 2",
    "Does RmInitAdapter mean the card is broken?",
    "nvidia-smi -q | grep -i reset",
]

# The near misses of test_flag_errors.py.
FLAG_NOT_A_CONFIG_ERROR = [
    "read tcp 10.1.2.3:51234->10.1.2.4:8080: read: connection reset by peer",
    "error: invalid argument",  # a syscall's EINVAL names no flag
    "The --port flag is required, isn't it?",
]

# The near misses of test_startup_exits.py.
NOT_FATAL = [
    # The same dial at level=error: a client retrying, the process lives on.
    'time="2021-06-05T04:06:16.542Z" level=error msg="dial tcp 10.103.141.57:5432: connect: connection refused"',
    # klog's E line (an error), not its F line (fatal): a client-go reflector retrying its list (composed in the
    # reflector's wording, tools/cache/reflector.go). Katib's "Ping to Katib db failed" E line is read: its source
    # logs it only in the start-up loop that ends in klog.Fatalf (test_startup_exits.py, fix round f9).
    'E1218 10:39:50.481923       1 reflector.go:138] failed to list *v1.Pod: Get "https://10.96.0.1:443/api/v1/pods": '
    "dial tcp 10.96.0.1:443: connect: connection refused",
    # Katib's ping refused for its credentials is a setting, not a dependency that does not answer (composed from
    # pkg/db/v1beta1/common/connection.go's klog.Errorf and go-sql-driver/mysql's Error 1045 text).
    "E1218 10:39:50.481923       1 connection.go:40] Ping to Katib db failed: Error 1045: Access denied for user "
    "'root'@'10.0.0.7' (using password: YES)",
    # A PostgreSQL server's FATAL is a session it refused, not a process ending.
    "FATAL:  password authentication failed for user \"postgres\"",
    # The node's daemons dial unix sockets: their fatal records are the node's, not a container's.
    'time="2023-01-10T10:00:00Z" level=fatal msg="failed to start daemon: dial unix /run/containerd/containerd.sock: '
    'connect: connection refused"',
    "F0110 10:00:00.000000    1234 server.go:269] failed to run Kubelet: unable to determine runtime API version: "
    "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing dial unix "
    "/var/run/containerd/containerd.sock: connect: connection refused\"",
    # A fatal record about something else (a config file) is no dependency.
    'time="2021-06-05T04:06:16.542Z" level=fatal msg="open /etc/app/config.yaml: no such file or directory"',
    # A panic that was recovered and logged.
    "recovered from panic: dial tcp 10.0.0.5:6379: connect: connection refused",
]

# The near misses of test_startup_exits.py.
NOT_STORAGE_FATAL = [
    # A write that failed at level=error: the process logs it and goes on (VictoriaMetrics's own retry path).
    "2022-06-17T14:35:03.622Z\terror\tVictoriaMetrics/lib/storage/storage.go:625\tcannot write: "
    "no space left on device",
    # A warning about free space is no exit.
    'time="2022-06-17T14:35:03Z" level=warning msg="write /data/wal: no space left on device"',
    # The node's container runtime on a full root disk: the node's disk, not the container's volume.
    'time="2023-01-10T10:00:00Z" level=fatal msg="Error starting daemon: mkdir /var/lib/docker/overlay2: no space '
    'left on device"',
    # A fatal record about something else is no storage failure.
    'time="2021-06-05T04:06:16.542Z" level=fatal msg="open /etc/app/config.yaml: no such file or directory"',
    # A panic that was recovered and logged.
    "recovered from panic: write /data/index.bin: input/output error",
]

# The near misses of test_alert_names_said.py.
ALERT_NAMES_NOT_SAID = [
    "The alert name is wrong in the template.",
    "Alertnames are not unique across our rule files",
    "I get alerts called Target disappeared from Prometheus target discovery",
    "alert names are KUBE_DOWN and X",
]

# The near misses of test_symptom_messages.py.
# Messages that name no symptom by themselves: a failure that restarts nothing, one that may be transient, a
# generic network error, a question or a negation. The first three are real (the URL beside them).
NOT_A_SYMPTOM = [
    # https://github.com/kubernetes/kubernetes/issues/67180: readiness takes the pod out of its Service only
    'Readiness probe for "basecore-iapi-xlobo-com-5b9ff9c65d-plj4d_ymt-pro(344ce7ef-9afc-11e8-bf1e-9457a56b2f81)'
    ':basecore-iapi-xlobo-com" failed (failure): Get http://10.200.109.68:6766/warmup: net/http: request canceled '
    "(Client.Timeout exceeded while awaiting headers)",
    # https://github.com/kubernetes/kubernetes/issues/75607: one failed attempt, retried
    "Mar 22 17:40:16 ip-172-20-47-6 kubelet[1272]: E0322 17:40:16.948416    1272 kubelet_node_status.go:390] Error "
    'updating node status, will retry: error getting node "ip-172-20-47-6.ec2.internal": nodes '
    '"ip-172-20-47-6.ec2.internal" not found',
    # https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1230: the driver loading, before any fault
    "[   14.650646] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  595.71.05  Release Build  (root@epyc)  "
    "Fri Jul  3 11:27:00 AM UTC 2026",
    "Startup probe failed: Get \"http://10.1.2.3:15021/healthz/ready\": dial tcp 10.1.2.3:15021: connect: "
    "connection refused",
    "Liveness probe errored: rpc error: code = DeadlineExceeded desc = context deadline exceeded",
    "dial tcp 10.96.0.1:443: i/o timeout",
    "read tcp 10.1.2.3:51234->10.1.2.4:8080: read: connection reset by peer",
    "context deadline exceeded",
    "timed out waiting for the condition",
    'plugin type="calico" failed (add): error getting ClusterInformation: connection is unauthorized: Unauthorized',
    "exited with code 137",
    # https://github.com/docker/cli/issues/2665 and https://github.com/coderaiser/cloudcmd/issues/440: exit 137
    # without an OOM kill
    '        "OOMKilled": false,',
    "OOMKilled:false,",
    # every pod tolerates the not-ready and unreachable taints for 300 s: a toleration is no tainted node
    "Tolerations:                 node.kubernetes.io/not-ready:NoExecute op=Exists for 300s",
    "is it a liveness probe issue or maybe OOM?",
    # a registry's code asked about, and denied
    "Does manifest unknown: manifest unknown mean the tag is gone?",
    "We did not get manifest unknown: manifest unknown after retagging.",
]

# The near misses of test_proxy_messages.py.
# Each names no symptom: a generic error any client prints, a proxy's answer that is no error, or a message
# of the catalog asked about or denied in a sentence.
PROXY_NO_SYMPTOM = [
    # https://github.com/haproxy/haproxy/issues/2250 (HAProxy answered a CORS preflight itself: 204, no server)
    'Aug 11 17:06:08 XXX haproxy[3342655]: xx:xxx:xxx:xxx:xx [11/Aug/2023:17:06:08.909] https-in~ https-in/<NOSRV> '
    '0/-1/-1/-1/0 204 166 - - LR-- 4/4/0/0/0 0/0 "OPTIONS /r0/login HTTP/1.1"',
    # https://github.com/rancher/rancher/issues/2414 (tcplog: timers, then bytes read, no HTTP status)
    "Nov  3 22:22:19 localhost haproxy[44]: 10.42.0.1:12558 [03/Nov/2016:22:22:19.363] 900 900/<NOSRV> -1/-1/4 213 "
    "SC 0/0/0/0/0 0/0",
    # A 302 HAProxy answered itself whose byte count is in the 5xx range.
    "10.0.1.29,<NOSRV>,302,0,0,0,GET,/,-,medic,'-',512,-1,-,'curl/8.5.0'",
    # https://github.com/kubernetes-sigs/metrics-server/issues/375 (a client's own dial, no proxy's words)
    "Error: Get https://10.96.0.1:443/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication: "
    "dial tcp 10.96.0.1:443: i/o timeout",
    "read tcp 10.244.1.5:43210->10.96.0.1:443: read: connection reset by peer",
    "context deadline exceeded",
    "request timeout",
    "dial tcp: lookup registry-1.docker.io on 8.8.8.8:53: read udp 10.0.2.15:51234->8.8.8.8:53: i/o timeout",
    "We sometimes get a Bad Gateway from the ingress, maybe the backend restarts?",
    "HTTP/1.1 200 OK",
    '  "code": 503',
    "curl: (22) The requested URL returned error: 404",
    "There is no activator request timeout in the logs.",
    'Could it be "no endpoints available for service" again?',
    # https://github.com/envoyproxy/envoy/issues/19162 (stats are counters: zero is healthy)
    "cluster.rsapi_cluster.upstream_cx_connect_fail: 0",
    "cluster.rsapi_cluster.upstream_cx_connect_timeout: 0",
    # https://github.com/envoyproxy/envoy/issues/4421 (the aggregate class and 2xx counters name no status)
    "cluster.service1.external.upstream_rq_5xx: 20415",
    "cluster.service1.external.upstream_rq_200: 168964",
    # https://github.com/istio/istio/issues/6085 (Envoy's own xDS stream to the control plane, no request of anyone's)
    "[2018-06-07 23:03:37.170][16][warning][upstream] external/envoy/source/common/config/grpc_mux_impl.cc:235] "
    "gRPC config stream closed: 14, no healthy upstream",
    "cluster.service1.upstream_rq_503: 0",
    "cluster.service1.upstream_rq_timeout: 0",
    "Why do we get upstream connect error or disconnect/reset before headers from the gateway?",
    "We do not see backend 'web' has no server available! in the HAProxy log.",
    "We never saw no healthy upstream in the gateway logs.",
    "There is no service in fail-fast in the linkerd logs.",
    # curl's "(18) transfer closed ..." is any body cut short: a 200 download on a slow link, a rate limit, a
    # client's own timeout, a proxy or an app that died mid-answer. It cannot say a request failed behind a proxy.
    # https://github.com/fyu/lsun/issues/49 (a 2.3 GB download cut after an hour)
    "curl: (18) transfer closed with 1729112674 bytes remaining to read",
    # https://github.com/spechub/Hets/issues/1519 (a local server's 48 MB answer)
    "curl: (18) transfer closed with outstanding read data remaining",
    # https://github.com/traefik/traefik/issues/1462 (Traefik 1.2 warned this on every resync, endpoints or not)
    "W  Service endpoints not found for REDACTED/REDACTED, falling back to Service ClusterIP ",
    # A bare dial timeout, and a 404 with Envoy's no-route flag: neither is a proxy failing a request with a 5xx.
    "dial tcp 10.210.145.199:3000: i/o timeout",
    '"GET /api HTTP/1.1" 404 NR route_not_found - "-" 0 0 0 - "-" "curl/8.5.0"',
    "Do you also see 502 errors when scaling from zero?",
    "We don't see any 503 errors anymore.",
    "The nightly job logged 500 errors out of 2 million rows.",
]

# Single lines near a finding, each (text, the fact it must not give).
NOT_A_CLIENT_ERROR: list[tuple[str, str]] = [
    # A reset without a client wording is no client error (test_network_catalog.py).
    # An application's own "Connection reset by peer" is not a person probing a service.
    ("java.net.SocketException: Connection reset by peer", "client.errors"),
    # An nginx upstream slow to answer is no client error (test_network_catalog.py).
    # Rendered as nginx logs it: a timeout reading the response header reached the backend; only the connect step's
    # timeout says it was unreachable.
    ('2020/04/16 12:22:48 [error] 6#6: *173 upstream timed out (110: Connection timed out) while reading '
     'response header from upstream, client: 10.24.0.211, server: _, request: "GET / HTTP/1.1", '
     'upstream: "http://10.72.5.141:8080/"', "client.errors"),
]

ANY = "*"  # no symptom at all

# (text, the fact it must not give, the symptom it must not name: ANY for none at all, None: the fact alone)
NAMES_NOTHING: list[tuple[str, str, str | None]] = [
    *[(text, "image.pull_error", "image-pull") for text in TOKEN_REFUSED_NOT_A_PULL],
    *[(text, "image.pull_error", "image-pull") for text in DENIED_NOT_A_PULL],
    *[(text, "image.pull_error", "image-pull") for text in TLS_NOT_A_PULL],
    *[(text, "node.not_ready_reasons", "node-not-ready") for text in CRI_NOT_READ],
    *[(text, "gpu.nvrm_errors", ANY) for text in NVRM_NOT_A_FAULT],
    *[(text, "app.errors", None) for text in FLAG_NOT_A_CONFIG_ERROR],
    *[(text, "startup.dependency_fatal", None) for text in NOT_FATAL],
    *[(text, "app.storage_fatal", None) for text in NOT_STORAGE_FATAL],
    *[(text, "alert.names", None) for text in ALERT_NAMES_NOT_SAID],
    *[(text, "evidence.symptoms", None) for text in NOT_A_SYMPTOM],
    *[(text, "evidence.symptoms", None) for text in PROXY_NO_SYMPTOM],
    *[(text, fact, None) for text, fact in NOT_A_CLIENT_ERROR],
]


@pytest.mark.parametrize(("text", "fact", "symptom"), NAMES_NOTHING)
def test_text_near_a_finding_gives_no_such_fact(text: str, fact: str, symptom: str | None) -> None:
    facts = joined_facts(text)
    assert fact not in facts, facts
    named = cast(list[str], facts.get("evidence.symptoms", []))
    assert named == [] if symptom == ANY else symptom not in named, facts


# Pastes near a finding, split into their pieces as a paste is: (text, the fact it must not give).
PASTES_NAMING_NOTHING: list[tuple[str, str]] = [
    # The kubelet's own probe dial is not a client refusal (test_first_sight_families.py).
    # https://github.com/getlago/lago-helm-charts/issues/149 (an event row: a liveness probe refused)
    ('12m         Warning   Unhealthy   pod/lago-events-worker-646767f74f-c7vcp    Liveness probe failed: Get '
     '"http://10.244.147.38:8080/": dial tcp 10.244.147.38:8080: connect: connection refused', "client.errors"),
    # A table without both counters is not read as throttling (test_first_sight_families.py).
    # synthetic: a header naming periods alone
    ("| pod | CFS periods |\n|---|---|\n| web-0 | 3653 |\n", "cpu.throttled_ratio"),
    # Kueue failing for another cause is no quota fact (test_first_sight_families.py).
    # A topology-aware placement failure is not a quota (kueue issue #5039's title).
    ("couldn't assign flavors to pod set main: no topology domains at level", "quota.exceeded"),
    # Configurable http proxy answering its api is no failure (test_first_sight_families.py).
    # https://github.com/jupyterhub/jupyterhub/issues/3355 (description): routes added, a 201 from its API.
    ("16:58:55.533 [ConfigProxy] info: Route added /user/363a4e54-b02d-4b42-9fe0-9451f9458f40 -> "
     "http://172.31.28.148:7713\n"
     "16:58:55.533 [ConfigProxy] info: 201 POST /api/routes/user/363a4e54-b02d-4b42-9fe0-9451f9458f40 ",
     "http.failure_kinds"),
    # Ray naming its threshold setting is no kill (test_first_sight_families.py).
    # The advice Ray prints after a kill (as in ray-project/ray#32195), without the kill report: synthetic.
    ("To adjust the kill threshold, set the environment variable `RAY_memory_usage_threshold` when starting "
     "Ray. To disable worker killing, set the environment variable `RAY_memory_monitor_refresh_ms` to zero.",
     "app.memory_monitor_kill"),
    # Failed to attach without a volume attachment is not read (test_first_sight_families.py).
    # `docker attach` and debuggers say "failed to attach" too; only the attacher names a VolumeAttachment.
    ("Error: failed to attach: container 3f2a is not running", "volume.mount_failed"),
    # A pulled message without a duration gives none (test_first_sight_families.py).
    # Before 1.20 the kubelet's Pulled event named no duration (kubernetes#21029's kubelet log, 2016).
    ("I0211 00:10:11.527087    3902 server.go:570] Event(api.ObjectReference{Kind:\"Pod\", Namespace:\"ns\", "
     "Name:\"web-1\"}): type: 'Normal' reason: 'Pulled' Successfully pulled image \"gcr.io/x/y:1.1\"",
     "image.pull_seconds"),
    # Prose about an oom is not the kubelet's event (test_first_sight_families.py).
    ("we saw a system OOM encountered last night on the node", "kernel.system_oom_event"),
    # A rank announcement followed by training is no stall (test_dist_init.py).
    # Rendered lines: the announcements, then the model summary and a progress bar (training went on).
    ("initializing ddp: GLOBAL_RANK: 1, MEMBER: 2/2\ninitializing ddp: GLOBAL_RANK: 0, MEMBER: 1/2\n\n"
     "  | Name  | Type   | Params\n0 | model | ResNet | 11.2 M\n"
     "Epoch 0:  12%|#   | 50/400 [00:10<01:10, 5.0it/s, loss=2.3]\n", "nccl.waiting_for_join"),
    # The old warning printed at every ownership change is not read as slow (test_volume_ownership.py).
    # https://github.com/codecentric/helm-charts/issues/277 (description): printed for a ConfigMap volume of a
    # pod that started; the kubelet logged it at the start of every change, fast or slow.
    ("Setting volume ownership for /var/lib/kubelet/pods/43939fdf-e240-41ba-ac4a-44c532de1137/volumes/"
     "kubernetes.io~configmap/sh and fsGroup set. If the volume has a lot of files then setting volume "
     "ownership could be slow, see https://github.com/kubernetes/kubernetes/issues/69699", "volume.ownership_slow"),
]


@pytest.mark.parametrize(("text", "fact"), PASTES_NAMING_NOTHING)
def test_a_paste_near_a_finding_gives_no_such_fact(text: str, fact: str) -> None:
    assert fact not in first_facts(text)
