"""`kubectl get nodes` tables, on the real-world pastes that hold one (each folder's case.yaml names its source)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import node_table, pod_table
from collectors.paste import artifacts_from_text

CASES = Path(__file__).resolve().parents[2] / "realworld" / "node-not-ready"


def text_of(case: str) -> str:
    return (CASES / case / "evidence.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize(("case", "expected"), [
    # jonlangemak/ansible_kubernetes#6: kubectl 1.7's table (no ROLES), four NotReady nodes; k8s-2 comes first.
    ("ansible-kubernetes-6-get-nodes-notready-cni-uninitialized",
     [("node.conditions", ["NotReady"], 6, "node/k8s-2"), ("node.conditions", ["NotReady"], 7, "node/k8s-3"),
      ("node.conditions", ["NotReady"], 8, "node/k8s-4"), ("node.conditions", ["NotReady"], 9, "node/k8s-5"),
      ("node.name", "k8s-2", 6, "node/k8s-2")]),
    # openebs/openebs#308: three nodes, one NotReady, inside a fence after its prompt.
    ("openebs-308-get-nodes-notready-kubelet-active-dockerd-down",
     [("node.conditions", ["NotReady"], 7, "node/kubeminion-01"),
      ("node.name", "kubeminion-01", 7, "node/kubeminion-01")]),
])
def test_not_ready_rows(case: str, expected: list[tuple[str, object, int, str]]) -> None:
    result = node_table.parse(Artifact(id="a", kind=ArtifactKind.NODE_TABLE, content=text_of(case)))
    assert [(f.name, f.value, f.citation.start, f.subject) for f in result.facts] == expected


@pytest.mark.parametrize("case", ["ansible-kubernetes-6-get-nodes-notready-cni-uninitialized",
                                  "openebs-308-get-nodes-notready-kubelet-active-dockerd-down"])
def test_a_node_table_is_not_a_pod_table(case: str) -> None:
    text = text_of(case)
    assert node_table.sniff(text) == 90 and pod_table.sniff(text) == 0
    assert "node-table" in {str(a.kind) for a in artifacts_from_text(text, "paste")}


def test_rows_after_an_elision_mark_are_still_read() -> None:
    # krkn-chaos/cerberus#203: the reporter cut rows out and left "........" in their place; the cordoned rows
    # come after it, all nodes Ready.
    result = node_table.parse(Artifact(id="a", kind=ArtifactKind.NODE_TABLE,
                                       content=text_of("cerberus-203-oc-get-nodes-ready-schedulingdisabled-cordoned")))
    assert [(f.name, f.value, f.subject) for f in result.facts] == [
        ("node.unschedulable", True, "node/ip-10-0-215-4.us-east-2.compute.internal"),
        ("node.unschedulable", True, "node/ip-10-0-221-107.us-east-2.compute.internal")]


def test_the_restart_count_is_the_broken_pods_not_a_healthy_neighbours() -> None:
    # OpenShiftDemos/gogs-openshift-docker#3 (oc get pods, 2016): the new pod hangs in ContainerCreating with 0
    # restarts; postgresql beside it is Running with 3 past restarts, which is no crash loop of the hung pod.
    text = (CASES.parent / "container-creating" / "gogs-openshift-3-2016-oc-get-pods-configmap-name-literal"
            / "evidence.txt").read_text(encoding="utf-8")
    result = pod_table.parse(Artifact(id="a", kind=ArtifactKind.POD_TABLE, content=text))
    facts = {f.name: (f.value, f.subject) for f in result.facts}
    assert facts["container.restart_count"] == (0, "pod/gogs-2-91275")
    assert facts["container.waiting.reason"] == ("ContainerCreating", "pod/gogs-2-91275")


# kubectl's node table (pkg/printers/internalversion/printers.go, 1.8+ columns) rendered with sample values, the
# node names hidden the ways people hide them before pasting: the row is still a node row.
@pytest.mark.parametrize("name", ["(node-2-ip)", "<node2>", "[redacted]", "xxx.xxx.xxx.xxx", "worker-***", "***"])
def test_a_redacted_node_name_is_still_a_row(name: str) -> None:
    table = ("NAME          STATUS     ROLES    AGE   VERSION\n"
             "node-a        Ready      worker   54d   v1.18.6\n"
             f"{name}   NotReady   worker   54d   v1.18.6\n")
    result = node_table.parse(Artifact(id="a", kind=ArtifactKind.NODE_TABLE, content=table))
    assert ("node.conditions", ["NotReady"], 3) in [(f.name, f.value, f.citation.start) for f in result.facts]
    assert node_table.sniff(table) == 90


def test_an_all_ready_redacted_table_names_no_not_ready_node() -> None:
    table = ("NAME          STATUS   ROLES    AGE   VERSION\n"
             "(node-1-ip)   Ready    worker   54d   v1.18.6\n"
             "(node-2-ip)   Ready    worker   54d   v1.18.6\n")
    result = node_table.parse(Artifact(id="a", kind=ArtifactKind.NODE_TABLE, content=table))
    assert [f.value for f in result.facts if f.name == "node.conditions"] == []
