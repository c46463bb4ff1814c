"""containerd's registry request answered with an unexpected status (round 20, containerd-registry-unexpected-status):
the resolver's HEAD of a /v2/ manifest, bare or after the transfer service's "failed to resolve image: ", shows an
image pull; the same wording for a URL outside the distribution API does not.

The search tools were out of budget this round: the lines are written from containerd's format strings
(core/remotes/errors/errors.go, core/transfer/local/pull.go), with other hosts and images than the round's case."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def _facts(text: str) -> dict[str, object]:
    return {f.name: f.value for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts}


@pytest.mark.parametrize("line", [
    "failed to resolve image: unexpected status from HEAD request to "
    "https://registry.example.com/v2/team/api/manifests/v1.4.2: 403 Forbidden",
    "ctr: unexpected status from GET request to https://quay.io/v2/org/tool/blobs/sha256:0a1b2c: 401 Unauthorized",
])
def test_an_unexpected_registry_status_shows_an_image_pull(line: str) -> None:
    assert "image-pull" in (_facts(line).get("evidence.symptoms") or []), _facts(line)


@pytest.mark.parametrize("line", [
    # not the distribution API: a chart repository's index, an API server call
    "Error: unexpected status from HEAD request to https://charts.example.com/index.yaml: 404 Not Found",
    "unexpected status from GET request to https://10.0.0.1:6443/api/v1/namespaces: 403 Forbidden",
])
def test_the_same_wording_for_another_url_is_no_image_pull(line: str) -> None:
    assert "image-pull" not in (_facts(line).get("evidence.symptoms") or []), _facts(line)
