"""Fix round 17 (g1): kube-proxy's rules, a NetworkPolicy, a rollout, a 5xx spike and a request's timeout said in
sentences (stated.yaml); Envoy's flag named as a flag beside a 5xx (proxies.yaml); libpq failing to resolve a
one-label Service name (network.yaml); and a sentence whose subject is set in inline code. Real lines, each from
another public thread than the realworld case it came with (named beside it), and near misses that must read
nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


def _symptoms(facts: dict[str, object]) -> set[object]:
    value = facts.get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


# ---- kube-proxy's Service rules said missing (stated proxy-rules-said-missing) ---------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/105208 (title and description)
    "iptables rules are not created in ipvs mode",
    "On the new node kube-proxy did not set up a rule for the kubernetes service.",
    # a sentence opening with its subject in inline code (kubernetes#35641's wording shape)
    "`iptables-save` on that node was missing all of the service rules.",
])
def test_service_rules_said_missing_are_a_failed_proxy_sync(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("proxy.sync_failed") is True
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/61005 (description): the rules are there
    "Strange thing is, that iptables-save does show my nw service",
    "The iptables rules are not missing, kube-proxy wrote them all.",
    "Did kube-proxy not create the rules for the service?",
    "No ingress rule for that path, so nginx answers 404.",
])
def test_rules_said_present_or_asked_about_are_not_read(line: str) -> None:
    assert "proxy.sync_failed" not in joined_facts(line + "\n")


# ---- a NetworkPolicy said to drop the traffic (stated netpol-said-drops) ---------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/weaveworks/weave/issues/3139 (title)
    "Connecting through a service with network policies is blocked",
    "The default-deny NetworkPolicy blocks the ingress controller, so every request times out.",
])
def test_a_policy_said_to_drop_traffic_selects_the_backends(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("netpol.selects_backends") is True
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    # https://github.com/cilium/cilium/issues/2333 (title): the opposite complaint
    "k8s default deny ingress policy does not deny any traffic",
    "The NetworkPolicy should block the traffic from other namespaces.",
    "Traffic is not blocked even though the network policy is applied.",
    "Our firewall dropped the packets from the office network.",  # no policy named
])
def test_a_policy_that_does_not_drop_or_no_policy_is_not_read(line: str) -> None:
    assert "netpol.selects_backends" not in joined_facts(line + "\n")


# ---- a rollout said (stated rollout-said) -------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/gitpod-io/gitpod/issues/12510 (description)
    "During todays WebApp deployment [we saw 502 errors](https://gitpod.slack.com/archives/C03UJUD5W79/"
    "p1661853956147719) when trying to access the dashboard.",
    # https://github.com/ChrisMcKenzie/dropship/issues/21 (description)
    "An application accessing the API that is being updated receives 502s for a short period of time during "
    "deployments.",
])
def test_a_rollout_said_is_a_recent_rollout(line: str) -> None:
    assert joined_facts(line + "\n").get("rollout.recent") is True


@pytest.mark.parametrize("line", [
    "I set the replicas to 3 in the deployment and the pods are running.",  # the object, not a rollout
    "Nothing was deployed during the outage window.",
    "Should the errors go away after the rollout?",
])
def test_the_object_or_a_denied_rollout_is_not_read(line: str) -> None:
    assert "rollout.recent" not in joined_facts(line + "\n")


# ---- a rise in one 5xx said by its noun (stated http-5xx-spike) ---------------------------------------------------
def test_a_spike_in_a_status_is_that_status() -> None:
    # https://github.com/gitpod-io/gitpod/issues/12510 (comment)
    facts = joined_facts("GLB [logs show a spike in 502](https://cloudlogging.app.goo.gl/ufNGzuH9Q7poyCFGA), "
                         "especially on API routes:\n")
    assert facts.get("http.error_statuses") == [502]
    assert "error-rate" in _symptoms(facts)


@pytest.mark.parametrize("line", ["We saw a spike in 200s after the cache warmed up.",
                                  "There was no spike in 503s during the test."])
def test_a_spike_of_another_status_or_denied_is_not_read(line: str) -> None:
    assert "http.error_statuses" not in joined_facts(line + "\n")


# ---- a request said to time out at a figure (stated request-said-timing-out-at) -----------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/ingress-nginx/issues/10726 (description)
    "I have setup an ingress service to route requests to Selenium Grid , even though the requests are reached to "
    "grid que, it timeouts after 2 minutes , with below error response",
    "Requests through the ingress time out after exactly 60 seconds.",
])
def test_requests_timing_out_at_a_figure_are_the_proxy_s_timeout(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("http.failure_kinds") == ["timeout"]
    assert "error-rate" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    "The liveness probe times out after 1 second and the container restarts.",
    "The training job timed out after 30 minutes.",
    "Requests no longer time out after 60s since we raised the timeout.",
])
def test_probes_jobs_or_denied_timeouts_are_not_read(line: str) -> None:
    assert "http.failure_kinds" not in joined_facts(line + "\n")


# ---- Envoy's no-backend flag named as a flag beside a 5xx (proxies.yaml envoy-status-flag-said-no-upstream)
def test_a_5xx_with_the_no_backend_flag_named_is_the_proxy_without_a_backend() -> None:
    facts = joined_facts("After the rollout finished, 503 errors started to happen with the UH flag.\n")
    assert facts.get("http.failure_kinds") == ["no-upstream"]
    assert facts.get("http.error_statuses") == [503]


@pytest.mark.parametrize("line", [
    "We get 503s with response flag UF,URX whenever a pod restarts.",  # a failed connection, not no backend
    "The UH flag means Envoy found no healthy upstream host.",  # explained, no request's status
    "It should return 503 with the UH flag when every pod is gone.",  # expected, not seen
])
def test_a_flag_explained_expected_or_of_another_kind_is_no_missing_backend(line: str) -> None:
    assert "no-upstream" not in (joined_facts(line + "\n").get("http.failure_kinds") or [])


# ---- libpq and a one-label Service name (network.yaml libpq-short-service-name-unresolved) ------------------------
def test_libpq_failing_a_one_label_name_is_a_service_name_that_does_not_resolve() -> None:
    # https://github.com/kubernetes/minikube/issues/1620 (description)
    facts = joined_facts(' Message from application: PG::ConnectionBad: could not translate host name "postgres" '
                         "to address: Name or service not known\n")
    assert facts.get("dns.errors") is True
    assert facts.get("client.errors") == ["name-resolution"]
    assert "service-unreachable" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    'psql: error: could not translate host name "localhost" to address: Name or service not known',
    'psql: error: could not translate host name "db.example.com" to address: Name or service not known',
])
def test_localhost_or_a_dotted_outside_name_is_no_service_name(line: str) -> None:
    assert "service-unreachable" not in _symptoms(joined_facts(line + "\n"))
