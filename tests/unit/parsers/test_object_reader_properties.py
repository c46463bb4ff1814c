"""The object readers added for joins are total: any nesting of mappings and lists, any text, gives plain values
and never raises."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.factset import FactSet
from collectors.joins import pod_ports
from collectors.models import Artifact, ArtifactKind, Citation, Fact
from collectors.parsers.kubernetes import k8s_objects
from collectors.parsers.kubernetes.k8s_object_text import load_docs
from collectors.parsers.kubernetes.k8s_pod_templates import pod_templates
from collectors.parsers.kubernetes.k8s_policy_egress import dns_blocked, egress_rules

_KEYS = st.sampled_from(["spec", "template", "metadata", "containers", "labels", "egress", "ports", "port", "to",
                         "toPorts", "toEndpoints", "toEntities", "matchLabels", "name", "image", "rules", "dns",
                         "endPort", "policyTypes", "specs", "status", "x"])
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-70000, 70000), st.text(max_size=8),
                     st.sampled_from(["53", "dns", "Egress", "all", "kube-dns", "kube-system", "80"]))
_TREES: st.SearchStrategy[Any] = st.recursive(
    _SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_KEYS, inner, max_size=5)),
    max_leaves=30)


@given(st.dictionaries(_KEYS, _TREES, max_size=5))
def test_pod_templates_are_found_in_any_object_without_raising(obj: dict[str, Any]) -> None:
    for found in pod_templates(obj):
        assert isinstance(found.spec.get("containers"), list)
        assert found.path[0] == "spec"


@given(st.dictionaries(_KEYS, _TREES, max_size=5), st.booleans())
def test_egress_rules_are_judged_for_any_spec(spec: dict[str, Any], cilium: bool) -> None:
    rules = egress_rules(spec, cilium)
    if rules is not None:
        assert isinstance(dns_blocked(rules), bool)


@given(st.lists(st.dictionaries(_KEYS, _TREES, max_size=4), max_size=4))
def test_a_rule_that_names_port_53_always_lets_dns_out(rules: list[dict[str, Any]]) -> None:
    assert dns_blocked([*rules, {"ports": [{"port": 53, "protocol": "UDP"}]}]) is False


@given(st.text(alphabet="ab: -\n\t#{}[]'\"$.", max_size=200))
@settings(max_examples=200)
def test_any_text_loads_or_reports_and_the_object_reader_never_raises(text: str) -> None:
    problems: list[str] = []
    load_docs(text, problems)
    assert all(isinstance(p, str) for p in problems)
    k8s_objects.parse(Artifact(id="a", kind=ArtifactKind.K8S_OBJECT, content=text))


_PORTS = st.lists(st.text(alphabet="0123456789/abh-", max_size=8), max_size=3)


@given(st.lists(st.tuples(st.sampled_from(["pod.container_ports", "pod.probe_ports", "client.loopback_refused"]),
                          st.sampled_from(["pod/a/b", "deployment/a", ""]), _PORTS), max_size=8))
def test_the_port_join_takes_any_mix_of_facts(rows: list[tuple[str, str, list[str]]]) -> None:
    facts = FactSet([Fact(name=n, value=v, subject=s, citation=Citation(artifact="a", start=1, end=1))
                     for n, s, v in rows])
    for fact in pod_ports(facts):
        assert fact.name in {"probe.ports_undeclared", "client.errors", "client.targets", "client.ports_undeclared"}
        assert isinstance(fact.value, list) and fact.value


@given(st.lists(st.tuples(st.sampled_from(["Master", "Worker", "Launcher"]), st.integers(1, 8), st.booleans()),
                min_size=1, max_size=3, unique_by=lambda r: r[0]))
@settings(max_examples=40)
def test_each_replica_template_is_read_and_cited_at_its_own_lines(replicas: list[tuple[str, int, bool]]) -> None:
    lines = ["apiVersion: kubeflow.org/v1", "kind: PyTorchJob", "metadata:", "  name: job", "spec:",
             "  pytorchReplicaSpecs:"]
    for name, gpus, shm in replicas:
        lines += [f"    {name}:", "      template:", "        spec:", "          containers:",
                  f"          - name: {name.lower()}", "            image: trainer:1",
                  "            resources:", "              limits:", f"                nvidia.com/gpu: {gpus}"]
        if shm:
            lines += ["            volumeMounts:", "            - mountPath: /dev/shm", "              name: dshm",
                      "          volumes:", "          - name: dshm", "            emptyDir:",
                      "              medium: Memory"]
    text = "\n".join(lines) + "\n"
    result = k8s_objects.parse(Artifact(id="a", kind=ArtifactKind.K8S_OBJECT, content=text))
    gpu = [f for f in result.facts if f.name == "pod.gpu_request"]
    assert sorted(f.value for f in gpu) == sorted({g for _, g, _ in replicas}) or len(gpu) == len(replicas)
    for fact in gpu:
        assert f"nvidia.com/gpu: {fact.value}" in lines[fact.citation.start - 1]
    shm_lines = [lines[f.citation.start - 1] for f in result.facts if f.name == "pod.shm_volume" and f.value]
    assert all("/dev/shm" in line for line in shm_lines)
    assert bool(shm_lines) == any(s for _, _, s in replicas)
