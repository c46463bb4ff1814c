"""A registry refusing a token or a manifest request, as containerd's resolver says it outside the kubelet.

BuildKit (docker build / buildx), nerdctl and ctr carry containerd's remotes/docker resolver, so a base image's
pull failing in a build prints its errors bare (collectors/catalogs/signals.yaml containerd-resolver-status; the
rendered templates are collectors/catalogs/k8s_wordings.yaml buildkit-* and containerd2-host-status-code). The
pastes are real, each with its thread in first_sight_pastes.yaml.
"""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import joined_facts

REAL = [
    "buildkit-4456-rootless-oauth-token-401",
    "open5gs-227-oauth-token-get-request-401",
    "reuse-action-50-source-metadata-oauth-401",
    "tomcat-321-anonymous-token-status-code-only",
]


@pytest.mark.parametrize("paste", REAL)
def test_a_refused_token_in_a_build_is_an_unauthorized_pull(paste: str) -> None:
    facts = joined_facts(PASTES[paste])
    assert facts.get("image.pull_error") == "unauthorized", facts
    assert facts.get("evidence.symptoms") == ["image-pull"], facts
