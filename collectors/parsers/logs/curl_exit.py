"""How a curl that printed no error line failed: its exit status under a wrapper, or a verbose connect that hung.

Two forms, both about a curl command shown in the paste:
- A silent curl (-s, -sf) prints nothing of its own; the exit status a wrapper prints after it (kubectl exec's
  "command terminated with exit code 7", Go's "exit status 28", ...) says how it failed. The codes and wrappers are
  data with their sources (collectors/catalogs/curl_exits.yaml).
- A verbose curl (-v) prints "*   Trying <addr>..." when it starts to connect and "Connected to ..." once connected
  (curl lib/connect.c, "Trying %s..." to 7.67, "Trying %s:%d..." from 7.68). Its trace ending after "Trying" with
  only connect-time lines (TCP_NODELAY, happy eyeballs), followed by the shell's next prompt or ^C, is a connect
  that never completed: the packets went nowhere. It gives client.errors timeout.
- A curl whose result the person tells in the next lines instead of pasting it ("And observe the connection hang
  for an extended period"): a sentence saying it hangs or times out, not negated nor asked, is the same timeout.
Only cluster addresses are read (private IPv4, <svc>.<ns>.svc names, one-label names): the symptom is a Service or
pod that cannot be reached, not the internet.
"""

from __future__ import annotations

import ipaddress
from functools import cache
from pathlib import Path
from typing import Any

import re2

from collectors.models import Artifact, ParseResult
from collectors.parsers.sink import FactSink
from collectors.yaml_safe import load_file

_CATALOG = Path(__file__).resolve().parents[2] / "catalogs" / "curl_exits.yaml"
_MAX_LINE = 4096
_WINDOW = 12  # lines after the command where its exit status is looked for
# A curl command: the word curl as a command (after a prompt, a pipe, `exec ... --`, or at the line's start).
_COMMAND: Any = re2.compile(r"(?:^|[\s$#>`'\"(;|&])curl\s+(?P<args>.*)$")
# One word of the command line as a URL: [scheme://]host[:port][/path].
_URL: Any = re2.compile(r"^(?:(?P<scheme>https?)://)?(?P<host>\[[0-9a-fA-F:]+\]|[A-Za-z0-9][\w.-]*)"
                        r"(?::(?P<port>\d{1,5}))?(?:[/?]\S*)?$")
_TRYING: Any = re2.compile(r"^\*\s+Trying (?P<host>[0-9.]+|[0-9a-fA-F:]+)(?::(?P<port>\d+))?\.\.\.")
# The lines a verbose curl prints while a connect is still in progress (lib/connect.c, lib/cf-socket.c).
_CONNECTING = ("TCP_NODELAY set", "Trying ", "Rebuilt URL", "Uses proxy env", "Hostname was NOT found",
               "Added ", "processing:", "Host ", "IPv6: ", "IPv4: ", "Immediate connect fail")
# A shell prompt starting the next command ("$ curl", "[root@node1 ~]# kubectl", "~~> ls"), or the ^C that ended it.
_PROMPT: Any = re2.compile(r"^(?:(?:\S.*?)?[$#>] \S|\^C)")
_SERVICE_NAME: Any = re2.compile(r"^[a-z0-9-]+\.[a-z0-9-]+\.svc(?:\.[a-z0-9.-]+)?$|^[a-z0-9-]+$")
# What a person writes of a curl that never answered, and what turns the sentence around.
_SAID_HUNG: Any = re2.compile(r"(?i)\b(?:hangs?|hung|hanging|times? out|timed out|timing out)\b")
_SAID_NOT: Any = re2.compile(r"(?i)\b(?:not|no longer|never|without|if)\b|n't\b|\?\s*$")
_NOT_A_HOST = frozenset({"localhost", "curl", "http", "https", "get", "post", "put", "delete", "head"})


@cache
def _catalog() -> tuple[dict[int, str], tuple[tuple[Any, tuple[str, ...]], ...]]:
    raw = load_file(_CATALOG)
    codes = {int(c["code"]): str(c["kind"]) for c in raw["codes"]}
    return codes, tuple((re2.compile(w["pattern"]), tuple(w.get("unless", ()))) for w in raw["wrappers"])


