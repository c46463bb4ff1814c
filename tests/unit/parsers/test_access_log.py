"""Access logs: every catalogued format rendered from its upstream format string is read; real pastes too."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from collectors.catalogs.access_log_formats import formats
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import access_log
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "access_log"
CATALOG = [f.spec for f in formats()]


def render(syntax: str, fmt: str, sample: dict[str, str]) -> str:
    """The line the program prints for `fmt` with these values, per the format's own syntax."""
    fmt = " ".join(fmt.split())
    if syntax == "nginx":  # $variable; the old ingress templates' %v is the server name
        return re.sub(r"\$(\w+)|%v", lambda m: sample[m.group(1) or "v"], fmt)
    if syntax in ("envoy", "json"):  # %OPERATOR% and %OPERATOR(ARG)%; JSON formats name their fields so too
        return re.sub(r"%([A-Za-z_]+(?:\([^)]*\))?)%", lambda m: sample[m.group(1)], fmt)
    if syntax == "python":  # logging's %(name)s
        return re.sub(r"%\((\w+)\)s", lambda m: sample[m.group(1)], fmt)
    if syntax == "haproxy":  # %x, and %{+Q}r for the quoted request line
        return re.sub(r"%\{\+Q\}r|%(\w+)",
                      lambda m: f'"{sample["r"]}"' if m.group(1) is None else sample[m.group(1)], fmt)
    return " ".join(f'"{sample[t.strip(chr(34))]}"' if t.startswith('"') else sample[t] for t in fmt.split())


def facts(text: str) -> dict[str, Any]:
    result = access_log.parse(Artifact(id="a", kind=ArtifactKind.ACCESS_LOG, content=text))
    assert not result.problems
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize("spec", CATALOG, ids=[s.id for s in CATALOG])
def test_every_format_rendered_from_upstream_is_read(spec: Any) -> None:
    line = render(spec.syntax, spec.format, spec.sample)
    request = access_log.read_line(line, 1)
    assert request is not None, line
    expect = spec.expect
    assert (request.status, request.kind) == (expect["status"], expect["kind"])
    assert request.backend == expect["backend"]
    if expect["upstream"]:
        assert request.upstream == expect["upstream"]
    # Pasted behind a kubectl timestamp prefix, the line is still one request of this format.
    prefixed = f"2026-11-28T10:00:01.123456789Z {line}"
    assert access_log.read_line(prefixed, 1) is not None or spec.id.startswith(("nginx-combined", "aws-alb")) \
        or spec.syntax == "json"


def test_a_pretty_printed_json_entry_is_read_whole() -> None:
    import json

    spec = next(s for s in CATALOG if s.id == "gcp-external-https-lb")
    entry = json.dumps(json.loads(render(spec.syntax, spec.format, spec.sample)), indent=2)
    assert access_log.sniff(entry) >= 90
    got = facts(entry)
    assert (got["http.requests"], got["http.failure_kinds"]) == (1, ["connection-failure"])
    assert got["http.failing_upstreams"] == ["ml-serving-backend"]


def test_a_json_entry_is_read_by_the_format_whose_keys_it_shows_most_of() -> None:
    # Traefik 1.x and 2.x share DownstreamStatus; the entry's other keys say which release wrote it.
    v1 = next(s for s in CATALOG if s.id == "traefik-json-v1")
    request = access_log.read_line(render(v1.syntax, v1.format, v1.sample), 1)
    assert request is not None
    assert (request.upstream, request.backend) == ("backend-web", "172.17.0.10:3000")


def test_a_prefixed_key_counts_only_when_one_key_has_that_ending() -> None:
    one = access_log.read_line('{"gw_response_code": 503, "gw_response_flags": "UH", "x": "a"}', 1)
    assert one is not None and (one.status, one.kind) == (503, "no-upstream")
    two = '{"a_response_code": 503, "b_response_code": 200}'
    assert access_log.read_line(two, 1) is None


def test_a_cut_entry_is_closed_only_after_a_whole_member() -> None:
    assert access_log.sniff('{\n  "response_code": "502",\n  "upstream_host": "10.0.0.1:80",\n  "path": "/x') == 90
    assert access_log.sniff('{\n  "response_code": "502",\n  "nested": {\n    "a": 1,\n    "b') == 0


