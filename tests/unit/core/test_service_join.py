"""The Service join (collectors/joins.py) is pure and total: any mix of per-object facts gives facts or nothing."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from collectors.factset import FactSet
from collectors.joins import service_backends
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
