"""Fix round 17 (issue 24): a gang's PodGroup said to wait, and a missing toleration said to keep pods off nodes
(collectors/catalogs/stated.yaml, the "fix round 17" section). Real sentences verbatim with their threads; the
sentences near them that must not be read (composed ones say so)."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import said_facts


@pytest.mark.parametrize("text", [
    # https://github.com/volcano-sh/volcano/issues/2143 (description)
    "Cluster has enough resource but deployment workload scheduled by volcano still pending due to  podgroup in "
    "pending phase.",
    "The job's PodGroup stays Inqueue for hours while its pods wait.",  # composed
])
def test_a_podgroup_said_to_wait_is_a_configured_gang(text: str) -> None:
    got = said_facts(text)
    assert got.get("gang.configured") is True, got
    assert "pending" in got.get("evidence.symptoms", []), got  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # https://github.com/volcano-sh/volcano/issues/2657 (description): a group moving to Inqueue, no wait
    "If the enqueue action is not configured, after the podgroup status is updated to Completed, it will be updated "
    "to the inqueue status soon.",
    "The podgroup is Running and all its pods started.",  # composed: not waiting
    "The podgroup did not stay Pending; it went Running in seconds.",  # composed: denied
])
def test_a_podgroup_not_said_to_wait_says_nothing(text: str) -> None:
    assert "gang.configured" not in said_facts(text)


@pytest.mark.parametrize("text", [
    "The training pod cannot be scheduled because of missing tolerations for the GPU taint.",  # composed
    "Our pods stay unschedulable due to taints that the pods didn't tolerate.",  # composed
])
def test_a_missing_toleration_said_as_the_reason_is_the_taint_reason(text: str) -> None:
    got = said_facts(text)
    assert got.get("scheduling.reasons") == ["untolerated-taint"], got
    assert "pending" in got.get("evidence.symptoms", []), got  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # https://github.com/nyu-mll/jiant/pull/496 (description): the taint keeping other pods off, as designed
    "GCP now adds a taint to GPU nodes to prevent non-GPU pods from scheduling on them, so we need to add an "
    "explicit toleration to handle this.",
    # https://github.com/kubeflow/kubeflow/issues/5275 (title): tolerations present
    "pods not scheduling to GPU nodes, taint tolerations present",
    # https://github.com/K8sbykeshed/k8s-service-validator/pull/120 (description): hedged, one cause among several
    "Pods keeps in pending state, may because of cannot find the node to deploy, due to resource constraints in the "
    "cluster, or taints without corresponding tolerance.",
    # https://github.com/NVIDIA/gpu-feature-discovery/issues/70 (description): asked
    "Maybe the difference is in tolerations?",
])
def test_a_taint_or_toleration_not_said_as_the_reason_says_nothing(text: str) -> None:
    assert "scheduling.reasons" not in said_facts(text)
