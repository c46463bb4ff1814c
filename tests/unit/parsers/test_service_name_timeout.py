"""Go's net/http client timing out on a Service's cluster DNS name is a client timeout on the Service path
(network.yaml go-http-service-name-timeout); the same timeout against the loopback or an outside host is not."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact


def _facts(text: str) -> dict[str, object]:
    return {f.name: f.value for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts}


@pytest.mark.parametrize(("line", "target"), [
    # The old wording (go1.7-1.13: URL unquoted, "net/http: request canceled"), rendered with sample values.
    ("Get http://api.payments.svc:8080/healthz: net/http: request canceled (Client.Timeout exceeded while awaiting "
     "headers)", "api.payments.svc:8080"),
    # go1.14+, the URL quoted, no port.
    ('Post "http://ingest.logs.svc.cluster.local/v1/push": context deadline exceeded (Client.Timeout exceeded '
     'while awaiting headers)', "ingest.logs.svc.cluster.local"),
])
def test_a_go_client_timing_out_on_a_service_name_is_a_client_timeout(line: str, target: str) -> None:
    facts = _facts(line)
    assert facts["client.errors"] == ["timeout"]
    assert str(facts["client.targets"][0]).startswith(target)  # type: ignore[index]


@pytest.mark.parametrize("line", [
    # https://github.com/marieai/marie-ai/issues/63 (description): a health check on the loopback.
    'Get "http://127.0.0.1:51000/dry_run": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
    # https://github.com/prehisle/relay-pulse/issues/15 (description): a monitor probing an outside API.
    'relaypulse-monitor  | 2025/11/26 19:31:19 [Probe] ERROR 88code-cc-standard-channel: Post '
    '"https://www.88code.org/api/v1/messages": context deadline exceeded (Client.Timeout exceeded while awaiting '
    'headers)',
    # https://github.com/messagebird/sachet/issues/91 (description): a JSON-escaped URL of an outside SMS API.
    ' main.go:231: Error: {"Error":true,"Status":400,"Message":"Post \\"https://smsapi.free-mobile.fr/sendmsg\\": '
    'context deadline exceeded (Client.Timeout exceeded while awaiting headers)"}',
    # A Service name that answered slowly while the body was read: the request reached it.
    'Get "http://api.shop.svc:8080/": net/http: request canceled (Client.Timeout or context cancellation while '
    'reading body)',
])
def test_the_same_timeout_off_the_service_path_is_no_client_error(line: str) -> None:
    assert "client.errors" not in _facts(line)
