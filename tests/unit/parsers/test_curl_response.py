"""A 5xx Envoy answered itself (no x-envoy-upstream-service-time) read from curl's printed response headers."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import curl_response
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES


def _symptoms(text: str) -> list[object]:
    facts = curl_response.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts
    return [v for f in facts if f.name == "evidence.symptoms" for v in f.value]  # type: ignore[attr-defined]


def _response(status: str, *headers: str) -> str:
    """curl -v's response block as curl prints it (lib/http.c header callback, "< " from src/tool_cb_dbg.c)."""
    return "\n".join([f"< HTTP/1.1 {status}", *(f"< {h}" for h in headers), "<", ""])


def test_a_real_503_envoy_answered_itself_is_a_service_not_reached() -> None:
    assert _symptoms(FIRST_SIGHT_PASTES["envoy-37268-curl-i-503-server-envoy"]) == ["service-unreachable"]


def test_istio_envoy_503_without_an_upstream_time_is_read_and_with_one_is_the_backends_own() -> None:
    assert _symptoms(_response("503 Service Unavailable", "content-length: 19", "server: istio-envoy")) == [
        "service-unreachable"]
    # the backend answered the 503 through Envoy: its own error, no unreachable service
    assert _symptoms(_response("503 Service Unavailable", "x-envoy-upstream-service-time: 12",
                               "server: istio-envoy")) == []


def test_a_5xx_from_another_server_or_a_2xx_from_envoy_names_nothing() -> None:
    assert _symptoms(_response("503 Service Unavailable", "server: nginx")) == []
    assert _symptoms(_response("200 OK", "server: envoy")) == []


@settings(max_examples=50, deadline=None)
@given(st.text(max_size=300))
def test_any_text_is_read_without_raising(text: str) -> None:
    assert isinstance(_symptoms("< HTTP/1.1 503 x\n" + text), list)
