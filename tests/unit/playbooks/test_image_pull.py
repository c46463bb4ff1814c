"""The image-pull playbook beyond its case table (playbooks/cases/image-pull.yaml).

The runtime's error
in the kubelet's Failed event (normalised to image.pull_error) picks the branch; a registry that answered with
a definite error is reachable.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from collectors.factset import FactSet
from playbooks.report import Finding, Target
from tests.unit.playbooks.table import fires, linted_with_sources

PLAYBOOK = "image-pull"
TOP_LEVEL = ["image-not-found", "registry-auth", "registry-unreachable", "rate-limited", "disk-pressure",
             "registry-tls"]
BACKOFF = {"container.waiting.reason": "ImagePullBackOff", "image.name": "nvcr.io/nvidia/tritonserver:24.13-py3"}


@pytest.mark.parametrize(("facts", "expected"), [
    ({"container.waiting.reason": "ImagePullBackOff"}, True),
    ({"container.waiting.reason": "ErrImagePull"}, True),
    ({"image.pull_error": "not-found"}, True),
    ({"alert.symptoms": ["image-pull"]}, True),
    ({"container.waiting.reason": "CrashLoopBackOff"}, False),
    ({"container.waiting.reason": "ContainerCreating"}, False),
], ids=["backoff", "err-image-pull", "pull-error", "alert", "crash-loop", "creating"])
def test_trigger(facts: dict[str, Any], expected: bool) -> None:
    assert fires(PLAYBOOK, facts) is expected


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
    compiled = linted_with_sources(PLAYBOOK)
    assert [h.id for h in compiled.spec.hypotheses] == TOP_LEVEL
