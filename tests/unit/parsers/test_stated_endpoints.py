"""A Service's endpoints said to be empty (stated.yaml endpoints-said-empty), and an expectation said as a
that-clause denying what follows it: real sentences, verbatim from the thread named beside each."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import said_facts


@pytest.mark.parametrize("text", [
    # https://github.com/kubernetes/kubernetes/issues/84979 (title)
    "all pod of one node: pod running but Conditions:Ready :False,so endpoints is none",
    "The service has no ready endpoints.",
])
def test_endpoints_said_empty_are_no_ready_endpoints(text: str) -> None:
    assert said_facts(text)["endpoints.ready"] == 0


@pytest.mark.parametrize("text", [
    # https://github.com/kubernetes/kubernetes/issues/75889 (description): what should not be in the endpoints.
    "Unready Pods should not appear in the Endpoints of the service",
    "There were no endpoints issues after that.",  # "endpoints" naming another noun
    "Are the endpoints empty?",  # asked
    "The endpoints are not empty.",  # denied
])
def test_endpoints_not_said_empty_are_not_read(text: str) -> None:
    assert "endpoints.ready" not in said_facts(text)


def test_a_status_the_writer_expected_in_a_that_clause_is_not_read() -> None:
    # https://github.com/traefik/traefik/issues/9242 (description): the 503 is what the writer expected instead.
    text = ('I expected in this case, that an error "503 Service Unavailable" in this case, indicating that the '
            "requested service is known, but not available currently.")
    assert "http.error_statuses" not in said_facts(text)
