"""Fix round f8 (issue #24, batches kk and ll): Envoy's "no healthy upstream" body with the next shell prompt on its
line, and Envoy's response flag quoted in parentheses after a 5xx. Real pastes (first_sight_pastes.yaml, each with
its thread), and the near misses that must read nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, joined_facts


def _symptoms(text: str) -> set[object]:
    value = joined_facts(text).get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


def test_the_body_followed_by_the_next_prompt_on_its_line_is_envoy_s_answer() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["aws-microservices-239-no-healthy-upstream-then-prompt"])
    assert facts["http.failure_kinds"] == ["no-upstream"]
    assert "error-rate" in _symptoms(FIRST_SIGHT_PASTES["aws-microservices-239-no-healthy-upstream-then-prompt"])


# Prompts bash and sh print (composed: PS1's defaults "\u@\h:\w\$ ", Red Hat's "[\u@\h \W]\$ ", a bare "$ ").
@pytest.mark.parametrize("line", ["no healthy upstreamroot@node-1:~# curl -s web", "no healthy upstream[root@m1 ~]# ",
                                  "no healthy upstream$ curl -s web"])
def test_every_prompt_form_after_the_body_is_read(line: str) -> None:
    assert joined_facts(line + "\n").get("http.failure_kinds") == ["no-upstream"]


@pytest.mark.parametrize("line", [
    "We see no healthy upstream 30% of the time? Or is it the gateway?",
    "Is no healthy upstream # the same as a 503 UH?",
])
def test_prose_after_the_phrase_is_no_prompt(line: str) -> None:
    assert "http.failure_kinds" not in joined_facts(line + "\n")


def test_a_5xx_with_envoy_s_no_upstream_flag_in_parentheses_is_the_proxy_without_a_backend() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["istio-50058-prose-503-unavailable-uh"])
    assert facts["http.failure_kinds"] == ["no-upstream"]
    assert facts["http.error_statuses"] == [503]
    assert _symptoms(FIRST_SIGHT_PASTES["istio-50058-prose-503-unavailable-uh"]) == {"error-rate"}


@pytest.mark.parametrize("line", [
    "The UH flag (UH) means Envoy found no healthy upstream host.",   # explained, no request's status
    "It should return 503 (UH) instead of 200 when every pod is gone.",  # expected, not seen
    "Requests fail with 503 (UF,URX) after the upgrade.",              # a connection failure, not no-upstream
])
def test_a_flag_in_parentheses_without_a_5xx_or_of_another_kind_is_no_missing_backend(line: str) -> None:
    assert "no-upstream" not in (joined_facts(line + "\n").get("http.failure_kinds") or [])


# ---- a browser's network error (chromium net/base/net_error_list.h) ---------------------------------------------
def test_a_browser_refused_by_the_load_balancer_is_a_client_refused() -> None:
    # https://github.com/kubernetes/website/issues/16158 (description), the sentence after `kubectl get service`
    facts = joined_facts("But when trying to make a request to 35.xxx.xxx.xxx I get: ERR_CONNECTION_REFUSED\n")
    assert facts["client.errors"] == ["refused"]  # service-unreachable's trigger: size(client.errors) > 0


@pytest.mark.parametrize("line", [
    "GET https://fonts.example.com/a.woff net::ERR_NAME_NOT_RESOLVED",  # a name, not a connection refused
    "GET http://10.0.0.5/api net::ERR_EMPTY_RESPONSE",                  # a connection that was made
    "const ERR_CONNECTION_REFUSED_MESSAGE = 'x';",                      # an identifier that only starts so
])
def test_other_browser_errors_are_no_connect_failure(line: str) -> None:
    assert "client.errors" not in joined_facts(line + "\n")


# ---- a Service's selector said not to match its pods (stated.yaml selector-said-not-matching) -------------------
@pytest.mark.parametrize("sentence", [
    # https://github.com/helm/charts/issues/21514 (description)
    "The selector doesn't match the label in the deployment descriptor for the reason it was not able to assign the "
    "right loadbalancer to the service endpoints and throwing exceptions.",
    # https://github.com/helm/charts/issues/5455 (description)
    "- However **Service endpoints are empty because its label selector is not selecting the pod**.",
    # https://github.com/bakdata/streams-bootstrap/pull/180 (description)
    "The service selector did not match the pod(s) labels. Therefore the service was not able to find the pod(s).",
    # https://github.com/kubernetes/kubernetes/issues/7341 (thockin's comment)
    "This label is not one of the labels you applied to your pods, so the selector selects nothing.",
])
def test_a_selector_said_not_to_match_the_pods_is_read_false(sentence: str) -> None:
    assert joined_facts(sentence + "\n").get("service.selector_matches_pods") is False


@pytest.mark.parametrize("sentence", [
    # https://github.com/deis/charts/issues/29 (description): looked and found nothing wrong
    "And I can't see anything glaringly wrong with the labels or selectors.",
    # https://github.com/deis/charts/issues/29 (arschles's comment): asked
    "does the replication controller have the same selector as the service? not sure it matters, just ruling it out.",
    # https://github.com/bakdata/streams-bootstrap/pull/180 (title): the fix, not the fault
    "Fix service selector to match pod labels",
    # composed: the selector said to match
    "The service selector matches the pod labels and the endpoints are populated.",
])
def test_a_selector_said_to_match_or_asked_about_is_not_read(sentence: str) -> None:
    assert "service.selector_matches_pods" not in joined_facts(sentence + "\n")


# ---- large answers said to stall: the path MTU's signature (stated.yaml large-payloads-stall-said) -------------
@pytest.mark.parametrize("sentence", [
    # https://github.com/kubernetes/kubernetes/issues/65255 (description)
    "If the resource I request is small, `wget` can get the resonpse. If the resource I request is large, `wget` "
    "will be stalled and timeout.",
    # https://github.com/cloudfoundry/guardian/issues/77 (description)
    "After upgrading to garden-runc-release 1.4.0 we experienced an outage whereby requests to applications that "
    "generated HTTP responses larger than approximately 9k would hang after returning the response headers.",
    # https://github.com/projectcalico/calico/issues/7651 (description)
    "But node B cannot use ssh to connect to node A's tunl0 ip address, Like when the API returns more than 1372 "
    "bytes, it will be hanging.",
    # https://github.com/moby/moby/issues/41332 (title)
    "Requests with sufficiently big headers hang on hybrid swarm cluster",
])
def test_large_answers_said_to_stall_are_the_mtu_signature(sentence: str) -> None:
    facts = joined_facts(sentence + "\n")
    assert facts.get("net.large_payloads_stall") is True
    assert "latency" in (facts.get("evidence.symptoms") or [])


@pytest.mark.parametrize("sentence", [
    "Large responses no longer hang after we lowered the MTU to 1450.",          # composed: denied
    "Do large responses hang for you too?",                                       # composed: asked
    "Large requests to the model time out because the prompt is 30k tokens.",     # a request's size, not the path
    "The large data loader stalls every few steps.",                              # input, not a network answer
])
def test_large_requests_or_denied_or_asked_stalls_are_not_read(sentence: str) -> None:
    assert "net.large_payloads_stall" not in joined_facts(sentence + "\n")


# ---- a Service said to hang when reached (stated.yaml service-said-hangs) ---------------------------------------
def test_a_service_said_to_hang_when_accessed_is_unreachable() -> None:
    # https://github.com/kubernetes/kubernetes/issues/80987 (description)
    sentence = ("My `winsper-mongo` works well, however, when I tried to access my `winsper-eureka` service, it just "
                "hung without response:\n")
    assert _symptoms(sentence) == {"service-unreachable"}


@pytest.mark.parametrize("sentence", [
    "When I access the service it no longer hangs after the kube-proxy restart.",  # composed: denied
    "Does it hang when you access the service?",                                   # composed: asked
    "When we call the inference service it hangs for 30 seconds per request.",     # an application slow to serve
])
def test_a_service_not_said_to_hang_or_only_slow_is_not_unreachable(sentence: str) -> None:
    assert "service-unreachable" not in _symptoms(sentence + "\n")


# ---- the container said to listen on another port than the one traffic is sent to (port-said-not-listened) ------
def test_a_container_said_to_listen_elsewhere_is_the_closed_target_port() -> None:
    # https://github.com/kubernetes/kubernetes/issues/20677 (description)
    line = ("this doesnt work. If i login to the nginx container, the nginx container doesnt have port 84 but its "
            "still listening on 80.\n")
    assert joined_facts(line).get("service.port_said_not_listened") is True


@pytest.mark.parametrize("sentence", [
    "The container does not listen on 80 but listens on 80 after the restart.",  # composed: the same port
    "Does the container not listen on 84 but on 80?",                            # composed: asked
    "The app listens on 8080 and the targetPort is 8080.",                       # composed: agreeing
])
def test_the_same_port_or_a_question_is_no_port_said_not_listened(sentence: str) -> None:
    assert "service.port_said_not_listened" not in joined_facts(sentence + "\n")
