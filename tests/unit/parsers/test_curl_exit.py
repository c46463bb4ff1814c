"""A curl that printed no error line: its exit status under a wrapper, or a verbose connect that hung
(collectors/parsers/logs/curl_exit.py, the codes and wrappers in collectors/catalogs/curl_exits.yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.logs import curl_exit

CATALOG: dict[str, Any] = yaml.safe_load(
    (Path(__file__).resolve().parents[3] / "collectors" / "catalogs" / "curl_exits.yaml").read_text())


def facts(text: str) -> dict[str, object]:
    result = curl_exit.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
    assert result.problems == []
    return {f.name: f.value for f in result.facts}


@pytest.mark.parametrize("wrapper", CATALOG["wrappers"], ids=lambda w: w["id"])
@pytest.mark.parametrize("code", CATALOG["codes"], ids=lambda c: c["name"])
def test_every_wrapper_renders_every_code(wrapper: dict[str, Any], code: dict[str, Any]) -> None:
    text = "$ curl -s --connect-timeout 5 http://10.96.14.2:8080/healthz\n" + wrapper["template"].format(
        code=code["code"])
    assert facts(text) == {"client.errors": [code["kind"]], "client.targets": ["10.96.14.2:8080"]}


def test_each_wrapper_names_its_source() -> None:
    for wrapper in CATALOG["wrappers"]:
        assert wrapper["project"] and wrapper["file"] and wrapper["versions"]


# Real pastes, verbatim, whole lines.
REAL = [
    # https://github.com/cilium/cilium-cli/issues/344 (the CLI prints the command and kubectl exec's status together)
    ('  ❌ command "curl -w %***local_ip***:%***local_port*** -> %***remote_ip***:%***remote_port*** = '
     '%***response_code*** --silent --fail --show-error --connect-timeout 5 --output /dev/null '
     'http://10.168.0.24:32193" failed: command terminated with exit code 7',
     {"client.errors": ["connect-failed"], "client.targets": ["10.168.0.24:32193"]}),
    # https://github.com/cilium/cilium/issues/11002 (the Ginkgo suite's CmdRes under "To succeed, but it failed:")
    ("Expected command: kubectl exec -n default xwing-6d75b9b56b-6rrwn -- curl --path-as-is -s -D /dev/stderr "
     "--fail --connect-timeout 5 --max-time 20 http://deathstar.default.svc.cluster.local/v1 -w \"time-> DNS: "
     "'%{time_namelookup}(%{remote_ip})', Connect: '%{time_connect}',Transfer '%{time_starttransfer}', total "
     "'%{time_total}'\" \nTo succeed, but it failed:\nExitcode: 6 \nErr: exit status 6",
     {"client.errors": ["name-resolution"], "client.targets": ["deathstar.default.svc.cluster.local:80"]}),
    # https://github.com/cilium/cilium/issues/3710
    ("00:17:49   unable to curl deathstar.default.svc.cluster.local/v1: 000command terminated with exit code 6",
     {"client.errors": ["name-resolution"], "client.targets": ["deathstar.default.svc.cluster.local"]}),
]


@pytest.mark.parametrize(("text", "expected"), REAL)
def test_real_pastes(text: str, expected: dict[str, object]) -> None:
    assert facts(text) == expected


def test_curls_own_error_line_gives_its_code_and_the_commands_address() -> None:
    # curl before 7.30 names no address in its timeout ("connect() timed out!"): the command above holds it.
    text = "# curl --connect-timeout 3 10.0.12.7:443\ncurl: (28) connect() timed out!"
    assert facts(text) == {"client.errors": ["timeout"], "client.targets": ["10.0.12.7:443"]}
    resolve = "$ curl http://web.shop.svc.cluster.local/\ncurl: (6) Could not resolve host: web.shop.svc.cluster.local"
    assert facts(resolve) == {"client.errors": ["name-resolution"],
                              "client.targets": ["web.shop.svc.cluster.local:80"]}


def test_a_curl_said_to_hang_in_the_next_sentence() -> None:
    text = "```\n$ curl http://web.shop.svc.cluster.local:8080/\n```\n\nThe request just hangs until I press ctrl-c."
    assert facts(text) == {"client.errors": ["timeout"], "client.targets": ["web.shop.svc.cluster.local:8080"]}
    said = "$ kubectl exec client -- curl 10.96.33.4:80\nand it times out after two minutes every time"
    assert facts(said) == {"client.errors": ["timeout"], "client.targets": ["10.96.33.4:80"]}


@pytest.mark.parametrize("text", [
    "$ curl http://10.96.0.4/\nThe request does not hang any more after the fix.",  # negated
    "$ curl http://10.96.0.4/\nWhy would the request hang here?",  # asked
    "$ curl http://10.96.0.4/\n{\"error\": \"the upstream request timed out at the gateway\"}",  # the body printed
    "$ curl http://10.96.0.4/\nok\nall good\nfine\nlater on, the other job hangs for a while",  # too far below
    "$ curl https://example.com/\nThe request just hangs until I press ctrl-c.",  # not a cluster address
])
def test_sentences_that_do_not_say_the_curl_hung(text: str) -> None:
    assert facts(text) == {}


def test_a_verbose_connect_that_never_completed() -> None:
    text = ("[root@node1 ~]# curl -v http://10.233.92.2:80\n* Rebuilt URL to: http://10.233.92.2:80/\n"
            "*   Trying 10.233.92.2...\n* TCP_NODELAY set\n^C\n[root@node1 ~]# ")
    assert facts(text) == {"client.errors": ["timeout"], "client.targets": ["10.233.92.2:80"]}
    newer = "$ curl -v my-svc:8080\n*   Trying 10.96.3.4:8080...\n$ kubectl get ep my-svc"
    assert facts(newer) == {"client.errors": ["timeout"], "client.targets": ["10.96.3.4:8080"]}


@pytest.mark.parametrize("text", [
    # connected: curl said what happened
    "$ curl -v http://10.0.0.5/\n*   Trying 10.0.0.5:80...\n* Connected to 10.0.0.5 (10.0.0.5) port 80 (#0)\n$ ls",
    # refused: the refusal is curl's own line, read by the network catalog
    "$ curl -v 10.0.0.5:80\n*   Trying 10.0.0.5:80...\n* connect to 10.0.0.5 port 80 failed: Connection refused\n",
    # the trace goes on past the window without a prompt: a cut paste, not a hang
    "*   Trying 10.0.0.5...\n" + "* TCP_NODELAY set\n" * 3 + "some other text\n" + "more\n" * 20,
    # a public site, not a cluster address
    "$ curl -s https://example.com/\ncommand terminated with exit code 7",
    "$ curl -s http://8.8.8.8/\ncommand terminated with exit code 28",
    # loopback
    "$ curl -s http://127.0.0.1:8080/\ncommand terminated with exit code 7",
    # an exit code that is not a connection failure (22: an HTTP error, read from the status by other readers)
    "$ curl -sf http://10.96.0.4/\ncommand terminated with exit code 22",
    # curl's own line that names the address is the network catalog's (with its target), not the exit code's
    "$ curl http://10.96.0.4:8080/\ncurl: (7) Failed to connect to 10.96.0.4 port 8080: Connection refused",
    # curl's own line under a command to a public site
    "# curl --connect-timeout 3 https://example.com/\ncurl: (28) connect() timed out!",
    # an exit status with no curl command above it
    "$ wget http://10.96.0.4/\ncommand terminated with exit code 7",
    # the exit status of a later command
    "$ curl -s http://10.96.0.4/\nok\n$ curl -s http://10.96.0.9/\nok\n" + "x\n" * 14 + "exit status 7",
])
def test_negatives(text: str) -> None:
    assert facts(text) == {}


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("curl -vs*Trying.:/0123456789\nexit status code$# ^Ch")), max_size=300))
def test_never_raises(text: str) -> None:
    curl_exit.read(Artifact(id="p", kind=ArtifactKind.TEXT, content=text))
