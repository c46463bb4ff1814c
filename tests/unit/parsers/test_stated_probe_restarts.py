"""A probe said to restart or kill the container is the liveness kill, said in words (stated.yaml
probe-restarts-container); negated, asked and readiness-only sentences say nothing of it."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def _facts(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize("text", [
    # https://github.com/vllm-project/aibrix/issues/772 (description, first line)
    "Probes for the sample found in [/samples/quickstart/model.yaml](https://github.com/vllm-project/aibrix/blob/"
    "main/samples/quickstart/model.yaml) restart the pod before the model can fully download.",
    "The container gets killed by the liveness probe while vLLM loads its weights.",
])
def test_a_probe_said_to_restart_the_container_is_the_liveness_kill(text: str) -> None:
    facts = _facts(text)
    assert facts.get("container.liveness_killed") is True
    assert "crash-loop" in facts.get("evidence.symptoms", [])  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    "The liveness probe does not restart the pod, it is the OOM killer.",
    "The probes never restart the container.",
    "Why does the probe restart the pod before the model loads?",
    "The readiness probe failed but the pod was not restarted.",
])
def test_a_probe_not_said_to_restart_it_says_nothing(text: str) -> None:
    assert "container.liveness_killed" not in _facts(text)
