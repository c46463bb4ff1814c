"""Latency said in words (round 17): name lookups said slow or to delay requests, or requests faster by a figure once
names skip the search path (stated.yaml dns-said-slow, fact dns.said_slow); a call's duration set against its usual
one (latency-figure-against-usual). Negated, asked, fast and figure-less advice sentences give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts


@pytest.mark.parametrize("sentence", [
    # https://github.com/kubernetes/kops/issues/4040 (comment by pierreozoux, 2018-01-15)
    "We are also seeing slow dns queries.",
    # https://github.com/rancher-archives/rke/issues/111 (description)
    "From within container,DNS resolution very slow ( up to 15 secs) and sometimes it even fails .",
    # Composed from the case's wordings' class: lookups through the search list said to cause delays.
    "Every external name goes through the search path, and the DNS overhead was causing delays for the probes.",
    "After adding the trailing dot we measured 80ms faster responses; 80 ms improvement by adding a trailing dot.",
])
def test_dns_said_slow_is_read(sentence: str) -> None:
    got = stated_facts(sentence)
    assert got.get("dns.said_slow") is True, got
    assert got.get("symptoms") == {"latency"}, got


@pytest.mark.parametrize("sentence", [
    # https://github.com/kubernetes/kubernetes/pull/10266 (comment by thockin, 2016-08-08): lookups said fast.
    'Can you characterize "slow"  I see low milliseconds for DNS lookups, even with ndots 5',
    # https://github.com/strimzi/strimzi-kafka-operator/pull/8530 (description): advice, no figure measured.
    "It turns out that adding a trailing dot to the host name forces the FQDN resolution on the upstream DNS server, "
    "thus reducing internal DNS server load (kube-dns pods) and application latency.",
    # https://github.com/kubernetes/kops/issues/4040 (comment by kgignatyev-inspur): healthy.
    "just tried, when used --networking=kubenet DNS resolution is instantaneous:",
    "DNS is not slow in this cluster.",  # negated
    "Is the DNS resolution slow in this cluster?",  # asked
    "The DNS lookups are fast, but the upstream is slow to answer.",  # another subject is slow
])
def test_no_slow_dns_said_gives_nothing(sentence: str) -> None:
    assert "dns.said_slow" not in stated_facts(sentence), stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    # Two lines of public repositories' write-ups (an exact-string search of the code index; it names no path):
    "Every HTTP request was taking 8-15 seconds instead of the usual 2-3.",
    "Here it is - this took 2.5 seconds instead of the usual 300ms.",
    # Composed: the class of the case's sentence with another subject and figures.
    "We just had an incident where one endpoint was taking 40s instead of usual 0.2 s",
])
def test_a_duration_against_its_usual_is_latency(sentence: str) -> None:
    assert stated_facts(sentence).get("symptoms") == {"latency"}, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    # A public repository's product write-up (same search): the usual figure is no request's duration.
    "The update takes 30 seconds instead of the usual 45-minute report compilation.",
    "The page took 0.2s instead of the usual 0.1s.",  # under the 500 ms a router gives a backend
    "It does not take 5s instead of the usual 1s.",  # negated
    "It takes 3 seconds instead of the usual.",  # no usual figure said
])
def test_no_slow_duration_against_its_usual_gives_nothing(sentence: str) -> None:
    assert "symptoms" not in stated_facts(sentence), stated_facts(sentence)
