"""The status-field reader (collectors/parsers/logs/status_fields.py) and its catalog (status_fields.yaml): every
key family rendered as its program prints a line is read; lines that are no failed HTTP answer give nothing."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.catalogs.status_fields import StatusFamily, catalog
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import status_fields
from tests.unit.parsers.paste_facts import joined_facts


def _read(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in status_fields.read(Artifact(id="a", kind=ArtifactKind.TEXT, content=text)).facts:
        before = out.get(f.name, [])
        out[f.name] = before + [v for v in f.value if v not in before]
    return out


@pytest.mark.parametrize("family", catalog().families, ids=lambda f: f.id)
def test_every_family_rendered_with_a_5xx_is_read(family: StatusFamily) -> None:
    line = family.render.format(**family.sample)
    got = _read(f"2026-11-28T10:00:01.123456Z {line}")  # behind a timestamp, as kubectl logs --timestamps prints
    for name, value in family.expect.items():
        assert sorted(got.get(name, [])) == sorted(value), (name, got)  # type: ignore[call-overload]


@pytest.mark.parametrize("family", catalog().families, ids=lambda f: f.id)
def test_every_family_rendered_with_a_2xx_or_4xx_names_nothing(family: StatusFamily) -> None:
    for status in ("200", "304", "404"):
        assert _read(family.render.format(**{**family.sample, "status": status})) == {}


def test_every_family_names_its_source_and_the_flags_map_onto_the_failure_vocabulary() -> None:
    kinds = {"no-upstream", "no-route", "connection-failure", "timeout", "overflow", "app-error"}
    assert all(f.source and f.versions for f in catalog().families)
    assert {m.kind for m in catalog().envoy_flags.values()} <= kinds
    assert catalog().envoy_flags["NR"].symptom == "service-unreachable"


# Lines whose status-like key is no HTTP answer, or is no failure; written from the programs' formats.
NOTHING = [
    # gRPC's status code (codes.OK = 0, codes.Unavailable = 14) in a zap line: no HTTP status.
    '{"level":"info","msg":"finished unary call","grpc.method":"Get","grpc.code":"Unavailable","grpc.time_ms":3}',
    '{"level":"info","msg":"finished call","method":"Get","code":"OK"}',
    # An exit code, and a Kubernetes Status object's code, with no request beside them.
    '{"msg":"process exited","code":137}',
    '{"kind":"Status","apiVersion":"v1","status":"Failure","message":"the server is unavailable","code":503}',
    # A job's state, a key=value line with no request.
    "time=2026-11-28T10:00:00Z level=info msg=done status=500 items=3",
    # A question about a status.
    "Why would Envoy log response_code=503 here?",
    # https://github.com/istio/istio/issues/18995 (Envoy's status 0: the request was never answered with a status)
    '{"response_code":"0","user_agent":"-","response_flags":"UO","start_time":"2019-11-15T18:52:50.514Z",'
    '"method":"-","request_id":"-","upstream_host":"-","x_forwarded_for":"-","requested_server_name":"-",'
    '"bytes_received":"0","istio_policy_status":"-","bytes_sent":"0","upstream_cluster":"-",'
    '"downstream_remote_address":"10.72.106.197:59658","authority":"-","path":"-","protocol":"-",'
    '"upstream_service_time":"-","upstream_local_address":"-","duration":"0",'
    '"downstream_local_address":"10.72.106.254:8080","upstream_transport_failure_reason":"-","route_name":"-"}',
]


@pytest.mark.parametrize("line", NOTHING)
def test_lines_with_no_failed_http_answer_give_nothing(line: str) -> None:
    assert "http.error_statuses" not in _read(line)
    assert "evidence.symptoms" not in _read(line)


def test_a_pasted_line_runs_the_symptom_through_the_registry() -> None:
    # A JSON line after a timestamp, with a curl status above it: the NR flag adds service-unreachable to the
    # error-rate the curl line gives.
    text = ('< HTTP/1.1 503 Service Unavailable\n'
            '2026-11-28T10:00:01Z {"response_code":"503","response_flags":"NR","upstream_cluster":"-","path":"/x"}\n')
    got = joined_facts(text)
    assert set(got["evidence.symptoms"]) == {"error-rate", "service-unreachable"}  # type: ignore[arg-type]
    assert got["http.failure_kinds"] == ["no-route"]


def test_fields_of_reads_json_after_a_prefix_and_logfmt_quoted_values() -> None:
    assert status_fields.fields_of('pod-1 {"a": {"b": 5}, "c": "d"}') == {"a.b": "5", "c": "d"}
    assert status_fields.fields_of('msg="a b" :status=503 x=1') == {"msg": "a b", ":status": "503", "x": "1"}


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('{}[]":=,. status_codeNR503abc\\\n')), max_size=300))
def test_garbage_never_raises(text: str) -> None:
    status_fields.read(Artifact(id="g", kind=ArtifactKind.TEXT, content=text))