def test_a_block_of_rendered_lines_gives_shares_per_upstream_and_the_failing_backend() -> None:
    spec = next(s for s in CATALOG if s.id == "ingress-nginx-upstreaminfo")
    rows = []
    for i in range(20):  # cart: backend .17 fails half its requests, .18 never; search: all fine
        bad = i % 4 == 0
        rows.append(render(spec.syntax, spec.format, spec.sample | {
            "status": "502" if bad else "200", "proxy_upstream_name": "shop-cart-80",
            "upstream_addr": "10.244.1.17:8080" if i % 2 == 0 else "10.244.1.18:8080",
            "upstream_status": "502" if bad else "200", "upstream_response_time": "0.002"}))
        rows.append(render(spec.syntax, spec.format, spec.sample | {
            "status": "200", "proxy_upstream_name": "shop-search-80", "upstream_addr": "10.244.2.3:8080",
            "upstream_status": "200", "upstream_response_time": "0.010"}))
    got = facts("\n".join(rows))
    assert got["http.requests"] == 40
    assert got["http.error_ratio"] == 0.125
    assert got["http.error_statuses"] == [502]
    assert got["http.failure_kinds"] == ["connection-failure"]
    assert got["http.failing_upstreams"] == ["shop-cart-80"]
    assert got["http.failing_backend"] == "10.244.1.17:8080"


def test_nginx_retries_are_judged_by_the_last_attempt() -> None:
    spec = next(s for s in CATALOG if s.id == "ingress-nginx-upstreaminfo")
    line = render(spec.syntax, spec.format, spec.sample | {
        "status": "500", "upstream_addr": "10.244.1.17:8080, 10.244.1.18:8080", "upstream_status": "502, 500",
        "upstream_response_length": "0, 21", "upstream_response_time": "0.001, 0.020"})
    request = access_log.read_line(line, 1)
    assert request is not None and request.kind == "app-error"


