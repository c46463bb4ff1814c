"""The Service join (collectors/joins.py) is pure and total: any mix of per-object facts gives facts or nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from collectors.factset import FactSet
from collectors.joins import cluster_ip_no_route, service_backends
from collectors.models import Citation, Fact

_NAMES = ["service.selector", "service.target_ports", "pod.labels", "pod.container_ports", "netpol.ingress_selectors"]
_SUBJECTS = ["service/shop/web", "pod/shop/web-1", "deployment/web", "networkpolicy/shop/p", "", "a/b/c/d"]
_TEXT = st.text(alphabet="ab=,/*-:0123456789 ", max_size=12)


def _fact(name: str, subject: str, value: object) -> Fact:
    return Fact(name=name, value=value, subject=subject, citation=Citation(artifact="a", start=1, end=1))


@given(st.lists(st.tuples(st.sampled_from(_NAMES), st.sampled_from(_SUBJECTS), _TEXT, st.lists(_TEXT, max_size=3)),
                max_size=12))
def test_any_mix_of_facts_is_joined_without_raising(rows: list[tuple[str, str, str, list[str]]]) -> None:
    facts = FactSet([_fact(n, s, text if n == "service.selector" else items) for n, s, text, items in rows])
    for fact in service_backends(facts):
        assert fact.name in {"service.selector_matches_pods", "service.target_port_names_missing",
                             "service.target_port_numbers_undeclared", "netpol.selects_backends"}
        assert fact.subject  # about the Service whose selector it joined


def test_pods_in_another_namespace_are_not_the_service_s() -> None:
    facts = FactSet([_fact("service.selector", "service/shop/web", "app=web"),
                     _fact("pod.labels", "pod/billing/web-1", ["app=web"])])
    assert service_backends(facts) == []


def test_a_probe_on_a_port_name_no_container_has_is_undeclared_and_a_declared_one_is_not() -> None:
    from collectors.joins import pod_ports

    facts = FactSet([_fact("pod.container_ports", "deployment/web", ["8080/http"]),
                     _fact("pod.probe_ports", "deployment/web", ["readiness:http", "liveness:metrics",
                                                                 "startup:8080"])])
    assert [(f.name, f.value) for f in pod_ports(facts)] == [("probe.ports_undeclared", ["liveness:metrics"])]


def test_a_refused_loopback_dial_joins_only_when_no_container_declares_its_port() -> None:
    from collectors.joins import pod_ports

    declared = _fact("pod.container_ports", "pod/ml/predictor", ["8998/-"])
    refused = _fact("client.loopback_refused", "", ["127.0.0.1:8080"])
    assert {f.name: f.value for f in pod_ports(FactSet([declared, refused]))} == {
        "client.errors": ["refused"], "client.targets": ["127.0.0.1:8080"], "client.ports_undeclared": ["8080"]}
    # The port is declared (the app is just not up yet), or no pod was pasted: no mismatch is claimed.
    assert pod_ports(FactSet([_fact("pod.container_ports", "pod/ml/p", ["8080/-"]), refused])) == []
    assert pod_ports(FactSet([refused])) == []


def test_a_no_route_joins_only_to_an_address_a_pasted_service_owns() -> None:
    # kubernetes#61005's shape: two Services' ClusterIPs, then curl's "No route to host" for one of them.
    owned = [_fact("service.cluster_ips", "", ["10.32.0.1"]), _fact("service.cluster_ips", "", ["10.32.0.43"])]
    hit = cluster_ip_no_route(FactSet([*owned, _fact("client.no_route_targets", "", ["10.32.0.43:80"])]))
    assert [(f.name, f.value) for f in hit] == [("client.cluster_ip_no_route", ["10.32.0.43:80"])]
    # A pod's or a node's address is no Service's: nothing is joined, and nothing without the Services pasted.
    assert cluster_ip_no_route(FactSet([*owned, _fact("client.no_route_targets", "", ["10.32.0.4:80"])])) == []
    assert cluster_ip_no_route(FactSet([_fact("client.no_route_targets", "", ["10.32.0.43:80"])])) == []
    # BusyBox's wget and nc print the address without a port.
    bare = cluster_ip_no_route(FactSet([*owned, _fact("client.no_route_targets", "", ["10.32.0.43"])]))
    assert [f.value for f in bare] == [["10.32.0.43"]]


_ADDRESSES = st.sampled_from(["service.cluster_ips", "client.no_route_targets"])


@given(st.lists(st.tuples(_ADDRESSES, st.lists(_TEXT, max_size=3)), max_size=8))
def test_any_mix_of_addresses_is_joined_without_raising(rows: list[tuple[str, list[str]]]) -> None:
    facts = FactSet([_fact(n, "", items) for n, items in rows])
    owned = {v for n, items in rows if n == "service.cluster_ips" for v in items}
    for fact in cluster_ip_no_route(facts):
        assert fact.name == "client.cluster_ip_no_route"
        assert all(str(t) in owned or str(t).rsplit(":", 1)[0] in owned for t in fact.value)  # type: ignore[union-attr]


def test_an_exposed_workload_whose_pods_are_shown_ready_has_ready_endpoints() -> None:
    from collectors.joins import exposed_pods_ready

    def joined(workloads: list[str], pods: list[str], ready: bool) -> list[object]:
        facts = FactSet([_fact("service.exposed_workloads", "", workloads), _fact("pods.names", "", pods),
                         _fact("pods.all_ready", "", ready)])
        return [(f.name, f.value) for f in exposed_pods_ready(facts)]

    assert joined(["hello-minikube"], ["hello-minikube-79577c5997-24gt8"], True) == [
        ("service.exposed_pods_ready", True)]
    assert joined(["web"], ["web"], True) == [("service.exposed_pods_ready", True)]  # kubectl expose pod web
    assert joined(["web"], ["web-0", "db-0"], True) == [("service.exposed_pods_ready", True)]  # a StatefulSet
    assert joined(["hello-minikube"], ["hello-minikube-79577c5997-24gt8"], False) == []  # not every pod ready
    assert joined(["web"], ["webapp-5d8f7-abcde"], True) == []  # another workload's pods
    assert joined(["web"], [], True) == []


@given(st.lists(_TEXT, max_size=4), st.lists(_TEXT, max_size=4), st.booleans())
def test_any_exposed_workloads_and_pods_are_joined_without_raising(workloads: list[str], pods: list[str],
                                                                   ready: bool) -> None:
    from collectors.joins import exposed_pods_ready

    facts = FactSet([_fact("service.exposed_workloads", "", workloads), _fact("pods.names", "", pods),
                     _fact("pods.all_ready", "", ready)])
    assert all(f.value is True for f in exposed_pods_ready(facts))