def read(artifact: Artifact) -> ParseResult:
    lines = artifact.content.split("\n")
    sink = FactSink(artifact, lines)
    for index, raw in enumerate(lines):
        line = raw[:_MAX_LINE]
        if "curl" in line and (m := _COMMAND.search(line)) and (target := _target(m.group("args"))):
            _exit_status(sink, lines, index, target)
            _said_hung(sink, lines, index, target)
        if "Trying " in line and (t := _TRYING.match(line.strip())) and _hung(lines, index + 1):
            host = t.group("host")
            if _cluster_host(host):
                port = t.group("port") or _port_from_command(lines, index, host)
                where = f"{host}:{port}" if port else host
                sink.add("client.errors", ["timeout"], index + 1, text=f"{line.strip()} (never connected)")
                sink.add("client.targets", [where], index + 1)
    return sink.done()


def _exit_status(sink: FactSink, lines: list[str], index: int, target: str) -> None:
    """The exit status printed for the curl command on lines[index] (a CI tool prints both on one line: 'command
    "curl ..." failed: command terminated with exit code 7'), read before the next curl command."""
    codes, wrappers = _catalog()
    for n in range(index, min(len(lines), index + 1 + _WINDOW)):
        line = lines[n][:_MAX_LINE]
        if n > index and "curl" in line and _COMMAND.search(line):
            return
        for rx, unless in wrappers:
            if any(u in line for u in unless):
                continue
            if (m := rx.search(line)) and (kind := codes.get(int(m.group("code")))):
                sink.add("client.errors", [kind], n + 1, text=f"curl exit code {m.group('code')}: {line.strip()}")
                sink.add("client.targets", [target], index + 1)
                return


def _said_hung(sink: FactSink, lines: list[str], index: int, target: str) -> None:
    """A sentence within the few lines after the command saying the curl hung or timed out; only prose (no program
    output, prompt or trace line comes between: curl's own lines are read by the network catalog)."""
    seen = 0
    for n in range(index + 1, min(len(lines), index + 1 + _WINDOW)):
        text = lines[n][:_MAX_LINE].strip().strip("`").strip()
        if not text:
            continue
        seen += 1
        if seen > 3 or text.startswith(("*", "<", ">", "{", "[", "\"", "curl:", "$", "#")) or len(text.split()) < 4:
            return
        if _SAID_HUNG.search(text) and not _SAID_NOT.search(text):
            sink.add("client.errors", ["timeout"], n + 1, text=f"said of the curl above: {text}")
            sink.add("client.targets", [target], index + 1)
            return


def _target(args: str) -> str:
    """The host[:port] of the command's URL when it is a cluster address, else "".

    A word with a scheme is the URL; without one, the first host:port or IPv4 word (an option's argument, such as a
    proxy's -x host:port, may come first, so a schemed word wins)."""
    found: list[tuple[bool, str, str]] = []  # (has a scheme, host, port)
    for word in args.split()[:64]:
        if (m := _URL.match(word.strip("'\"`")[:_MAX_LINE])) is None:
            continue
        host, scheme = m.group("host"), m.group("scheme") or ""
        if host.lower() in _NOT_A_HOST:
            continue
        if not scheme and not m.group("port") and not _ipv4(host) and ".svc" not in host:
            continue  # a bare word after curl is an option's argument more often than a host
        found.append((bool(scheme), host, m.group("port") or {"http": "80", "https": "443"}.get(scheme, "")))
    if not found:
        return ""
    _, host, port = max(found, key=lambda f: f[0])  # the first schemed word, else the first word
    if not _cluster_host(host):
        return ""
    return f"{host}:{port}" if port else host


def _ipv4(host: str) -> ipaddress.IPv4Address | None:
    try:
        return ipaddress.IPv4Address(host)
    except ValueError:
        return None


def _cluster_host(host: str) -> bool:
    if (ip := _ipv4(host)) is not None:
        return (ip.is_private or ip in ipaddress.IPv4Network("100.64.0.0/10")) and not ip.is_loopback
    return host.lower() not in _NOT_A_HOST and bool(_SERVICE_NAME.match(host.lower()))


def _hung(lines: list[str], start: int) -> bool:
    """The verbose trace after "Trying" shows only connect-time lines, then a prompt, ^C or the paste's end."""
    for line in lines[start:start + _WINDOW]:
        text = line.strip()
        if not text:
            continue
        if text.startswith("*"):
            if any(word in text for word in _CONNECTING):
                continue
            return False  # connected, refused, timed out, resolved: curl said what happened
        return bool(_PROMPT.match(text))
    return len(lines) - start <= _WINDOW


def _port_from_command(lines: list[str], index: int, host: str) -> str:
    """The port of the curl command above the trace that names this address."""
    for line in reversed(lines[max(0, index - _WINDOW):index]):
        if host in line and (m := _COMMAND.search(line[:_MAX_LINE])):
            target = _target(m.group("args"))
            return target.rsplit(":", 1)[1] if ":" in target else ""
    return ""
