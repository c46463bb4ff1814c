"""Hostile and malformed requests at every door: always a 4xx with a JSON body saying what was expected, never 5xx.

The bot (Starlette under uvicorn, slack-bolt behind /slack/events, a SQLite store, the Slack stand-in) and the
node agent (fixture /proc and kmsg) run for real on 127.0.0.1. Hand-made hostile requests come first (deep
nesting, huge numbers, invalid UTF-8, NUL, bad headers, oversized bodies); then hypothesis mutates valid
payloads, signed and unsigned, against every endpoint. The fuzzing is bounded by example counts, not by time,
so a loaded machine runs it slower but never differently.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import SecretStr
from slack_bolt.adapter.starlette import SlackRequestHandler

from bot.config import Settings
from bot.context import build_context
from bot.server import create_app
from bot.slack.app import build_slack_app
from collectors.agent.app import create_app as create_agent_app
from collectors.agent.config import AgentSettings
from tests.harness.bot_server import listening_socket, serve_app
from tests.standins.slack_api import (
    SlackStandIn,
    block_action_body,
    message_shortcut_body,
    sign,
    signed_headers,
    slash_command_body,
)

SECRET = "hostile-signing-secret-0123456789"
WEBHOOK_TOKEN = "hostile-webhook-token-0123456789"
AGENT_TOKEN = "hostile-agent-token-0123456789ab"
AGENT_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent"
FUZZ = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.data_too_large])


@dataclass
class Doors:
    bot: httpx.Client
    agent: httpx.Client
    slack: SlackStandIn


def _valid_alert() -> bytes:
    return json.dumps({
        "version": "4", "groupKey": '{}:{alertname="KubePodCrashLooping"}', "status": "firing",
        "receiver": "triagebot", "groupLabels": {"alertname": "KubePodCrashLooping"},
        "commonLabels": {"alertname": "KubePodCrashLooping", "namespace": "shop", "pod": "checkout-1"},
        "commonAnnotations": {"summary": "Pod is crash looping"}, "externalURL": "http://am:9093",
        "truncatedAlerts": 0,
        "alerts": [{"status": "firing", "labels": {"alertname": "KubePodCrashLooping", "namespace": "shop",
                                                    "pod": "checkout-1"},
                    "annotations": {"summary": "Pod is crash looping"}, "startsAt": "2026-01-01T00:00:00Z",
                    "endsAt": "0001-01-01T00:00:00Z", "generatorURL": "http://prom/graph", "fingerprint": "abc"}],
    }).encode()


@pytest.fixture(scope="module")
def doors(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Doors]:
    tmp = tmp_path_factory.mktemp("hostile")
    with SlackStandIn(burst=1000, post_rate_per_channel=1000.0) as slack:
        bot_settings = Settings(
            slack_bot_token=SecretStr(slack.token), slack_signing_secret=SecretStr(SECRET),
            slack_api_url=slack.api_url, database_url=f"sqlite:///{tmp / 'bot.sqlite'}",
            webhook_token=SecretStr(WEBHOOK_TOKEN), default_channel="C0OPS",
            kubeconfig=Path("/nonexistent/kubeconfig"), call_timeout=1.0, deadline=2.0)
        agent_settings = AgentSettings(
            token=AGENT_TOKEN, node_name="gpu-node-2", proc_root=AGENT_FIXTURES / "proc",  # type: ignore[arg-type]
            sys_root=tmp / "sys", cgroup_root=AGENT_FIXTURES / "cgroup", kmsg_path=AGENT_FIXTURES / "kmsg",
            pod_resources_socket=tmp / "kubelet.sock", xid_watch=False, max_response_bytes=64 * 1024)
        ctx = build_context(bot_settings)
        try:
            with serve_app(create_app(ctx, SlackRequestHandler(build_slack_app(ctx)))) as bot_url, \
                    _agent(agent_settings) as agent_url, \
                    httpx.Client(base_url=bot_url, timeout=30) as bot, \
                    httpx.Client(base_url=agent_url, timeout=30) as agent:
                yield Doors(bot=bot, agent=agent, slack=slack)
        finally:
            ctx.close()


class _agent:
    """The node agent under uvicorn on a free loopback port (with its lifespan, as `triagebot agent` runs it)."""

    def __init__(self, agent_settings: AgentSettings) -> None:
        self.sock = listening_socket()
        self.server = uvicorn.Server(uvicorn.Config(create_agent_app(agent_settings), log_config=None,
                                                    access_log=False, lifespan="on"))

    def __enter__(self) -> str:
        import threading

        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self.thread.is_alive():
                raise RuntimeError("the agent did not start")
            time.sleep(0.01)
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}"

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        self.sock.close()


def assert_refused_well(response: httpx.Response) -> None:
    """Not a 5xx; and a refusal is JSON that says what went wrong and what was expected."""
    assert response.status_code < 500, (response.status_code, response.text[:300])
    if response.status_code >= 400:
        body = response.json()
        assert isinstance(body, dict) and body.get("error"), response.text[:300]
        assert body.get("expected"), response.text[:300]


ZERO_SIG = "v0=" + "0" * 64


def webhook_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {WEBHOOK_TOKEN}", "Content-Type": "application/json"}


HOSTILE_JSON = [
    pytest.param(b"[" * 100_000, id="deep-array"),
    pytest.param(b'{"a":' * 5000 + b"1" + b"}" * 5000, id="deep-object"),
    pytest.param(b'{"version": "4", "truncatedAlerts": ' + b"9" * 5000 + b"}", id="huge-int"),
    pytest.param(b'{"version": "4", "truncatedAlerts": 1e999}', id="huge-float"),
    pytest.param(b'{"version": "4", "truncatedAlerts": NaN}', id="nan"),
    pytest.param(b'{"version": "4", "groupKey": "\xff\xfe"}', id="invalid-utf8"),
    pytest.param(_valid_alert().replace(b"crash looping", b"crash\\u0000looping"), id="nul-escape"),
    pytest.param(_valid_alert().replace(b"crash looping", b"crash\\ud800looping"), id="lone-surrogate"),
    pytest.param(b"\x00" * 64, id="nul-bytes"),
    pytest.param(b"", id="empty"),
    pytest.param(b"[]", id="not-an-object"),
    pytest.param(b'"just a string"', id="a-string"),
    pytest.param(_valid_alert().replace(b'"4"', b"4"), id="wrong-type"),
    pytest.param(_valid_alert().replace(b'"alerts": [', b'"alerts": [1, '), id="alert-not-object"),
]


@pytest.mark.parametrize("body", HOSTILE_JSON)
def test_hostile_json_to_the_webhook_is_a_4xx_saying_what_was_expected(doors: Doors, body: bytes) -> None:
    response = doors.bot.post("/alertmanager", content=body, headers=webhook_headers())
    assert 400 <= response.status_code < 500
    assert_refused_well(response)


def test_the_webhook_checks_the_token_before_the_body(doors: Doors) -> None:
    response = doors.bot.post("/alertmanager", content=b"[" * 100_000)
    assert response.status_code == 401
    assert_refused_well(response)


@pytest.mark.parametrize(
    ("path", "limit"), [("/alertmanager", 1_048_576), ("/slack/events", 1_048_576), ("/healthz", 4096)])
def test_a_declared_body_over_the_cap_is_refused_before_it_is_read(doors: Doors, path: str, limit: int) -> None:
    """Only the headers are sent: the answer comes without the bot waiting for (or reading) a byte of the body."""
    import socket
    import urllib.parse

    url = urllib.parse.urlsplit(str(doors.bot.base_url))
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                     f"Authorization: Bearer {WEBHOOK_TOKEN}\r\nContent-Length: {limit + 1}\r\n\r\n".encode())
        answer = sock.makefile("rb").read().decode()  # the bot closes the connection after its answer
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 413 ")
    assert json.loads(body)["expected"] == f"a body of at most {limit} bytes"


def test_a_chunked_body_over_the_cap_is_cut_while_it_streams(doors: Doors) -> None:
    """No Content-Length: the body is counted as it streams in. One byte over the cap is enough to be refused (and
    the whole of it is sent, so the bot's close cannot reset the connection before the answer is read)."""
    import socket
    import urllib.parse

    limit = 1_048_576
    url = urllib.parse.urlsplit(str(doors.bot.base_url))
    chunk = b"[" * 65536
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(f"POST /alertmanager HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Type: application/json\r\n"
                     f"Authorization: Bearer {WEBHOOK_TOKEN}\r\nTransfer-Encoding: chunked\r\n\r\n".encode())
        for _ in range(limit // len(chunk)):
            sock.sendall(b"10000\r\n" + chunk + b"\r\n")
        sock.sendall(b"1\r\n[\r\n0\r\n\r\n")
        answer = sock.makefile("rb").read().decode()
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 413 ")
    assert json.loads(body)["expected"] == f"a body of at most {limit} bytes"


@pytest.mark.parametrize(
    "headers",
    [
        pytest.param({}, id="no-headers"),
        pytest.param({"X-Slack-Request-Timestamp": "abc", "X-Slack-Signature": ZERO_SIG}, id="word-timestamp"),
        pytest.param({"X-Slack-Request-Timestamp": "1" * 40, "X-Slack-Signature": ZERO_SIG}, id="huge-timestamp"),
        pytest.param({"X-Slack-Request-Timestamp": "-5", "X-Slack-Signature": ZERO_SIG}, id="negative"),
        pytest.param({"X-Slack-Request-Timestamp": "1000000000", "X-Slack-Signature": ZERO_SIG}, id="stale"),
        pytest.param({"X-Slack-Request-Timestamp": "{now}", "X-Slack-Signature": "v1=abc"}, id="bad-signature-form"),
        pytest.param({"X-Slack-Request-Timestamp": "{now}", "X-Slack-Signature": ZERO_SIG}, id="wrong-hmac"),
    ],
)
def test_unsigned_slack_requests_are_401_with_what_was_expected(doors: Doors, headers: dict[str, str]) -> None:
    now = str(int(time.time()))
    filled = {k: v.replace("{now}", now) for k, v in headers.items()}
    body = slash_command_body("/triage", "help", response_url=doors.slack.response_url())
    response = doors.bot.post("/slack/events", content=body, headers=filled)
    assert response.status_code == 401
    assert_refused_well(response)


@pytest.mark.parametrize(
    ("body", "form"),
    [
        pytest.param(b"payload=%7Bnot-json", True, id="payload-not-json"),
        pytest.param(b"payload=" + b"%5B" * 20000, True, id="payload-deep"),
        pytest.param(b"{not json", False, id="json-not-json"),
        pytest.param(b"[1, 2, 3]", False, id="json-array"),
        pytest.param(b'{"type": "event_callback", "event": 5}', False, id="event-not-object"),
        pytest.param(b"\xff\xfe\x00", True, id="invalid-utf8-form"),
        pytest.param(b"command=%2Fnosuch&text=x", True, id="unknown-command"),
        pytest.param(b"payload=" + b"%7B%22type%22%3A%22block_actions%22%7D", True, id="action-without-fields"),
    ],
)
def test_signed_but_malformed_slack_payloads_are_4xx(doors: Doors, body: bytes, form: bool) -> None:
    response = doors.bot.post("/slack/events", content=body, headers=signed_headers(body, SECRET, form=form))
    assert_refused_well(response)


@pytest.mark.parametrize(
    ("path", "params", "headers"),
    [
        pytest.param("/v1/kernel-log", {"since": "9" * 400}, {}, id="huge-since"),
        pytest.param("/v1/kernel-log", {"max_bytes": "1e999"}, {}, id="float-max-bytes"),
        pytest.param("/v1/kernel-log", {"since": "\x00"}, {}, id="nul-since"),
        pytest.param("/v1/cpu-stat", {"pod_uid": "../../etc"}, {}, id="path-uid"),
        pytest.param("/v1/shm", {"pod_uid": "../../etc"}, {}, id="shm-path-uid"),
        pytest.param("/v1/shm", {"pod_uid": "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5", "container": "../x"}, {},
                     id="shm-path-container"),
        pytest.param("/v1/nvml", {"since": "-1h"}, {}, id="negative-since"),
        pytest.param("/v1/conntrack", {"x": "y"}, {}, id="unknown-param"),
        pytest.param("/v1/conntrack", {}, {"Authorization": "Bearer \u00e9".encode("latin-1")}, id="non-latin-token"),
    ],
)
def test_hostile_agent_queries_are_4xx(doors: Doors, path: str, params: dict[str, str],
                                      headers: dict[str, Any]) -> None:
    sent = {"Authorization": f"Bearer {AGENT_TOKEN}"} | headers
    response = doors.agent.get(path, params=params, headers=sent)
    assert 400 <= response.status_code < 500
    assert_refused_well(response)


def test_a_body_sent_to_the_agent_is_refused_before_the_token_check(doors: Doors) -> None:
    import socket
    import urllib.parse

    url = urllib.parse.urlsplit(str(doors.agent.base_url))
    with socket.create_connection((url.hostname, url.port), timeout=60) as sock:
        sock.sendall(f"GET /v1/conntrack HTTP/1.1\r\nHost: {url.netloc}\r\nContent-Length: 100000\r\n\r\n".encode())
        answer = sock.makefile("rb").read().decode()
    head, _, body = answer.partition("\r\n\r\n")
    assert head.startswith("HTTP/1.1 413 ")  # not 401: the cap comes before the token check
    assert json.loads(body)["expected"] == "a body of at most 4096 bytes"


# ---- fuzzing: mutated valid payloads ----------------------------------------------------------------------

HOSTILE_SNIPPETS = [b"\x00", b"\xff", b"\xed\xa0\x80", b"[" * 200, b"{" * 200, b"9" * 400, b"1e999", b"NaN",
                    b"\\u0000", b"\\ud800", b'"', b"%", b"%00", b"%ZZ", b"&payload=", b"\r\n", b"-" * 50]


@st.composite
def mutated(draw: st.DrawFn, valid: bytes) -> bytes:
    """`valid` with a few random edits: flipped, inserted, deleted or duplicated bytes, or a hostile snippet."""
    data = bytearray(valid)
    for _ in range(draw(st.integers(1, 4))):
        where = draw(st.integers(0, len(data)))
        action = draw(st.sampled_from(["flip", "insert", "delete", "duplicate", "snippet", "truncate"]))
        if action == "flip" and data:
            index = min(where, len(data) - 1)
            data[index] = draw(st.integers(0, 255))
        elif action == "insert":
            data[where:where] = draw(st.binary(min_size=1, max_size=16))
        elif action == "delete":
            del data[where:where + draw(st.integers(1, 64))]
        elif action == "duplicate":
            data[where:where] = data[where:where + draw(st.integers(1, 256))]
        elif action == "snippet":
            data[where:where] = draw(st.sampled_from(HOSTILE_SNIPPETS))
        else:
            del data[where:]
    return bytes(data)


@FUZZ
@given(body=mutated(_valid_alert()))
def test_fuzz_webhook(doors: Doors, body: bytes) -> None:
    assert_refused_well(doors.bot.post("/alertmanager", content=body, headers=webhook_headers()))


def _slack_bodies() -> list[tuple[bytes, bool]]:
    url = "http://127.0.0.1:9/commands/T0/1/x"  # a response_url nobody answers: replies fail after the ack
    return [
        (slash_command_body("/triage", "help", response_url=url), True),
        (slash_command_body("/triage", "checkout -n shop --since 1h", response_url=url), True),
        (slash_command_body("/drill", "help", response_url=url), True),
        (message_shortcut_body("triage_message", "Reason: OOMKilled\nExit Code: 137", response_url=url), True),
        (block_action_body("triage_rerun", "42", response_url=url), True),
        (json.dumps({"type": "event_callback", "event": {"type": "app_home_opened", "user": "U0ALICE",
                                                         "tab": "home"}, "event_id": "Ev1"}).encode(), False),
    ]


@FUZZ
@given(choice=st.sampled_from(_slack_bodies()), data=st.data(), signed=st.booleans())
def test_fuzz_slack_events(doors: Doors, choice: tuple[bytes, bool], data: st.DataObject, signed: bool) -> None:
    valid, form = choice
    body = data.draw(mutated(valid))
    headers = signed_headers(body, SECRET, form=form) if signed else \
        {"Content-Type": "application/json", **sign(body, "not-the-secret")}
    response = doors.bot.post("/slack/events", content=body, headers=headers)
    assert_refused_well(response)
    if not signed:
        assert response.status_code == 401


@FUZZ
@given(path=st.sampled_from(["/v1/kernel-log", "/v1/conntrack", "/v1/cpu-stat", "/v1/nvml", "/v1/shm", "/healthz",
                             "/v1/x"]),
       params=st.dictionaries(st.sampled_from(["since", "max_bytes", "pod_uid", "container", "container_id", "zz"]),
                              st.text(max_size=40), max_size=3))
def test_fuzz_agent(doors: Doors, path: str, params: dict[str, Any]) -> None:
    response = doors.agent.get(path, params=params, headers={"Authorization": f"Bearer {AGENT_TOKEN}"})
    assert_refused_well(response)


@FUZZ
@given(path=st.sampled_from(["/metrics", "/healthz", "/readyz", "/", "/alertmanager", "/slack/events", "/%00"]),
       method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"]),
       body=st.binary(max_size=64))
def test_fuzz_other_paths_and_methods(doors: Doors, path: str, method: str, body: bytes) -> None:
    response = doors.bot.request(method, path, content=body)
    assert_refused_well(response)
