"""`kubectl describe service` parser, on descriptions people pasted in public threads (verbatim, cut at lines)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.detect import detect_kind
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.kubernetes import describe_service
from collectors.paste import artifacts_from_text

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"

# https://github.com/kubernetes/kubernetes/issues/7341 (comment of 2015-04-28, once the selector was fixed):
# old kubectl, tab-separated, three ready addresses.
ISSUE_7341 = (
    "Name:\t\t\tinfrahw2\n"
    "Labels:\t\t\tname=infrahw2\n"
    "Selector:\t\tname=infrahw2\n"
    "IP:\t\t\t10.247.28.103\n"
    "Port:\t\t\t<unnamed>\t8080/TCP\n"
    "Endpoints:\t\t10.246.2.11:8080,10.246.3.10:8080,10.246.3.9:8080\n"
    "Session Affinity:\tNone\n"
    "No events.\n"
)
# https://github.com/kubernetes/kubernetes/issues/5875 (comment of 2016-06-10): two services in one paste, the
# second with two ports, each with its own Endpoints line; the first selects nothing.
ISSUE_5875 = (
    "Name:\t\t\tkubernetes\n"
    "Namespace:\t\tdefault\n"
    "Labels:\t\t\tcomponent=apiserver\n"
    "\t\t\tprovider=kubernetes\n"
    "Selector:\t\t<none>\n"
    "Type:\t\t\tClusterIP\n"
    "IP:\t\t\t10.0.0.1\n"
    "Port:\t\t\thttps\t443/TCP\n"
    "Endpoints:\t\t<none>\n"
    "Session Affinity:\tClientIP\n"
    "No events.\n"
    "\n"
    "Name:\t\t\tnginxsvc\n"
    "Namespace:\t\tdefault\n"
    "Labels:\t\t\tapp=nginx\n"
    "Selector:\t\tapp=nginx\n"
    "Type:\t\t\tNodePort\n"
    "IP:\t\t\t10.0.0.171\n"
    "Port:\t\t\thttp\t80/TCP\n"
    "NodePort:\t\thttp\t31237/TCP\n"
    "Endpoints:\t\t<none>\n"
    "Port:\t\t\thttps\t443/TCP\n"
    "NodePort:\t\thttps\t32133/TCP\n"
    "Endpoints:\t\t<none>\n"
    "Session Affinity:\tNone\n"
    "No events.\n"
)
# https://github.com/deis/charts/issues/29 (issue description): an empty Endpoints value, as kubectl of 2015 printed
# a service with no ready pods behind it.
DEIS_29 = (
    "Name:           deis-workflow\n"
    "Namespace:      deis\n"
    "Labels:         heritage=deis,routable=true\n"
    "Selector:       name=deis-workflow\n"
    "Type:           ClusterIP\n"
    "IP:         10.3.0.124\n"
    "Port:           http    80/TCP\n"
    "Endpoints:      \n"
    "Session Affinity:   None\n"
    "No events.\n"
)
# https://kubernetes.io/docs/tutorials/stateless-application/expose-external-ip-address/ (kubernetes/website,
# content/en/docs/tutorials/stateless-application/expose-external-ip-address.md): the output the tutorial shows,
# indented as it is there.
TUTORIAL = (
    "        Name:           my-service\n"
    "        Namespace:      default\n"
    "        Labels:         app.kubernetes.io/name=load-balancer-example\n"
    "        Annotations:    <none>\n"
    "        Selector:       app.kubernetes.io/name=load-balancer-example\n"
    "        Type:           LoadBalancer\n"
    "        IP:             10.3.245.137\n"
    "        LoadBalancer Ingress:   104.198.205.71\n"
    "        Port:           <unset> 8080/TCP\n"
    "        NodePort:       <unset> 32377/TCP\n"
    "        Endpoints:      10.0.0.6:8080,10.0.1.6:8080,10.0.1.7:8080 + 2 more...\n"
    "        Session Affinity:   None\n"
    "        Events:         <none>\n"
)
GKE_57710 = (REALWORLD / "service-unreachable" / "k8s-issue-57710-describe-service-endpoints-none"
             / "evidence.txt").read_text(encoding="utf-8")


def parse(text: str) -> ParseResult:
    return describe_service.parse(Artifact(id="a1", kind=ArtifactKind.DESCRIBE_SERVICE, content=text))


def cited(result: ParseResult) -> list[tuple[str, object, int, int, str]]:
    return [(f.name, f.value, f.citation.start, f.citation.end, f.subject) for f in result.facts
            if f.name.startswith(("service.", "endpoints."))]


@pytest.mark.parametrize(("text", "expected"), [
    (ISSUE_7341, [("service.selector", "name=infrahw2", 3, 3, "service/infrahw2"),
                  ("service.has_selector", True, 3, 3, "service/infrahw2"),
                  ("endpoints.ready", 3, 6, 6, "service/infrahw2"),
                  ("service.cluster_ips", ["10.247.28.103"], 4, 4, "service/infrahw2")]),
    (ISSUE_5875, [("service.has_selector", False, 5, 5, "service/default/kubernetes"),
                  ("endpoints.ready", 0, 9, 9, "service/default/kubernetes"),
                  ("service.cluster_ips", ["10.0.0.1"], 7, 7, "service/default/kubernetes"),
                  ("service.selector", "app=nginx", 16, 16, "service/default/nginxsvc"),
                  ("service.has_selector", True, 16, 16, "service/default/nginxsvc"),
                  ("endpoints.ready", 0, 21, 24, "service/default/nginxsvc"),
                  ("service.cluster_ips", ["10.0.0.171"], 18, 18, "service/default/nginxsvc")]),
    (DEIS_29, [("service.selector", "name=deis-workflow", 4, 4, "service/deis/deis-workflow"),
               ("service.has_selector", True, 4, 4, "service/deis/deis-workflow"),
               ("endpoints.ready", 0, 8, 8, "service/deis/deis-workflow"),
               ("service.cluster_ips", ["10.3.0.124"], 6, 6, "service/deis/deis-workflow")]),
])
def test_facts_with_their_lines(text: str, expected: list[tuple[str, object, int, int, str]]) -> None:
    result = parse(text)
    assert cited(result) == expected
    assert result.problems == []


@pytest.mark.parametrize("text", [ISSUE_7341, ISSUE_5875, DEIS_29, TUTORIAL])
def test_a_description_is_detected_as_one(text: str) -> None:
    assert detect_kind(text) == ArtifactKind.DESCRIBE_SERVICE


def test_the_command_before_it_says_what_it_is() -> None:
    # The GKE paste: a heading, a fence, the prompt with `kubectl describe service`, the description.
    kinds = {str(a.kind) for a in artifacts_from_text(GKE_57710, "paste")}
    assert "describe-service" in kinds, kinds


def test_more_than_three_addresses_are_counted() -> None:
    # kubectl lists three addresses per port and counts the rest: five pods behind this one.
    assert ("endpoints.ready", 5, 11, 11, "service/default/my-service") in cited(parse(TUTORIAL))
