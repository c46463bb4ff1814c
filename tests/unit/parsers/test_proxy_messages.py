"""The proxy catalog (collectors/catalogs/proxies.yaml) on text people pasted: its messages run the symptom they
show, and generic errors, answers that are no error, questions and denials run none. The catalog's own templates
are rendered and read back by test_network_catalog.py (both catalogs share the loader)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from collectors.catalogs.network import entries
from collectors.catalogs.signals import signals
from tests.unit.parsers.paste_facts import joined_facts as _facts

PASTES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "proxy_pastes.yaml").read_text(encoding="utf-8"))
BY_ID = {s.spec.id: s for s in signals()}


@pytest.mark.parametrize("paste", PASTES, ids=lambda p: f"{p['url'].rsplit('/', 3)[-3]}-{p['url'].rsplit('/', 1)[-1]}")
def test_real_pastes_show_their_symptom(paste: dict[str, Any]) -> None:
    assert paste["url"].startswith("https://")
    lines = paste["text"].splitlines()
    for sid in paste["signals"]:
        assert any(BY_ID[sid].regex.search(line) for line in lines), sid
    got = _facts(paste["text"])
    for name, value in paste["facts"].items():
        assert name in got, (name, got)
        if isinstance(value, list):
            assert set(value) <= set(got[name]), (name, got[name])  # type: ignore[call-overload]
        else:
            assert got[name] == value, (name, got[name])


# Each names no symptom: a generic error any client prints, a proxy's answer that is no error, or a message
# of the catalog asked about or denied in a sentence.
NO_SYMPTOM = [
    # https://github.com/haproxy/haproxy/issues/2250 (HAProxy answered a CORS preflight itself: 204, no server)
    'Aug 11 17:06:08 XXX haproxy[3342655]: xx:xxx:xxx:xxx:xx [11/Aug/2023:17:06:08.909] https-in~ https-in/<NOSRV> '
    '0/-1/-1/-1/0 204 166 - - LR-- 4/4/0/0/0 0/0 "OPTIONS /r0/login HTTP/1.1"',
    # https://github.com/rancher/rancher/issues/2414 (tcplog: timers, then bytes read, no HTTP status)
    "Nov  3 22:22:19 localhost haproxy[44]: 10.42.0.1:12558 [03/Nov/2016:22:22:19.363] 900 900/<NOSRV> -1/-1/4 213 "
    "SC 0/0/0/0/0 0/0",
    # A 302 HAProxy answered itself whose byte count is in the 5xx range.
    "10.0.1.29,<NOSRV>,302,0,0,0,GET,/,-,medic,'-',512,-1,-,'curl/8.5.0'",
    # https://github.com/kubernetes-sigs/metrics-server/issues/375 (a client's own dial, no proxy's words)
    "Error: Get https://10.96.0.1:443/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication: "
    "dial tcp 10.96.0.1:443: i/o timeout",
    "read tcp 10.244.1.5:43210->10.96.0.1:443: read: connection reset by peer",
    "context deadline exceeded",
    "request timeout",
    "dial tcp: lookup registry-1.docker.io on 8.8.8.8:53: read udp 10.0.2.15:51234->8.8.8.8:53: i/o timeout",
    "We sometimes get a Bad Gateway from the ingress, maybe the backend restarts?",
    "HTTP/1.1 200 OK",
    '  "code": 503',
    "curl: (22) The requested URL returned error: 404",
    "There is no activator request timeout in the logs.",
    'Could it be "no endpoints available for service" again?',
    # https://github.com/envoyproxy/envoy/issues/19162 (stats are counters: zero is healthy)
    "cluster.rsapi_cluster.upstream_cx_connect_fail: 0",
    "cluster.rsapi_cluster.upstream_cx_connect_timeout: 0",
    # https://github.com/envoyproxy/envoy/issues/4421 (the aggregate class and 2xx counters name no status)
    "cluster.service1.external.upstream_rq_5xx: 20415",
    "cluster.service1.external.upstream_rq_200: 168964",
    # https://github.com/istio/istio/issues/6085 (Envoy's own xDS stream to the control plane, no request of anyone's)
    "[2018-06-07 23:03:37.170][16][warning][upstream] external/envoy/source/common/config/grpc_mux_impl.cc:235] "
    "gRPC config stream closed: 14, no healthy upstream",
    "cluster.service1.upstream_rq_503: 0",
    "cluster.service1.upstream_rq_timeout: 0",
    "Why do we get upstream connect error or disconnect/reset before headers from the gateway?",
    "We do not see backend 'web' has no server available! in the HAProxy log.",
    "We never saw no healthy upstream in the gateway logs.",
    "There is no service in fail-fast in the linkerd logs.",
    # curl's "(18) transfer closed ..." is any body cut short: a 200 download on a slow link, a rate limit, a
    # client's own timeout, a proxy or an app that died mid-answer. It cannot say a request failed behind a proxy.
    # https://github.com/fyu/lsun/issues/49 (a 2.3 GB download cut after an hour)
    "curl: (18) transfer closed with 1729112674 bytes remaining to read",
    # https://github.com/spechub/Hets/issues/1519 (a local server's 48 MB answer)
    "curl: (18) transfer closed with outstanding read data remaining",
    # https://github.com/traefik/traefik/issues/1462 (Traefik 1.2 warned this on every resync, endpoints or not)
    "W  Service endpoints not found for REDACTED/REDACTED, falling back to Service ClusterIP ",
    # A bare dial timeout, and a 404 with Envoy's no-route flag: neither is a proxy failing a request with a 5xx.
    "dial tcp 10.210.145.199:3000: i/o timeout",
    '"GET /api HTTP/1.1" 404 NR route_not_found - "-" 0 0 0 - "-" "curl/8.5.0"',
    "Do you also see 502 errors when scaling from zero?",
    "We don't see any 503 errors anymore.",
    "The nightly job logged 500 errors out of 2 million rows.",
]


@pytest.mark.parametrize("text", NO_SYMPTOM)
def test_generic_errors_questions_and_denials_name_no_symptom(text: str) -> None:
    assert "evidence.symptoms" not in _facts(text)


def test_the_catalog_names_the_symptoms_its_header_lists() -> None:
    # Load testers' percentiles name none: the figure, read as latency.p99_seconds, says whether it is slow.
    # launchers.yaml, loaded with them, names nccl-hang: an MPI job whose daemons are lost or cannot start.
    # startup_exits.yaml's Triton entries name crash-loop: a server that gives up at start-up is restarted.
    named = {e.symptom for e in entries() if e.symptom is not None} - {"nccl-hang", "crash-loop"}
    assert named == {"error-rate", "service-unreachable"}
