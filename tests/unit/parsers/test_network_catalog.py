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
from collectors.parsers.kubernetes.k8s_messages import sandbox_errors
from tests.unit.parsers.paste_facts import joined_facts as _facts

PASTES: list[dict[str, Any]] = yaml.safe_load(
    (Path(__file__).parent / "network_pastes.yaml").read_text(encoding="utf-8"))
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


def test_a_reset_without_a_client_wording_is_no_client_error() -> None:
    # An application's own "Connection reset by peer" is not a person probing a service.
    assert "client.errors" not in _facts("java.net.SocketException: Connection reset by peer")


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
