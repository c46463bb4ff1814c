"""Fix round 19 (i2): a proxy reply that is the body of another client's logged answer (signals' `unless_before`),
configurable-http-proxy 3.x's one-line proxy error, Caddy's reverse_proxy dial errors and a 504 named with its
reason phrase (proxies.yaml), a 5xx said as an outcome and DNS latency said to rise (stated.yaml), a CPU limit said
to cost latency (signals.yaml), and a tcpdump of DNS timed query to answer (tcpdump_dns.py). Real lines, each from
another public thread than the realworld case it came with (named beside it), and near misses that must read
nothing."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import tcpdump_dns
from tests.unit.parsers.paste_facts import joined_facts


def _symptoms(facts: dict[str, object]) -> set[object]:
    value = facts.get("evidence.symptoms", [])
    return set(value) if isinstance(value, list) else set()


# ---- a logged answer's body on the line after "starts on next line" (dd-trace-cpp in Envoy) ---------------------
def test_the_datadog_tracers_own_failed_poll_is_no_failed_request() -> None:
    # https://github.com/istio/istio/issues/51430 (description): Istio's sidecar log, the body on the next line
    text = ("2024-06-05T04:25:18.263562Z error envoy tracing external/envoy/source/extensions/tracers/datadog/"
            "logger.cc:23 Unexpected Remote Configuration status 503 with body (if any, starts on next line)\n"
            "upstream connect error or disconnect/reset before headers. reset reason: connection termination "
            "thread=14\n")
    facts = joined_facts(text)
    assert "http.failure_kinds" not in facts
    assert "error-rate" not in _symptoms(facts)


def test_the_same_local_reply_on_its_own_is_still_a_failed_request() -> None:
    # the same reply a client got, with nothing before it that makes it another message's body
    text = "curl http://checkout:8080/\nupstream connect error or disconnect/reset before headers. reset reason: " \
           "connection termination\n"
    facts = joined_facts(text)
    assert facts.get("http.failure_kinds") == ["connection-failure"]
    assert "error-rate" in _symptoms(facts)


# ---- configurable-http-proxy 3.x: level before label, the Error object after the URL -----------------------------
def test_chp_3x_proxy_error_line_is_a_connection_failure() -> None:
    # the layout of 3.0-3.1 (bin/configurable-http-proxy, winston 2) as jupyterhub/jupyterhub#1244 shows its lines,
    # with the one-line error 3.x appended (lib/configproxy.js handle_proxy_error); no other thread was found
    text = ("13:03:57.919 - error: [ConfigProxy] 503 GET /user/anto/api/terminals?_=1500667195820 Error: connect "
            "ECONNREFUSED 127.0.0.1:8888\n")
    facts = joined_facts(text)
    assert facts.get("http.failure_kinds") == ["connection-failure"]
    assert facts.get("http.error_statuses") == [503]


def test_chp_info_lines_and_a_404_are_no_failure() -> None:
    # https://github.com/jupyterhub/jupyterhub/issues/1869 (description): routine proxy lines
    text = ("15:35:18.566 - info: [ConfigProxy] Proxying http://IPADDRESS:8000 to (no default)\n"
            "15:35:18.778 - info: [ConfigProxy] 200 GET /api/routes \n"
            "15:40:02.101 - error: [ConfigProxy] 404 GET /user/someone/api\n")
    assert "http.failure_kinds" not in joined_facts(text)


# ---- Caddy's reverse_proxy: a dial error on the error logger ---------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/searx/searx/issues/3205 (description), the record as journald printed it (headers cut)
    'Apr 03 23:40:56 terve sh[22948]: caddy      | {"level":"error","ts":1649018456.5656512,"logger":'
    '"http.log.error.log0","msg":"dial tcp 127.0.0.1:4040: connect: connection refused","request":{"remote_addr":'
    '"172.30.0.1:31302","proto":"HTTP/2.0","method":"GET","host":"searx.xy-space.de","uri":"/"},"duration":'
    '0.025409916,"status":502,"err_id":"xxbwvxhij","err_trace":"reverseproxy.statusError (reverseproxy.go:886)"}',
    # https://github.com/Nature40/pyradiotracking/issues/20 (description), the same (headers cut)
    'Aug 20 13:57:17 mof-rts-00011 caddy[808]: {"level":"error","ts":1597924637.9056916,"logger":"http.log.error",'
    '"msg":"dial tcp [::1]:8050: connect: connection refused","request":{"remote_addr":"169.254.0.12:62798","proto":'
    '"HTTP/1.1","method":"POST","host":"169.254.0.1","uri":"/radiotracking/_dash-update-component"},"duration":'
    '0.004200834,"status":502,"err_id":"cz7f5y089","err_trace":"reverseproxy.statusError (reverseproxy.go:783)"}',
])
def test_caddy_dial_errors_are_connection_failures(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("http.failure_kinds") == ["connection-failure"]
    assert "error-rate" in _symptoms(facts)


def test_caddy_upstream_answering_slowly_is_no_dial_error() -> None:
    # a read timeout after the connection was made: Caddy answers 504, not a failed connect
    line = ('{"level":"error","ts":1700000000.1,"logger":"http.log.error","msg":"net/http: timeout awaiting response '
            'headers","request":{"method":"GET","uri":"/"},"duration":30.0,"status":504,"err_id":"abc",'
            '"err_trace":"reverseproxy.statusError (reverseproxy.go:1299)"}')
    assert joined_facts(line + "\n").get("http.failure_kinds") != ["connection-failure"]


# ---- 504 with its reason phrase ---------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # the status line `curl -i` prints for nginx's own 504 (ngx_http_status_lines spells it "Time-out"); written here
    "HTTP/1.1 504 Gateway Time-out",
    "The browser shows 504 Gateway Timeout after exactly one minute.",
])
def test_a_504_named_with_its_phrase_is_a_timeout(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert "timeout" in facts.get("http.failure_kinds", [])  # type: ignore[operator]


@pytest.mark.parametrize("line", [
    "I expected a 504 Gateway Timeout instead of the hang.",
    "Error response from registry: received unexpected HTTP status: 504 Gateway Timeout",
    "HTTP/1.1 502 Bad Gateway",
])
def test_an_expected_504_a_registry_504_or_a_502_is_no_proxy_timeout(line: str) -> None:
    assert "timeout" not in (joined_facts(line + "\n").get("http.failure_kinds") or [])  # type: ignore[operator]


# ---- a 5xx said as the outcome ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("line", "status"), [
    # https://github.com/mattrobinsonsre/terrapod/pull/222 (description)
    ("5. Drain eventually rejects those requests → user sees 502s + SSE drops", 502),
    # https://github.com/zalando/skipper/issues/652 (description)
    ("So the application had a 2s downtime which resulted in a `500` (It should probably be a `504`).", 500),
])
def test_a_5xx_said_as_an_outcome_is_a_status(line: str, status: int) -> None:
    facts = joined_facts(line + "\n")
    assert status in facts.get("http.error_statuses", [])  # type: ignore[operator]
    assert "error-rate" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    "We bumped the batch size from 256 -> 512 and the job got faster.",
    "The replicas went from ten -> 500 replicas over the day.",
    "The change to the pool does not result in 502 errors any more.",
    "The p99 of the service went from 20 -> 503 ms after the change.",
])
def test_figures_after_an_arrow_and_denied_outcomes_are_no_status(line: str) -> None:
    assert "http.error_statuses" not in joined_facts(line + "\n")


# ---- DNS latency said to rise ------------------------------------------------------------------------------------
@pytest.mark.parametrize("line", [
    # https://github.com/kubernetes/kubernetes/issues/129617 (description)
    "We noticed that when one of our CoreDNS pods is deleted, some client pods experience latency on their DNS "
    "queries.",
    "We are seeing high DNS latency on some nodes since the upgrade.",
])
def test_dns_latency_said_to_rise_is_slow_lookups(line: str) -> None:
    facts = joined_facts(line + "\n")
    assert facts.get("dns.said_slow") is True
    assert "latency" in _symptoms(facts)


@pytest.mark.parametrize("line", [
    "We monitor DNS latency with a dashboard and it is fine.",
    "There are no spikes in DNS latency since the change.",
])
def test_dns_latency_named_or_denied_is_not_slow(line: str) -> None:
    assert "dns.said_slow" not in joined_facts(line + "\n")


# ---- a CPU limit said to cost latency -----------------------------------------------------------------------------
def test_a_cpu_limit_said_to_cost_latency_is_the_quota_slowing_it() -> None:
    # https://github.com/telepresenceio/telepresence/pull/1121 (description)
    line = ("Having CPU limit on telepresence pod causes noticeable latency increasing when there is a lot of "
            "simultaneously connections being proxied by telepresense.")
    assert joined_facts(line + "\n").get("cpu.limit_slowed") is True


@pytest.mark.parametrize("line", [
    "The CPU limit does not affect latency at all in our tests.",
    "We raised the memory limit because it affects performance of the cache.",
    "The GPU's power limit causes lower performance at high temperature, not the CPU limit.",
])
def test_a_cpu_limit_denied_or_another_limit_is_not_read(line: str) -> None:
    assert "cpu.limit_slowed" not in joined_facts(line + "\n")


# ---- tcpdump of DNS: a query timed to its answer ------------------------------------------------------------------
def _lookup(text: str) -> object:
    facts = tcpdump_dns.read(Artifact(id="t", kind=ArtifactKind.TEXT, content=text)).facts
    return max((f.value for f in facts if f.name == "dns.lookup_seconds"), default=None)  # type: ignore[type-var]


def test_a_query_answered_after_its_resend_waited_the_resolver_timeout() -> None:
    # https://github.com/grpc/grpc/issues/20216 (comment by GuangTianLi, 2019-09-17): tcpdump -v, the AAAA query
    # resent after 5 s and answered then
    text = (
        "14:22:47.823940 IP (tos 0x0, ttl 64, id 45993, offset 0, flags [none], proto UDP (17), length 51)\n"
        "    192.168.50.121.61914 > 192.168.50.1.53: [udp sum ok] 13609+ AAAA? mysql. (23)\n"
        "14:22:52.832774 IP (tos 0x0, ttl 64, id 62881, offset 0, flags [none], proto UDP (17), length 51)\n"
        "    192.168.50.121.61914 > 192.168.50.1.53: [udp sum ok] 13609+ AAAA? mysql. (23)\n"
        "14:22:52.842517 IP (tos 0x0, ttl 64, id 4342, offset 0, flags [DF], proto UDP (17), length 126)\n"
        "    192.168.50.1.53 > 192.168.50.121.61914: [udp sum ok] 13609 NXDomain q: AAAA? mysql. 0/1/0 ns: . [6m] "
        "SOA a.root-servers.net. nstld.verisign-grs.com. 2019091700 1800 900 604800 86400 (98)\n")
    assert _lookup(text) == pytest.approx(5.018577)
    facts = joined_facts(text)
    assert "latency" in _symptoms(facts) or facts.get("dns.lookup_seconds") == pytest.approx(5.018577)


def test_a_query_answered_at_once_is_a_fast_lookup() -> None:
    # https://github.com/kubernetes/kubernetes/issues/56903 (comment by zhan849, 2020-04-14): one-line packets,
    # port 53 printed as "domain", EDNS flags before the type
    text = (
        "07:25:26.795923 IP node-cmp-test-kubecluster-2-0a03f89c.ec2.pin220.com.37345 > 10.3.23.54.domain: "
        "8166+ [1au] A? kubernetes.default. (47)\n"
        "07:25:26.797035 IP 10.3.23.54.domain > node-cmp-test-kubecluster-2-0a03f89c.ec2.pin220.com.37345: "
        "8166 NXDomain 0/0/1 (47)\n")
    assert _lookup(text) == pytest.approx(0.001112)
    assert "latency" not in _symptoms(joined_facts(text))


def test_unanswered_queries_and_other_traffic_are_not_timed() -> None:
    # the same comment's lines to a NodePort: UDP but no DNS, and a query the capture never saw answered
    text = (
        "07:25:14.196136 IP 10.3.253.87.36457 > node-cmp-test-kubecluster-2-0a03f89c.ec2.pin220.com.30001: UDP, "
        "length 61\n"
        "07:25:19.196210 IP 10.3.253.87.36457 > node-cmp-test-kubecluster-2-0a03f89c.ec2.pin220.com.30001: UDP, "
        "length 61\n"
        "07:25:26.795923 IP 10.3.253.87.37345 > 10.3.23.54.domain: 8166+ [1au] A? kubernetes.default. (47)\n")
    assert _lookup(text) is None
