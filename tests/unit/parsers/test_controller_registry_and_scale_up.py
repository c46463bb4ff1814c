"""Issue 24 round 8: a workflow controller's registry lookup refused (registry-auth before any kubelet pull), the
cluster-autoscaler finding no node group to grow, and an ingress controller's HAProxy runtime API refusing a server
change. Real pastes are in first_sight_pastes.yaml with their threads; the catalog tests render every template."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES, joined_facts


def test_an_argo_entrypoint_lookup_refused_by_the_registry_is_an_unauthorized_pull() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["argo-workflows-13947-entrypoint-lookup-ecr-401"])
    assert facts["image.pull_error"] == "unauthorized"
    assert "image-pull" in facts["evidence.symptoms"]  # type: ignore[operator]


def test_an_argo_entrypoint_lookup_that_failed_for_another_reason_names_no_pull_failure() -> None:
    # the registry spoke plain HTTP: a TLS/endpoint mistake, no refused credentials
    facts = joined_facts(FIRST_SIGHT_PASTES["cube-studio-229-entrypoint-lookup-http-to-https"])
    assert "image.pull_error" not in facts
    assert "image-pull" not in facts.get("evidence.symptoms", [])  # type: ignore[operator]


def test_no_expansion_options_is_a_pending_pod_no_group_can_take() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["autoscaler-4117-no-expansion-options"])
    assert facts["scheduling.failed"] is True
    assert facts["evidence.symptoms"] == ["pending"]


def test_one_group_that_cannot_take_a_pod_while_another_is_resized_names_no_symptom() -> None:
    facts = joined_facts(FIRST_SIGHT_PASTES["autoscaler-5698-no-pod-can-fit-then-best-option"])
    assert "pending" not in facts.get("evidence.symptoms", [])  # type: ignore[operator]
    assert facts["pods.pending"] == ["2b1f1ab5-7cf8-417a-b1ab-568dd15e2f4b-5hpl2", "idle-placeholder-bb977568c-hlpdw"]


@pytest.mark.parametrize("line", [
    "I0606 05:28:20.421346 1 scale_up.go:441] No expansion options",
    "I0211 15:35:46.498872       1 scale_up.go:441] No expansion optiions",
])
def test_both_spellings_of_no_expansion_options_are_read(line: str) -> None:
    assert joined_facts(line)["evidence.symptoms"] == ["pending"]


@pytest.mark.parametrize("text", [
    "The laptop has no expansion options, so we bought another.",
    ":irc.example.net 402 nick foo.example.net :No such server.",
    "echo 'set server be/s1 state ready' | socat stdio tcp:127.0.0.1:9999 -> fine, no errors",
])
def test_the_same_words_elsewhere_name_no_symptom(text: str) -> None:
    assert "evidence.symptoms" not in joined_facts(text)
