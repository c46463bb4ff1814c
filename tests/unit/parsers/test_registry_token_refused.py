"""A registry refusing a token or a manifest request, as containerd's resolver says it outside the kubelet.

BuildKit (docker build / buildx), nerdctl and ctr carry containerd's remotes/docker resolver, so a base image's
pull failing in a build prints its errors bare (collectors/catalogs/signals.yaml containerd-resolver-status; the
rendered templates are collectors/catalogs/k8s_wordings.yaml buildkit-* and containerd2-host-status-code). The
pastes are real, each with its thread in first_sight_pastes.yaml. Their near misses are rows of
test_names_nothing.py.
"""

from __future__ import annotations

import pytest

from collectors.factset import FactSet
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
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


# https://github.com/NVIDIA/nvcf/issues/40 (comment by logn-xu), verbatim: the kubelet's Failed message wrapped over
# lines the events table cannot read as a row, then its bare "Error: ErrImagePull" row. The row says no kind
# ("other"); the wrapped message's 403 is the reading, as the `specific` merge of image.pull_error keeps it.
NVCF_40 = """\
nvcr.io/nvidia/nvcf/nvcf-openbao:2.5.4-nv-1.3.0
spec.containers{openbao}: Failed to pull image "nvcr.io/nvidia/nvcf/nvcf-openbao:2.5.4-nv-1.3.0":
failed to pull and unpack image "nvcr.io/nvidia/nvcf/nvcf-openbao:2.5.4-nv-1.3.0":
failed to resolve reference "nvcr.io/nvidia/nvcf/nvcf-openbao:2.5.4-nv-1.3.0":
failed to authorize: failed to fetch anonymous token: unexpected status from GET request
to https://nvcr.io/proxy_auth?scope=repository%3Anvidia%2Fnvcf%2Fnvcf-openbao%3Apull: 403 Forbidden
  Warning  Failed     46m (x3 over 47m)      kubelet            spec.containers{openbao}: Error: ErrImagePull
"""


def _pull_error(text: str) -> object:
    """image.pull_error as the report merges it, the text split into artifacts as a paste is."""
    return FactSet([f for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts]).value(
        "image.pull_error")


def test_a_bare_errimagepull_row_does_not_hide_the_wrapped_refusal() -> None:
    assert _pull_error(NVCF_40) == "unauthorized"


def test_a_bare_errimagepull_row_alone_is_still_an_unclassified_pull() -> None:
    assert _pull_error(NVCF_40.splitlines()[-1] + "\n") == "other"