# Verbatim pastes (whole lines) from public threads, with what each says.
REAL = [
    # https://github.com/istio/istio/issues/45802 (description): one sidecar line without its timestamp.
    ("istio-45802-503-uc.txt", {"http.requests": 1, "http.error_ratio": 1.0, "http.error_statuses": [503],
                                "http.failure_kinds": ["connection-failure"],
                                "http.failing_upstreams": ["outbound|80||health-api.production.svc.cluster.local"]}),
    # https://github.com/kubernetes/ingress-nginx/issues/4469 (comment of 2020-07-14): the 200s before the 503s.
    ("ingress-nginx-4469-all-200.txt", {"http.requests": 6, "http.error_ratio": 0.0}),
    # https://github.com/jcmoraisjr/haproxy-ingress/issues/75 (comment of 2017-11-28): syslog lines, HAProxy 1.x.
    ("haproxy-ingress-75-syslog-200.txt", {"http.requests": 6, "http.error_ratio": 0.0}),
    # https://github.com/haproxy/haproxy/issues/2368 (turn 32): 502 SH--, the server aborted before its headers.
    ("haproxy-2368-502-sh.txt", {"http.requests": 4, "http.error_ratio": 1.0, "http.error_statuses": [502],
                                 "http.failure_kinds": ["connection-failure"]}),
    # https://github.com/ozantunca/elb-log-analyzer/issues/14 (comment of 2017-06-27): a Classic ELB line behind
    # its file name; the backend itself answered 503.
    ("elb-log-analyzer-14-classic-503.txt", {"http.requests": 1, "http.error_statuses": [503],
                                             "http.failure_kinds": ["app-error"]}),
    # https://github.com/haproxy/haproxy/issues/2250 (description): <NOSRV> on replies HAProxy made itself (LR--),
    # in bold: not failures.
    ("haproxy-2250-nosrv-local-replies.txt", {"http.requests": 3, "http.error_ratio": 0.0}),
    # https://github.com/istio/istio/issues/17139 (description): Istio's JSON encoding, keys in any order; TCP
    # connections (status 0), one failed to connect (UF,URX), none an HTTP 5xx.
    ("istio-17139-json-tcp.txt", {"http.requests": 2, "http.error_ratio": 0.0}),
    # https://github.com/traefik/traefik/issues/4452 (description): one pretty-printed Traefik 1.7 JSON entry, 502
    # from the backend address a rolling update was taking away.
    ("traefik-4452-json-502.txt", {"http.requests": 1, "http.error_statuses": [502],
                                   "http.failure_kinds": ["connection-failure"]}),
    # https://github.com/istio/istio/issues/34236 (description): a custom JSON format whose keys carry a prefix
    # ("iproxy_response_code"), 503 URX during a rolling upgrade. Its cluster key is its own ("iproxy_cluster"),
    # so the request is grouped by its path.
    ("istio-34236-prefixed-json-503-urx.txt", {
        "http.requests": 1, "http.error_statuses": [503], "http.failure_kinds": ["connection-failure"]}),
    # https://github.com/gpustack/gpustack/issues/4419 (comment of 2026-02-27): a pretty-printed Higress entry cut
    # before its end, 503 UC.
    ("higress-gpustack-4419-json-cut-503-uc.txt", {
        "http.requests": 1, "http.error_statuses": [503], "http.failure_kinds": ["connection-failure"],
        "http.failing_upstreams": ["outbound|80||model-2-17.static"]}),
    # https://github.com/Alishahryar1/free-claude-code/issues/848 (description): uvicorn's own request lines, a
    # FastAPI app answering 500 (its own error: nobody stood between it and the client).
    ("uvicorn-free-claude-code-848-500s.txt", {
        "http.requests": 5, "http.error_ratio": 1.0, "http.error_statuses": [500],
        "http.failure_kinds": ["app-error"]}),
    # https://github.com/ai-dynamo/dynamo/issues/4087 (description): vLLM's API server (uvicorn) behind its
    # process prefix, every request 200, then its stats line: read in the application's log, no error.
    # https://github.com/kserve/kserve/issues/3478 (comment of 2024-02-27): KServe's timing-asgi lines for one
    # predict request (wall, then cpu) before uvicorn's traceback: one request, answered 500 by the model server.
    ("kserve-3478-timing-500.txt", {"http.error_statuses": [500], "http.failure_kinds": ["app-error"],
                                    "http.failing_upstreams": ["kserve.io.kserve.protocol.rest.v1_endpoints.predict"]}),
    ("uvicorn-vllm-dynamo-4087-all-200.txt", {"http.requests": 3, "http.error_ratio": 0.0, "http.error_statuses": None,
                                              "serving.waiting_requests": 0}),
]


