"""Karpenter's NodeClaim conditions (signals.yaml karpenter-*): an instance whose node never registered is a node
that has not joined; a healthy NodeClaim names nothing. Conditions rendered as `kubectl describe nodeclaim` prints
them, from kubernetes-sigs/karpenter pkg/controllers/nodeclaim/lifecycle (registration.go, initialization.go)."""

from __future__ import annotations

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def facts_of(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


def _condition(kind: str, status: str, reason: str, message: str) -> str:
    return (f"    Last Transition Time:  2025-02-14T07:15:25Z\n    Message:               {message}\n"
            f"    Observed Generation:   1\n    Reason:                {reason}\n"
            f"    Status:                {status}\n    Type:                  {kind}\n")


def test_a_node_that_never_registered_has_not_joined() -> None:
    text = "Conditions:\n" + _condition("Registered", "Unknown", "NodeNotFound", "Node not registered with cluster") \
        + _condition("Launched", "True", "Launched", "")
    facts = facts_of(text)
    assert facts["node.not_ready_reasons"] == ["kubelet-stopped-posting"]
    assert facts["evidence.symptoms"] == ["node-not-ready"]


def test_a_registered_node_not_ready_is_not_ready() -> None:
    text = "Conditions:\n" + _condition("Initialized", "Unknown", "NodeNotReady", "Node status is NotReady")
    assert facts_of(text)["node.conditions"] == ["NotReady"]


def test_a_healthy_nodeclaim_names_nothing() -> None:
    text = "Conditions:\n" + "".join(_condition(k, "True", k, "") for k in ("Launched", "Registered", "Initialized",
                                                                           "Ready"))
    facts = facts_of(text)
    assert "node.not_ready_reasons" not in facts
    assert "evidence.symptoms" not in facts
