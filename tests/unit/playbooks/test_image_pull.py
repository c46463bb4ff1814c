"""The image-pull playbook, judged by the engine over situations declared inline as facts.

Every case lists the statuses it expects; hypotheses it does not list must stay `unknown`. The runtime's error
in the kubelet's Failed event (normalised to image.pull_error) picks the branch; a registry that answered with
a definite error is reachable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.engine import triggered
from playbooks.loader import PLAYBOOK_DIR, check_file
from playbooks.report import Finding, Target
from tests.unit.playbooks.verdicts import leader as _leader
from tests.unit.playbooks.verdicts import statuses as _statuses

PLAYBOOK = "image-pull"
TOP_LEVEL = ["image-not-found", "registry-auth", "registry-unreachable", "rate-limited", "disk-pressure",
             "registry-tls"]
BACKOFF = {"container.waiting.reason": "ImagePullBackOff", "image.name": "nvcr.io/nvidia/tritonserver:24.13-py3"}
REGISTRY_ANSWERED = {"registry-unreachable": "ruled-out", "disk-pressure": "ruled-out"}

# (case id, facts, statuses other than unknown, leading hypothesis)
CASES: list[tuple[str, dict[str, Any], dict[str, str], str]] = [
    (
        "tag-does-not-exist",
        {**BACKOFF, "image.pull_error": "not-found", "events.reasons": ["Pulling", "Failed", "BackOff"]},
        {**REGISTRY_ANSWERED, "image-not-found": "confirmed"},
        "image-not-found",
    ),
    (
        "invalid-reference",
        {"container.waiting.reason": "InvalidImageName"},
        {"image-not-found": "confirmed"},
        "image-not-found",
    ),
    (
        "credentials-refused",
        {**BACKOFF, "image.pull_error": "unauthorized"},
        {**REGISTRY_ANSWERED, "registry-auth": "confirmed"},
        "registry-auth",
    ),
    (
        "registry-times-out",
        {**BACKOFF, "image.pull_error": "timeout"},
        {"registry-unreachable": "confirmed", "disk-pressure": "ruled-out"},
        "registry-unreachable",
    ),
    (
        "registry-throttles",
        {**BACKOFF, "image.pull_error": "rate-limited"},
        {**REGISTRY_ANSWERED, "rate-limited": "confirmed"},
        "rate-limited",
    ),
    (
        "no-space-to-unpack",
        {**BACKOFF, "image.pull_error": "no-space", "node.conditions": ["DiskPressure"]},
        {"disk-pressure": "confirmed"},
        "disk-pressure",
    ),
    (
        "disk-pressure-without-a-pull-error-is-likely",
        {"container.waiting.reason": "ErrImagePull", "node.conditions": ["DiskPressure"]},
        {"disk-pressure": "likely"},
        "disk-pressure",
    ),
    (
        "untrusted-certificate",
        {**BACKOFF, "image.pull_error": "tls"},
        {"registry-tls": "confirmed", "disk-pressure": "ruled-out"},
        "registry-tls",
    ),
    (
        "backoff-alone-leaves-everything-unknown",
        {"container.waiting.reason": "ImagePullBackOff"},
        {},
        "image-not-found",
    ),
]


@pytest.mark.parametrize(("facts", "expected", "leader"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_statuses_and_leader(make_facts: Callable[[dict[str, Any]], FactSet], judge: Callable[..., Finding],
                             facts: dict[str, Any], expected: dict[str, str], leader: str) -> None:
    finding = judge(PLAYBOOK, make_facts(facts))
    statuses = _statuses(finding)
    assert {h.id for h in finding.hypotheses if h.parent is None} == set(TOP_LEVEL)
    assert set(expected) <= set(statuses), f"not explored: {set(expected) - set(statuses)}"
    assert statuses == {hid: expected.get(hid, "unknown") for hid in statuses}
    assert _leader(finding) == leader


@pytest.mark.parametrize(("facts", "fires"), [
    ({"container.waiting.reason": "ImagePullBackOff"}, True),
    ({"container.waiting.reason": "ErrImagePull"}, True),
    ({"image.pull_error": "not-found"}, True),
    ({"alert.symptoms": ["image-pull"]}, True),
    ({"container.waiting.reason": "CrashLoopBackOff"}, False),
    ({"container.waiting.reason": "ContainerCreating"}, False),
], ids=["backoff", "err-image-pull", "pull-error", "alert", "crash-loop", "creating"])
def test_trigger(make_facts: Callable[[dict[str, Any]], FactSet], facts: dict[str, Any], fires: bool) -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / f"{PLAYBOOK}.yaml")
    assert compiled is not None, [str(p) for p in problems]
    assert triggered(compiled, make_facts(facts).cel_context()) is fires


def test_checks_name_the_image_and_its_registry(make_facts: Callable[[dict[str, Any]], FactSet],
                                               judge: Callable[..., Finding]) -> None:
    target = Target(namespace="serving", pod="triton-5d8f7c9b4-q7wzt", node="gpu-node-3")
    finding = judge(PLAYBOOK, make_facts({**BACKOFF, "image.pull_error": "timeout"}), target)
    by_id = {h.id: h for h in finding.hypotheses}
    assert "skopeo inspect --raw docker://nvcr.io/nvidia/tritonserver:24.13-py3" in by_id["image-not-found"].next_checks
    assert any(c.endswith("https://nvcr.io/v2/") and "node/gpu-node-3" in c
               for c in by_id["registry-unreachable"].next_checks)
    for h in finding.hypotheses:
        for text in [h.claim, h.falsified_by, *h.next_checks, *h.mitigations]:
            assert "{{" not in text and "{%" not in text and "<node>" not in text


def test_docker_hub_short_names_resolve_to_the_hub(make_facts: Callable[[dict[str, Any]], FactSet],
                                                  judge: Callable[..., Finding]) -> None:
    finding = judge(PLAYBOOK, make_facts({"image.name": "python:3.11-slim", "image.pull_error": "tls"}),
                    Target(namespace="ml", pod="x", node="n1"))
    tls = next(h for h in finding.hypotheses if h.id == "registry-tls")
    assert any("-connect registry-1.docker.io:443" in c for c in tls.next_checks)


def test_lints_clean_and_every_hypothesis_cites_a_source() -> None:
    compiled, problems = check_file(PLAYBOOK_DIR / f"{PLAYBOOK}.yaml")
    assert compiled is not None and problems == []
    assert [h.id for h in compiled.spec.hypotheses] == TOP_LEVEL
    for h, _ in compiled.spec.walk():
        assert h.source and all(s.strip() for s in h.source)