def pasted(text: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for art in artifacts_from_text(text, "p"):
        out |= {f.name: f.value for f in parse_artifact(art).facts}
    return out


@pytest.mark.parametrize(("name", "expected"), REAL, ids=[r[0] for r in REAL])
def test_real_pastes(name: str, expected: dict[str, Any]) -> None:
    got = pasted((FIXTURES / name).read_text(encoding="utf-8"))
    assert {k: got.get(k) for k in expected} == expected


def test_access_lines_among_controller_logs_are_read() -> None:
    spec = next(s for s in CATALOG if s.id == "ingress-nginx-upstreaminfo")
    line = render(spec.syntax, spec.format, spec.sample)
    klog = 'I1128 10:00:00.000000       7 controller.go:190] "Configuration changes detected, backend reload required"'
    got = pasted(f"{line}\n{klog}\n{line}\n{line}\n")
    assert got["http.requests"] == 3
    assert access_log.read_line(klog, 1) is None
    assert access_log.sniff(line) >= 90


def test_a_long_log_is_read_as_an_even_sample(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = next(s for s in CATALOG if s.id == "envoy-default")
    ok = render(spec.syntax, spec.format, spec.sample | {"RESPONSE_CODE": "200", "RESPONSE_FLAGS": "-"})
    bad = render(spec.syntax, spec.format, spec.sample)
    monkeypatch.setattr(access_log, "MAX_READ", 10)
    result = access_log.parse(Artifact(id="a", kind=ArtifactKind.ACCESS_LOG, content="\n".join([ok, bad] * 50)))
    got = {f.name: f.value for f in result.facts}
    assert got["http.requests"] == 10  # every 10th of 100 lines
    assert result.problems == ["access log: 100 lines; read every 10th (10)"]


def test_a_pasted_5xx_access_log_triggers_the_error_rate_playbook() -> None:
    from playbooks.pipeline import analyse

    failing = analyse(artifacts_from_text((FIXTURES / "istio-45802-503-uc.txt").read_text("utf-8"), "p"))
    finding = next(f for f in failing.findings if f.playbook == "error-rate")
    status = {h.id: h.status for h in finding.hypotheses}
    assert status["backend-connection-failures"] == "likely"
    assert status["backend-timeouts"] == "ruled-out"
    healthy = analyse(artifacts_from_text((FIXTURES / "ingress-nginx-4469-all-200.txt").read_text("utf-8"), "p"))
    assert "error-rate" not in healthy.symptoms


def _envoy_line(status: str, flags: str, request: str = "- - -", upstream: str = "outbound|443||api.example.com") \
        -> str:
    """Istio's default format (catalog entry istio-proxy-default) rendered with these values."""
    spec = next(s for s in CATALOG if s.id == "istio-proxy-default")
    sample = dict(spec.sample)
    method, path, protocol = request.split()
    sample.update({"REQ(:METHOD)": method, "REQ(X-ENVOY-ORIGINAL-PATH?:PATH)": path, "PROTOCOL": protocol,
                   "RESPONSE_CODE": status, "RESPONSE_FLAGS": flags, "UPSTREAM_HOST": "-"})
    for key in ("UPSTREAM_CLUSTER", "UPSTREAM_CLUSTER_RAW"):
        if key in sample:
            sample[key] = upstream
    return render(spec.syntax, spec.format, sample)


@pytest.mark.parametrize(("flags", "kind"), [("UH", "no-upstream"), ("UF", "connection-failure"),
                                             ("NR", "no-route"), ("URX", "connection-failure"),
                                             ("UO", "overflow")])
def test_an_envoy_session_with_status_0_is_failed_by_its_flags(flags: str, kind: str) -> None:
    assert facts(_envoy_line("0", flags)) == {"http.failure_kinds": [kind]}


def test_an_envoy_session_the_client_ended_is_no_failure() -> None:
    assert facts(_envoy_line("0", "DC")) == {}
    assert facts(_envoy_line("0", "-")) == {}


def test_an_envoy_503_uh_with_no_cluster_is_named_by_its_path() -> None:
    line = _envoy_line("503", "UH", "GET /products/1 HTTP/1.1", upstream="-")
    assert facts(line)["http.failure_kinds"] == ["no-upstream"]
    assert facts(line)["http.failing_upstreams"] == ["/products/1"]


def test_typographic_quotes_and_widened_spaces_are_undone_only_when_the_line_does_not_read() -> None:
    line = _envoy_line("503", "UH", "GET /products/1 HTTP/1.1")
    pasted = line.replace(' 503 UH', '  503 UH').replace('"-"', "\u201c-\u201d", 1)
    assert access_log.read_line(line, 1) is not None and access_log.read_line(pasted, 1) is not None
    assert access_log.read_line(pasted, 1) == access_log.read_line(line, 1)


def test_gunicorn_and_hypercorn_default_lines_read_as_nginx_combined() -> None:
    """gunicorn's default access_log_format (gunicorn/config.py AccessLogFormat) and hypercorn's print nginx's
    combined line; rendered with sample values, the combined entry reads them (status only)."""
    fmt = '%(h)s %(l)s %(u)s %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'
    sample = {"h": "10.1.2.3", "l": "-", "u": "-", "t": "[28/Nov/2026:10:00:01 +0000]",
              "r": "POST /predict HTTP/1.1", "s": "502", "b": "0", "f": "-", "a": "python-requests/2.31.0"}
    line = render("python", fmt, sample)
    request = access_log.read_line(line, 1)
    assert request is not None and (request.status, request.kind) == (502, "")
    hyper = render("python", fmt, sample | {"h": "10.1.2.3:5555"})
    assert (got := access_log.read_line(hyper, 1)) is not None and got.status == 502


def test_a_question_quoting_a_uvicorn_line_format_is_not_a_request() -> None:
    # Prose about the access log, no request line: nothing is read.
    got = pasted("Why does uvicorn print INFO: lines for every request, and can I turn the access log off?\n")
    assert "http.requests" not in got and "http.error_statuses" not in got


def _app_log(*statuses: str) -> dict[str, Any]:
    spec = next(s for s in CATALOG if s.id == "uvicorn-access")
    rows = [render(spec.syntax, spec.format, spec.sample | {"status_code": s}) for s in statuses]
    log = "\n".join(["INFO 10-09 05:19:37 logger.py:36] Received request cmpl-1: prompt: 'hi'", *rows])
    result = parse_artifact(Artifact(id="a", kind=ArtifactKind.CONTAINER_LOG, content=log))
    return {f.name: f.value for f in result.facts}


def test_an_app_logs_few_failed_request_lines_are_errors_not_a_rate() -> None:
    # One 500 among an application's log lines: an error, which says nothing of the share of requests failing.
    got = _app_log("500 Internal Server Error")
    assert (got.get("http.error_statuses"), got.get("http.failure_kinds")) == ([500], ["app-error"])
    assert "http.error_ratio" not in got
    # Successes beside it make the lines a sample of the traffic: the share is given.
    got = _app_log("200 OK", "500 Internal Server Error", "200 OK", "200 OK")
    assert (got.get("http.requests"), got.get("http.error_ratio")) == (4, 0.25)
    # Only 200s: read, no error.
    got = _app_log("200 OK", "200")
    assert (got.get("http.requests"), got.get("http.error_ratio"), got.get("http.error_statuses")) == (2, 0.0, None)


def _app_line(spec_id: str, **values: str) -> str:
    spec = next(s for s in CATALOG if s.id == spec_id)
    return render(spec.syntax, spec.format, spec.sample | values)


@pytest.mark.parametrize(("spec_id", "field"), [("tornado-access", "status"), ("werkzeug-access", "code"),
                                                ("kserve-timing-asgi", "status")])
def test_an_app_servers_request_lines_in_its_log_give_its_errors_and_its_successes_none(spec_id: str,
                                                                                        field: str) -> None:
    def read(*statuses: str) -> dict[str, Any]:
        rows = [_app_line(spec_id, **{field: s}) for s in statuses]
        log = "\n".join(["2026-11-28 10:00:00.001 1 root INFO [serve():136] starting server", *rows])
        result = parse_artifact(Artifact(id="a", kind=ArtifactKind.CONTAINER_LOG, content=log))
        return {f.name: f.value for f in result.facts}

    assert read("503").get("http.error_statuses") == [503]
    healthy = read("200", "200")
    assert (healthy.get("http.requests"), healthy.get("http.error_statuses")) == (2, None)


def test_lines_that_only_look_like_app_request_lines_are_not_requests() -> None:
    # timing-asgi's cpu line repeats the wall line's request; prose about a status key; a ms figure with no request.
    cpu = _app_line("kserve-timing-asgi").replace("time:wall", "time:cpu")
    for text in (cpu, "Why does KServe log 'http_status:500' tags for my predictor?",
                 "500 requests took 12.31ms", "step 500 loss 0.12 took 12.31ms"):
        assert access_log.read_line(text, 1) is None, text


def test_an_envoy_404_nr_is_a_request_the_proxy_failed_for_want_of_a_route() -> None:
    # Envoy answers a request no route matches with 404 and flag NR: a failure of the proxy below 5xx.
    nr = facts(_envoy_line("404", "NR", "GET /api HTTP/1.1"))
    assert nr["http.failure_kinds"] == ["no-route"]
    assert nr["http.error_ratio"] == 0.0
    # an application's own 404 (no flag) says nothing of a failure
    assert "http.failure_kinds" not in facts(_envoy_line("404", "-", "GET /api HTTP/1.1"))


# envoy#15698's istio-ingressgateway lines (first_sight_pastes.yaml, with the thread)
ENVOY_15698 = FIRST_SIGHT_PASTES["envoy-15698-istio-ingressgateway-404-nr"]


def test_real_envoy_404_nr_lines_are_no_route_failures_also_when_cut_before_the_method() -> None:
    assert facts(ENVOY_15698)["http.failure_kinds"] == ["no-route"]
    # the same line copied from a wrapped terminal, starting at the method (its opening quote lost)
    cut = ENVOY_15698.splitlines()[1].split('"', 1)[1]
    assert facts(cut)["http.failure_kinds"] == ["no-route"]
