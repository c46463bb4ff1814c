"""A registry request failing certificate verification, as each runtime prints it (signals.yaml
registry-tls-unverified), rendered with sample values; x509 on any other URL is no image pull
(test_names_nothing.py)."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def facts_of(text: str) -> dict[str, object]:
    result = parse_artifact(Artifact(id="a", kind=ArtifactKind.TEXT, content=text, source="paste"))
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize("line", [
    # moby (`docker pull`), Go before 1.20 and after
    'Error response from daemon: Get "https://registry.example.com/v2/": x509: certificate signed by unknown authority',
    'Error response from daemon: Get "https://registry.example.com/v2/": tls: failed to verify certificate: '
    "x509: certificate signed by unknown authority",
    "Error response from daemon: Get https://registry.example.com:5000/v2/: x509: certificate has expired or is "
    "not yet valid",
    # containerd's resolver, without the kubelet's prefix
    'time="2026-11-28T10:00:00Z" level=info msg="trying next host" error="failed to do request: Head '
    '"https://registry.example.com/v2/team/app/manifests/v1.2": tls: failed to verify certificate: x509: '
    'certificate signed by unknown authority" host=registry.example.com',
    'Get "https://registry.example.com/v2/team/app/blobs/sha256:0123abcd": x509: certificate is valid for '
    "a.example.com, not registry.example.com",
])
def test_a_registry_tls_failure_is_an_image_pull_tls_error(line: str) -> None:
    facts = facts_of(line + "\n")
    assert facts["image.pull_error"] == "tls"
    assert "image-pull" in facts["evidence.symptoms"]  # type: ignore[operator]
