"""A registry's DENIED is neither "not found" nor "unauthorized": `image.pull_error` denied-or-missing.

The OCI distribution spec's DENIED ("requested access to the resource is denied") and GHCR's bare "denied" to a
HEAD of a manifest are answered alike for a private repository and for one that does not exist; UNAUTHORIZED
("authentication required"), a refused token request and ECR's "not authorized to perform" say the credentials
were missing or refused. Templates are rendered with sample values
(collectors/parsers/kubernetes/messages/k8s_messages.py, collectors/catalogs/signals.yaml
registry-denied-or-unauthorized); the pastes are real, with their threads.
"""

from __future__ import annotations

import pytest

from collectors.parsers.kubernetes.messages.k8s_messages import pull_error_kind
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
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


# Real pastes (first_sight_pastes.yaml, each with its thread): stale ghcr.io credentials, and a tag never published.
REAL = ["k8s-wait-for-70-ghcr-head-denied-denied", "harbor-container-webhook-38-ghcr-head-denied"]


@pytest.mark.parametrize("paste", REAL)
def test_a_real_ghcr_denial_is_denied_or_missing(paste: str) -> None:
    facts = joined_facts(PASTES[paste])
    assert facts.get("image.pull_error") == "denied-or-missing", facts
    assert facts.get("evidence.symptoms") == ["image-pull"], facts


@pytest.mark.parametrize("reason", ["ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull"])
def test_the_kubelet_failed_event_says_the_waiting_reason(reason: str) -> None:
    # kuberuntime_container.go's Failed event, "Error: <the pull error>", rendered as kubectl's events table shows it.
    facts = joined_facts(f"  Warning  Failed     3s (x2 over 15s)  kubelet            Error: {reason}")
    assert facts.get("container.waiting.reason") == reason, facts
