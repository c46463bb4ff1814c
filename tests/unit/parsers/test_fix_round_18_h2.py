"""Fix round 18 (h2): Go's resolver failing a one-label or <service>.<namespace> name (network.yaml), a dial that
names tcp4/tcp6, a Go HTTP client's read reset, nginx's own 504 page (proxies.yaml), a registry request that timed
out, GHCR's "unauthenticated", the pull back-off quoted without the word "image" (signals.yaml, k8s_messages.py),
and a workload said scaled to zero pods (stated.yaml). Real lines, each from another public thread than the realworld
case it came with (named beside it), and near misses that must read nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


def _symptoms(facts: dict[str, object]) -> set[object]:
    value = facts.get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


# ---- Go's resolver: a one-label name, or <service>.<namespace> asked of the cluster DNS ----------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/argoproj/argo-cd/issues/20824 (comment): the dial's deadline cut the lookup (no server)
    '{"level":"warning","msg":"Reconnect to redis because error: \\"dial tcp: lookup argocd-redis: i/o timeout\\"",'
    '"time":"2025-08-17T14:37:24Z"}',
    # https://github.com/argoproj/argo-cd/issues/4174 (comment)
    'time="2022-11-22T17:16:39Z" level=warning msg="Failed to resync revoked tokens. retrying again in 1 minute: '
    'dial tcp: lookup argocd-redis: i/o timeout"',
    # https://github.com/argoproj/argo-cd/issues/18445 (description): GKE's cluster DNS at 10.0.0.10
    "Failed to resync revoked tokens. retrying again in 1 minute: dial tcp: lookup argocd-redis-ha-haproxy on "
    "10.0.0.10:53: no such host",
    # https://github.com/argoproj/argo-cd/issues/6377 (description): k3s's cluster DNS
    'level=error msg="finished unary call with code Unknown" error="dial tcp: lookup argocd-redis on '
    '10.43.0.10:53: no such host" grpc.code=Unknown',
    # the <service>.<namespace> form against kubeadm's cluster DNS address
    "Get http://ml-pipeline.kubeflow:8888/apis/v1beta1/runs: dial tcp: lookup ml-pipeline.kubeflow on "
    "10.96.0.10:53: no such host",
])
def test_a_cluster_only_name_that_does_not_resolve_is_the_service_unreachable_by_dns(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("dns.errors") is True
    assert facts.get("client.errors") == ["name-resolution"]
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    # a public host's name: the internet's DNS, not a Service (the same shape as the <service>.<namespace> form)
    'Error: Get "https://workspace.example.com/api/2.0/apps": dial tcp: lookup workspace.example.com on '
    "10.96.0.10:53: no such host",
    'failed to do request: Head "https://ghcr.io/v2/org/app/manifests/1.0": dial tcp: lookup ghcr.io on '
    "10.96.0.10:53: no such host",
    # the loopback's name never leaves /etc/hosts
    "dial tcp: lookup localhost: i/o timeout",
    # a lookup that worked
    "lookup argocd-redis succeeded in 2ms",
])
def test_public_names_and_successes_are_not_a_service_name_failure(line: str) -> None:
    assert "service-unreachable" not in _symptoms(joined_facts(line + "\n"))


# ---- Go's dial names the family it was asked for: tcp4, tcp6 ---------------------------------------------------
def test_a_dial_pinned_to_ipv4_with_no_route_is_read() -> None:
    # https://github.com/prometheus/blackbox_exporter/issues/79 shape, the exporter's ip_protocol=ip4 dial; the
    # address is a Filecoin miner's as its operators list the dial failure
    facts = joined_facts("* [/ip4/106.54.88.171/tcp/10240] dial tcp4 106.54.88.171:10240: connect: no route to host\n")
    assert facts.get("client.errors") == ["no-route"]
    assert facts.get("client.targets") == ["106.54.88.171:10240"]


@pytest.mark.parametrize("line", [
    # https://github.com/prometheus/blackbox_exporter/issues/134 (comment): another errno, not a missing route
    'time="2017-05-05T04:51:40Z" level=warning msg="Error for HTTP request to http://www.redacted.de: Get '
    'http://www.redacted.de/: dial tcp4 185.88.1.1:80: connect: cannot assign requested address" source="http.go:159"',
    # a refused dial: another errno
    'failed to connect to localhost:80 inside namespace "c9129f56", IPv4: dial tcp4 127.0.0.1:80: connect: '
    "connection refused IPv6 dial tcp6: address localhost: no suitable address found",
])
def test_other_dial_errors_are_not_no_route(line: str) -> None:
    assert "no-route" not in (joined_facts(line + "\n").get("client.errors") or [])


# ---- a Go HTTP client whose connection was reset ------------------------------------------------------------------
def test_a_go_clients_read_reset_is_a_reset() -> None:
    # cloudfoundry-community/splunk-firehose-nozzle's troubleshooting page quotes the nozzle's logged error (Go's
    # url.Error around OpError); its JSON log escapes "->" as "\u003e", shown here as the client prints it
    line = ("Post http://localhost:8088/services/collector: read tcp 10.0.0.0:62931->localhost:8088: read: "
            "connection reset by peer")
    assert joined_facts(line + "\n").get("client.errors") == ["reset"]


@pytest.mark.parametrize("line", [
    # a server noting a client that went away: no method and URL before the read
    "http: TLS handshake error from 10.0.0.5:51234: read tcp 10.0.0.1:6443->10.0.0.5:51234: read: connection reset "
    "by peer",
    # an image pull's request (image-pull reads it)
    'failed to do request: Head "https://registry-1.docker.io/v2/library/nginx/manifests/latest": read tcp '
    "10.2.0.50:42604->18.233.78.24:443: read: connection reset by peer",
])
def test_a_server_side_or_pull_reset_is_not_a_clients(line: str) -> None:
    assert "reset" not in (joined_facts(line + "\n").get("client.errors") or [])


# ---- nginx's own 504 page: it gave up waiting on its upstream ------------------------------------------------
def test_nginx_504_page_is_a_backend_timeout() -> None:
    # https://github.com/grafana/helm-charts/issues/3107 (description)
    facts = joined_facts("<html> <head><title>504 Gateway Time-out</title></head> <body> <center><h1>504 Gateway "
                         "Time-out</h1></center> </body> </html>\n")
    assert facts.get("http.failure_kinds") == ["timeout"]
    assert 504 in (facts.get("http.error_statuses") or [])


def test_nginx_504_page_over_lines_is_a_backend_timeout() -> None:
    # https://github.com/grafana/loki/issues/14868 (description)
    text = ("Error response from server: <html>\n<head><title>504 Gateway Time-out</title></head>\n<body>\n"
            "<center><h1>504 Gateway Time-out</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n")
    assert joined_facts(text).get("http.failure_kinds") == ["timeout"]


def test_nginx_502_page_is_no_timeout() -> None:
    text = ("<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1>"
            "</center>\n<hr><center>nginx</center>\n</body>\n</html>\n")
    assert "timeout" not in (joined_facts(text).get("http.failure_kinds") or [])


# ---- a registry request that timed out (docker pull, docker compose pull) -------------------------------------
@pytest.mark.parametrize("text", [
    # https://github.com/exadel-inc/CompreFace/issues/1277 (title)
    'Error response from daemon: Get "https://registry-1.docker.io/v2/": net/http: request canceled while waiting '
    "for connection (Client.Timeout exceeded while awaiting headers)",
    # https://github.com/MewoLab/AquaDX/issues/54 (description): compose's progress row, then the daemon's error
    ' ✘ db Error  Get "https://registry-1.docker.io/v2/": net/http: request canceled while waiting for con...'
    "          15.1s\nError response from daemon: Get \"https://registry-1.docker.io/v2/\": net/http: request canceled "
    "while waiting for connection (Client.Timeout exceeded while awaiting headers)",
])
def test_a_registry_request_timeout_is_an_unreachable_registry(text: str) -> None:
    facts = joined_facts(text + "\n")
    assert facts.get("image.pull_error") == "timeout"
    assert "image-pull" in _symptoms(facts)


def test_a_registry_request_cut_before_its_cause_is_a_pull_of_no_known_kind() -> None:
    # https://github.com/duixcom/Duix-Avatar/issues/9 (description): "request canceled" alone is also a caller's
    # cancel, so the row cut by the terminal says a pull failed, not why
    facts = joined_facts(' ✘ heygem-asr Error Get "https://registry-1.docker.io/v2/": net/http: request canceled '
                         "while ...                  15.1s\n")
    assert "image-pull" in _symptoms(facts)
    assert facts.get("image.pull_error") != "timeout"


@pytest.mark.parametrize("line", [
    # a registry that answered: a status, not a timeout
    'Error response from daemon: Get "https://registry-1.docker.io/v2/": unauthorized: incorrect username or password',
    # a request to another API that timed out
    'Get "https://api.example.com/v1/items": context deadline exceeded (Client.Timeout exceeded while awaiting '
    "headers)",
])
def test_a_registry_answer_or_another_api_is_no_registry_timeout(line: str) -> None:
    assert joined_facts(line + "\n").get("image.pull_error") != "timeout"


# ---- GHCR's "unauthenticated": the token was refused -----------------------------------------------------------
def test_ghcr_unauthenticated_is_unauthorized() -> None:
    # https://github.com/php-actions/composer/issues/28 (title and log)
    line = ('Failed to pull image "ghcr.io/php-actions/composer:latest": rpc error: code = Unknown desc = error '
            "pulling image configuration: denied: unauthenticated: User cannot be authenticated with the token "
            "provided.")
    assert joined_facts(line + "\n").get("image.pull_error") == "unauthorized"


def test_ghcr_bare_denied_stays_denied_or_missing() -> None:
    # https://github.com/indeedeng/harbor-container-webhook/issues/38 (description)
    line = ('Failed to pull image "ghcr.io/indeedeng/jfrog-container-webhook:main": Error response from daemon: Head '
            '"https://ghcr.io/v2/indeedeng/jfrog-container-webhook/manifests/main": denied')
    assert joined_facts(line + "\n").get("image.pull_error") == "denied-or-missing"


# ---- the kubelet's pull back-off quoted without the word "image" --------------------------------------------
def test_pull_backoff_without_the_word_image_is_an_image_pull() -> None:
    facts = joined_facts("Back-off pulling gcr.io/knative-releases/github.com/knative/serving/cmd/queue@sha256:"
                         "77b883fec7820bd3219c011796f552f15572a037895fbe7a7c78c7328fd96187\n")
    assert "image-pull" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    "Back-off pulling the logs every 10 seconds",  # no image reference
    "Back-off restarting failed container",
])
def test_other_backoffs_are_no_image_pull(line: str) -> None:
    assert "image-pull" not in _symptoms(joined_facts(line + "\n"))


# ---- a workload said scaled to zero pods or replicas: no endpoints -------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/78994 shape: a Service whose backends are gone
    "We scaled the deployment down to 0 replicas and the service started refusing connections.",
    "I have scaled my app to zero pods to test the alert.",
    "The statefulset was scaled to 0 replicas during the migration.",
])
def test_a_workload_said_scaled_to_zero_pods_has_no_endpoints(line: str) -> None:
    assert joined_facts(line + "\n").get("endpoints.ready") == 0


@pytest.mark.parametrize("line", [
    "Knative scaled the revision to zero after 60 seconds.",  # no pods or replicas named: the activator holds it
    "We never scaled the deployment to 0 replicas.",
    "We scaled the deployment to 3 replicas.",
])
def test_scale_to_zero_alone_or_denied_or_to_more_is_not_read(line: str) -> None:
    assert "endpoints.ready" not in joined_facts(line + "\n")
