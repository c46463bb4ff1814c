"""A log the triage fetched is read by the same catalogued line signals as the same log pasted; the readers of prose
stay for what people wrote. A probe's refused connection is the probe's, never the application's dependency."""

from __future__ import annotations

import pytest

from collectors.models import STATED_PREFIX, Artifact, ArtifactKind, Fact
from collectors.parsers.registry import parse_artifact

# https://github.com/kubernetes/kubernetes/issues/62594 (a kubelet log snippet from a comment of 2018-07-18, v1.7.5)
KUBELET_PROBES = (
    'Jul 17 20:31:39 192-168-0-1-B28 kubelet: I0717 20:31:39.569363   23774 prober.go:106] Readiness probe for '
    '"zp-crm-rule-1362938709-4900s_default(92d60c48-89b2-11e8-8d0c-7e635641b742):zp-crm-rule" failed (failure): '
    'Get http://11.11.75.4:8080/health: dial tcp 11.11.75.4:8080: getsockopt: connection refused\n'
    'Jul 17 20:31:49 192-168-0-1-B28 kubelet: I0717 20:31:49.569312   23774 prober.go:106] Readiness probe for '
    '"zp-crm-rule-1362938709-4900s_default(92d60c48-89b2-11e8-8d0c-7e635641b742):zp-crm-rule" failed (failure): '
    'Get http://11.11.75.4:8080/health: dial tcp 11.11.75.4:8080: getsockopt: connection refused\n'
)
# The structured form (1.20 and later), as the kubelet prints it: drills/incidents/crashloop-liveness-model-load
# (composed) holds the same line; this one is rendered from prober.go's InfoS call with sample values.
STRUCTURED_PROBE = (
    'I1116 09:16:50.118402    2143 prober.go:107] "Probe failed" probeType="Liveness" pod="serving/triton-0" '
    'podUID="0e6b2d9a" containerName="triton" probeResult="failure" output="Get \\"http://10.42.3.17:8000/v2/health/'
    'live\\": dial tcp 10.42.3.17:8000: connect: connection refused"\n'
)


def read(kind: ArtifactKind, text: str, source: str) -> list[Fact]:
    return parse_artifact(Artifact(id="a", kind=kind, source=source, content=text)).facts


def app_errors(facts: list[Fact]) -> set[str]:
    return {str(v) for f in facts if f.name == "app.errors" and isinstance(f.value, list) for v in f.value}


@pytest.mark.parametrize("source", ["paste", "kubernetes", "agent"])
@pytest.mark.parametrize("kind", [ArtifactKind.KUBELET_LOG, ArtifactKind.CONTAINER_LOG])
@pytest.mark.parametrize("text", [KUBELET_PROBES, STRUCTURED_PROBE])
def test_a_failed_probe_is_no_dependency_refusing(kind: ArtifactKind, text: str, source: str) -> None:
    assert "connection-refused" not in app_errors(read(kind, text, source))


def test_a_fetched_kubelet_log_gets_the_line_signals_a_pasted_one_gets() -> None:
    def signalled(source: str) -> set[tuple[str, str, int]]:
        return {(f.name, repr(f.value), f.citation.start) for f in read(ArtifactKind.KUBELET_LOG, STRUCTURED_PROBE,
                                                                          source)
                if not f.parser.startswith(STATED_PREFIX)}

    pasted, fetched = signalled("paste"), signalled("agent")
    assert ("probe.failures", "['liveness']", 1) in fetched
    assert fetched == pasted


def test_prose_in_a_fetched_log_is_not_read_as_someone_saying_it() -> None:
    # An application printing a sentence about its GPU is not an on-call saying the GPU is idle.
    line = "INFO the GPU utilization is low while the dataloader warms up\n"
    assert not [f for f in read(ArtifactKind.CONTAINER_LOG, line, "kubernetes") if f.parser.startswith(STATED_PREFIX)]
