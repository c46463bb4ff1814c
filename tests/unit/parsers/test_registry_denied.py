"""A registry's DENIED is neither "not found" nor "unauthorized": `image.pull_error` denied-or-missing.

The OCI distribution spec's DENIED ("requested access to the resource is denied") and GHCR's bare "denied" to a
HEAD of a manifest are answered alike for a private repository and for one that does not exist; UNAUTHORIZED
("authentication required"), a refused token request and ECR's "not authorized to perform" say the credentials
were missing or refused. Templates are rendered with sample values (collectors/parsers/kubernetes/k8s_messages.py,
collectors/catalogs/signals.yaml registry-denied-or-unauthorized); the pastes are real, with their threads.
"""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.k8s_messages import pull_error_kind
from tests.unit.parsers.paste_facts import joined_facts

RENDERED = [
    ('Failed to pull image "ghcr.io/acme/api:v1": Error response from daemon: Head '
     '"https://ghcr.io/v2/acme/api/manifests/v1": denied', "denied-or-missing"),
    ('Failed to pull image "quay.io/acme/api:v1": rpc error: code = Unknown desc = failed to pull and unpack image '
     '"quay.io/acme/api:v1": failed to resolve reference "quay.io/acme/api:v1": pull access denied, repository does '
     'not exist or may require authorization: server message: insufficient_scope: authorization failed',
     "denied-or-missing"),
    ('Failed to pull image "registry.example.com/acme/api:v1": denied: requested access to the resource is denied',
     "denied-or-missing"),
    ('Failed to pull image "registry.example.com/acme/api:v1": unauthorized: authentication required',
     "unauthorized"),
    ('Failed to pull image "123456789012.dkr.ecr.us-east-1.amazonaws.com/api:v1": rpc error: code = Unknown desc = '
     'Error response from daemon: denied: User: arn:aws:sts::123456789012:assumed-role/node/i-0abc is not authorized '
     'to perform: ecr:BatchGetImage on resource', "unauthorized"),
    ('Failed to pull image "registry.example.com/api:v1": failed to authorize: failed to fetch oauth token: '
     'unexpected status: 403 Forbidden', "unauthorized"),
    ('Failed to pull image "nvcr.io/nvidia/k8s-device-plugin:v0.17.0": toomanyrequests: too many requests',
     "rate-limited"),
]


@pytest.mark.parametrize(("message", "kind"), RENDERED)
def test_each_registry_answer_is_read_as_its_kind(message: str, kind: str) -> None:
    assert pull_error_kind(message) == kind


REAL = [
    # https://github.com/groundnuty/k8s-wait-for/issues/70 (stale credentials for ghcr.io in ~/.docker/config.json)
    '❯ docker pull ghcr.io/groundnuty/k8s-wait-for:v2.0\n'
    'Error response from daemon: Head "https://ghcr.io/v2/groundnuty/k8s-wait-for/manifests/v2.0": denied: denied',
    # https://github.com/indeedeng/harbor-container-webhook/issues/38 (the image was never published under that tag)
    'Error response from daemon: Head "https://ghcr.io/v2/indeedeng/jfrog-container-webhook/manifests/main": denied',
]


@pytest.mark.parametrize("text", REAL)
def test_a_real_ghcr_denial_is_denied_or_missing(text: str) -> None:
    facts = joined_facts(text)
    assert facts.get("image.pull_error") == "denied-or-missing", facts
    assert facts.get("evidence.symptoms") == ["image-pull"], facts


NOT_A_PULL = [
    "Error from server (Forbidden): pods is forbidden: User \"dev\" cannot list resource \"pods\": access denied",
    "permission denied",
    "Is 'denied' from ghcr.io a missing image or a private one?",
]


@pytest.mark.parametrize("line", NOT_A_PULL)
def test_a_denial_that_is_no_pull_names_nothing(line: str) -> None:
    facts = joined_facts(line)
    assert "image.pull_error" not in facts, facts
    assert "image-pull" not in facts.get("evidence.symptoms", []), facts
