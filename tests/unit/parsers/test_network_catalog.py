"""The network catalog (collectors/catalogs/network.yaml): every CNI and network-client message, rendered from its
upstream template with sample values, is read into the facts it declares; lines real users pasted
(network_pastes.yaml, each with its thread) are read by the entries named; the event readers classify a sandbox
failure by the same entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from collectors.catalogs.network import NetworkEntry, entries, sandbox_kinds
from collectors.catalogs.signals import signals
from collectors.parsers.kubernetes.messages.k8s_messages import sandbox_errors
from tests.unit.parsers.paste_facts import joined_facts as _facts

# network_pastes.yaml for the network and proxy entries, launcher_pastes.yaml for the MPI launchers',
# framework_pastes.yaml for the training frameworks' (frameworks.yaml).
PASTES: list[dict[str, Any]] = [paste for name in ("network_pastes.yaml", "launcher_pastes.yaml",
                                                   "framework_pastes.yaml")
                                for paste in yaml.safe_load((Path(__file__).parent / name).read_text(encoding="utf-8"))]
BY_ID = {s.spec.id: s for s in signals()}


def _holds(got: dict[str, object], want: dict[str, Any]) -> None:
    for name, value in want.items():
        assert name in got, (name, got)
        if isinstance(value, list):
            assert set(value) <= set(got[name]), (name, got[name])  # type: ignore[arg-type]
        else:
            assert got[name] == value, (name, got[name])


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.id)
def test_every_template_rendered_with_sample_values_is_read(entry: NetworkEntry) -> None:
    line = entry.rendered()
    assert BY_ID[entry.id].regex.search(line), line
    _holds(_facts(line), entry.expect)


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.id)
def test_every_entry_names_its_source(entry: NetworkEntry) -> None:
    source = BY_ID[entry.id].spec.source
    assert entry.project in source and entry.file in source and entry.versions in source


@pytest.mark.parametrize("paste", PASTES, ids=lambda p: f"{p['url'].rsplit('/', 3)[-3]}-{p['url'].rsplit('/', 1)[-1]}")
def test_real_pastes_are_read_by_the_entries_named(paste: dict[str, Any]) -> None:
    assert paste["url"].startswith("https://")
    lines = paste["text"].splitlines()
    for sid in paste["signals"]:
        spec = BY_ID[sid]
        assert any(spec.regex.search(line) for line in lines), sid
    _holds(_facts(paste["text"]), paste["facts"])


def test_any_cni_error_is_not_ip_exhaustion() -> None:
    # Calico's rejected token and a delegate plugin's failure are CNI errors, not an empty address pool.
    calico = next(p["text"] for p in PASTES if "calico/issues/9215" in p["url"])
    assert sandbox_errors(calico) == ["cni-error"]
    assert "ip-exhausted" not in _facts(calico)["sandbox.errors"]  # type: ignore[operator]


def test_sandbox_failures_are_classified_by_the_catalog() -> None:
    calico_ipam = ('Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for '
                   'sandbox "abc": plugin type="calico" failed (add): failed to request IPv4 addresses: Assigned 0 '
                   'out of 1 requested IPv4 addresses; No IPs available in pools: [default-ipv4-ippool]')
    assert sandbox_errors(calico_ipam) == ["ip-exhausted"]
    assert sandbox_kinds("plugin type=\"flannel\" failed (add): loadFlannelSubnetEnv failed: open "
                         "/run/flannel/subnet.env: no such file or directory") == ["cni-not-ready"]
    assert sandbox_kinds("Back-off pulling image \"nginx\"") == []


def test_a_curl_refusal_is_not_an_nccl_socket_error() -> None:
    got = _facts("curl: (7) Failed to connect to 10.2.0.1 port 443: Connection refused")
    assert got["client.errors"] == ["refused"]
    assert "nccl.errors" not in got


@given(st.text(max_size=300))
def test_sandbox_kinds_on_any_text(text: str) -> None:
    assert set(sandbox_kinds(text)) <= {"ip-exhausted", "cni-not-ready", "cni-error"}


def test_a_service_ip_range_is_not_pod_ip_exhaustion() -> None:
    # Rendered from kube-apiserver's ClusterIP allocator (pkg/registry/core/service/ipallocator: ErrFull "range
    # is full", wrapped as "failed to allocate a serviceIP: %v"): a Service, not a pod sandbox.
    got = _facts('The Service "web" is invalid: spec.clusterIPs: Internal error occurred: failed to allocate a '
                 'serviceIP: range is full')
    assert "sandbox.errors" not in got


# A lookup that went well, or an NXDOMAIN busybox 1.28+ prints for a short name it did not expand with the search
# list (kubernetes/kubernetes#66924), says nothing failed in the cluster.
_BUSYBOX_SEARCH_QUIRK = (  # https://github.com/jonashackt/kubernetes-the-ansible-way/issues/7
    "kubectl -n default exec -ti busybox-68654f944b-99fj4 nslookup kubernetes\n"
    "Server:\t10.32.0.10\n"
    "Address:\t10.32.0.10:53\n"
    "\n"
    "** server can't find kubernetes: NXDOMAIN\n"
    "\n"
    "*** Can't find kubernetes: No answer\n")
_SUCCESSFUL_LOOKUP = (  # https://github.com/kubernetes/kubernetes/issues/66924
    "$ kubectl -n default exec -ti busybox -- nslookup kubernetes.default\n"
    "Server:    10.96.0.10\n"
    "Address 1: 10.96.0.10 kube-dns.kube-system.svc.cluster.local\n"
    "\n"
    "Name:      kubernetes.default\n"
    "Address 1: 10.96.0.1 kubernetes.default.svc.cluster.local\n")


@pytest.mark.parametrize("text", [_BUSYBOX_SEARCH_QUIRK, _SUCCESSFUL_LOOKUP,
                                  "Why does nslookup time out when I query the cluster DNS?",
                                  "** server can't find exmaple.com: NXDOMAIN",
                                  # a public name CoreDNS's upstream did not answer (rendered as plugin/errors logs it)
                                  "[ERROR] plugin/errors: 2 www.example.com. A: read udp 10.244.1.7:4780->8.8.8.8:53: "
                                  "i/o timeout",
                                  # https://github.com/kubernetes/kubernetes/issues/91518: pods' bare hostnames
                                  "[ERROR] plugin/errors: 2 mini-program-server-9c4b4f768-wcjz5. A: read udp "
                                  "172.30.57.16:42594->119.29.29.29:53: i/o timeout"])
def test_a_good_lookup_a_question_or_a_public_nxdomain_names_no_symptom(text: str) -> None:
    got = _facts(text)
    assert "service-unreachable" not in (got.get("evidence.symptoms") or []), got
    assert "dns.errors" not in got, got


def test_an_old_busybox_failure_for_a_public_name_is_a_dns_error_without_a_symptom() -> None:
    got = _facts("nslookup: can't resolve 'github.com'")
    assert got.get("dns.errors") is True
    assert "service-unreachable" not in (got.get("evidence.symptoms") or [])
    assert "dns.errors" not in _facts("nslookup: can't resolve '(null)': Name does not resolve")


def test_busybox_search_list_misses_beside_an_answer_are_not_read() -> None:
    # https://github.com/canonical/microk8s/issues/2669 (a comment): the name resolved; busybox printed NXDOMAIN for
    # the search-list variants it also tried.
    text = ("/data # nslookup minio-service\n"
            "Server:\t\t10.152.183.10\n"
            "Address:\t10.152.183.10:53\n"
            "\n"
            "Name:\tminio-service.default.svc.cluster.local\n"
            "Address: 10.152.183.151\n"
            "\n"
            "** server can't find minio-service.svc.cluster.local: NXDOMAIN\n"
            "\n"
            "** server can't find minio-service.svc.cluster.local: NXDOMAIN\n"
            "\n"
            "*** Can't find minio-service.default.svc.cluster.local: No answer\n"
            "\n"
            "** server can't find minio-service.cluster.local: NXDOMAIN\n")
    got = _facts(text)
    assert "dns.errors" not in got, got
    assert "service-unreachable" not in (got.get("evidence.symptoms") or [])


# A dependency client refused on the loopback is some local tool or a compose file's localhost, not a Service: no
# client error, no target (real lines, each with its thread).
LOOPBACK_REFUSALS = [
    # https://github.com/worldveil/dejavu/issues/306
    'psycopg2.OperationalError: connection to server at "localhost" (127.0.0.1), port 5432 failed: Connection refused',
    # https://github.com/konveyor/kai/issues/395
    'kai_1               | psycopg2.OperationalError: connection to server at "127.0.0.1", port 5432 failed: '
    "Connection refused",
    # https://github.com/tminglei/slick-pg/issues/632
    "org.postgresql.util.PSQLException: Connection to localhost:5432 refused. Check that the hostname and port are "
    "correct and that the postmaster is accepting TCP/IP connections.",
    # https://github.com/redis/ioredis/issues/1036
    "[ioredis] Unhandled error event: Error: connect ECONNREFUSED 127.0.0.1:6379",
    # https://github.com/kubernetes-client/python/issues/385
    "urllib3.exceptions.MaxRetryError: HTTPConnectionPool(host='localhost', port=8080): Max retries exceeded with "
    "url: /api/v1/pods?watch=False (Caused by NewConnectionError('<urllib3.connection.HTTPConnection object at "
    "0x7faa0ec9df90>: Failed to establish a new connection: [Errno 111] Connection refused',))",
]


@pytest.mark.parametrize("line", LOOPBACK_REFUSALS)
def test_a_dependency_refused_on_the_loopback_is_no_client_error(line: str) -> None:
    facts = _facts(line)
    assert "client.targets" not in facts and "client.errors" not in facts, facts


def test_a_kubelet_dial_from_the_api_server_is_not_a_service_no_route() -> None:
    # https://github.com/kubernetes/kubernetes/issues/62511: kubectl exec/logs through the API server to a kubelet.
    line = ("Error from server: error dialing backend: dial tcp 192.168.1.14:10250: getsockopt: no route to host")
    assert "client.no_route_targets" not in _facts(line)


@pytest.mark.parametrize("line", [
    '"error": "context deadline exceeded"',  # a bare deadline names no client and no target
    '"error": "error reading body: context deadline exceeded"',  # the prober's other error: the target answered
])
def test_a_deadline_outside_a_probe_roundtrip_is_no_client_timeout(line: str) -> None:
    assert "client.errors" not in _facts(line)


def test_a_rank_killed_or_a_bare_ssh_resolve_error_shows_no_hang() -> None:
    # mpirun's "exited on signal 9" is the rank's own death (often an OOM kill), and ssh's resolver error is any
    # client's: neither says a distributed job is stuck, so neither runs the hang playbook by itself.
    killed = next(p["text"] for p in PASTES if "horovod/issues/469" in p["url"])
    assert "evidence.symptoms" not in _facts(killed)
    ssh = "ssh: Could not resolve hostname ***-job: Name or service not known."  # volcano-sh/volcano#1972
    assert "nccl-hang" not in (_facts(ssh).get("evidence.symptoms") or [])  # type: ignore[operator]
    assert "dist.launcher_errors" not in _facts(ssh)
# `kubectl get endpointslices` rows that list addresses (ready or not, the cell does not say) give nothing; real
# rows, verbatim.
@pytest.mark.parametrize("text", [
    # https://github.com/kubeguide/K8sDefinitiveGuide-V6-A-corrigendum/issues/32
    "# kubectl get endpointslices\nNAME            ADDRESSTYPE   PORTS   ENDPOINTS               AGE\n"
    "webapp-pvsxk    IPv4          80      10.1.95.22,10.1.95.23   23m\n",
    # https://github.com/kubernetes/kubernetes/issues/95149
    "% kubectl get endpointslices\nNAME         ADDRESSTYPE   PORTS   ENDPOINTS       AGE\n"
    "kubernetes   IPv4          6443    192.168.51.11   11d\n",
])
def test_endpointslice_rows_with_addresses_say_nothing_of_readiness(text: str) -> None:
    got = _facts(text)
    assert "endpoints.ready" not in got and "endpoints.not_ready" not in got


def test_a_registry_s_5xx_during_a_pull_is_no_service_error() -> None:
    # dockerd relaying the registry's answer to a pull (signals.yaml reads it for image-pull).
    got = _facts("Error response from daemon: received unexpected HTTP status: 502 Bad Gateway")
    assert "error-rate" not in (got.get("evidence.symptoms") or [])
