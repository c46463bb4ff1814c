"""Network interfaces and their MTUs to net.mtus and net.mtu_mismatch.

Reads the node agent's /v1/net-links JSON (schema "triagebot.netlinks/v1"), and what people paste: `ip link`
(with or without -d, -o) and `ifconfig`. Seed 000:61-72: an MTU mismatch fails only large packets, so small
health checks pass while real requests time out. The check compares the layers of one node's path:

- an overlay tunnel must leave room for its header on the uplink: VXLAN and Geneve add 50 bytes, WireGuard 60,
  IP-in-IP 20 (flannel, Calico and Cilium size their devices the same way);
- the pod side (veths, the CNI bridge) must not exceed the tunnel it sends into, or the uplink when there is none.

A mismatch needs both sides of a comparison in the evidence; a paste of one interface states its MTU only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise

SCHEMA_PREFIX = "triagebot.netlinks/"
OVERHEAD = {"vxlan": 50, "geneve": 50, "wireguard": 60, "ipip": 20}

# `2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP ...`; a pod's eth0 reads `eth0@if12`.
_IP_LINK = LazyPattern(r"^\s*\d+:\s+(?P<name>[^\s:@]+)(?P<peer>@\S+)?:\s+<(?P<flags>[^>]*)>\s+mtu\s+(?P<mtu>\d+)"
                       r"(?:.*?\bstate\s+(?P<state>\S+))?")
# `flannel.1: flags=4163<UP,BROADCAST,RUNNING,MULTICAST>  mtu 1450`
_IFCONFIG = LazyPattern(r"^(?P<name>[^\s:]+):\s+flags=\d+<(?P<flags>[^>]*)>\s+mtu\s+(?P<mtu>\d+)")
_DETAIL = LazyPattern(r"^\s+(?P<kind>vxlan|geneve|wireguard|ipip|veth|bridge)\b(?:.*?\bdev\s+(?P<dev>\S+))?")
_OVERLAY_NAMES = (("vxlan", re.compile(r"^(?:flannel\.\d+|vxlan[.\w-]*|cilium_vxlan)$")),
                  ("geneve", re.compile(r"^(?:genev_sys_\d+|cilium_geneve)$")),
                  ("wireguard", re.compile(r"^(?:wg\w*|flannel-wg\w*|cilium_wg\w*|wireguard\.cali)$")),
                  ("ipip", re.compile(r"^tunl\d+$")))
_POD_SIDE = LazyPattern(r"^(?:veth\w*|cali\w+|lxc\w+|cni\d+|cbr\d+|azv\w+|eni\w+|gke\w+)$")
_PHYSICAL = LazyPattern(r"^(?:eth\d+|en\w+|bond\d+|team\d+|ib\d+)$")


@dataclass
class Link:
    name: str
    mtu: int
    up: bool
    line: int
    kind: str = ""  # vxlan, geneve, wireguard, ipip, veth, bridge, physical, or "" (something else)
    dev: str = ""  # the uplink a tunnel names (`ip -d link`: "vxlan id 1 ... dev eth0")


def _kind_by_name(name: str, peer: bool) -> str:
    if peer:
        return "veth"  # eth0@if12: one end of a veth pair, a pod's interface
    for kind, pattern in _OVERLAY_NAMES:
        if pattern.match(name):
            return kind
    if _POD_SIDE.match(name):
        return "veth"
    return "physical" if _PHYSICAL.match(name) else ""


def _from_json(doc: dict[str, object], lines: list[str]) -> list[Link]:
    out: list[Link] = []
    entries = doc.get("interfaces")
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        if not isinstance(entry.get("mtu"), int):
            continue
        name, devtype = entry["name"], str(entry.get("devtype", ""))
        if entry.get("physical") is True:
            kind = "physical"
        elif devtype in OVERHEAD or devtype in ("bridge", "veth"):
            kind = devtype
        else:
            kind = _kind_by_name(name, False)
        line = next((n for n, text in enumerate(lines, 1) if f'"name": "{name}"' in text), 1)
        out.append(Link(name, int(entry["mtu"]), entry.get("operstate") in ("up", "unknown"), line, kind))
    return out


def _from_text(lines: list[str]) -> list[Link]:
    out: list[Link] = []
    for n, text in enumerate(lines, 1):
        m = _IP_LINK.match(text) or _IFCONFIG.match(text)
        if m is not None:
            name, flags = m.group("name"), m.group("flags").split(",")
            # eth0@if12: one end of a veth pair; tunl0@NONE and vlan parents (eth0.100@eth0) are not.
            peer = "peer" in m.groupdict() and re.fullmatch(r"@if\d+", m.group("peer") or "") is not None
            # UP is only the admin state; LOWER_UP (ip) or RUNNING (ifconfig) says it carries traffic.
            up = "UP" in flags and ("LOWER_UP" in flags or "RUNNING" in flags)
            out.append(Link(name, int(m.group("mtu")), up, n, _kind_by_name(name, peer)))
            continue
        detail = _DETAIL.match(text)
        if detail is not None and out and out[-1].line >= n - 3:  # `ip -d` prints the type under the link
            kind, last = detail.group("kind"), out[-1]
            if kind in OVERHEAD or kind == "veth":
                last.kind = kind
            elif kind == "bridge" and last.kind != "veth":
                last.kind = "bridge"
            last.dev = detail.group("dev") or last.dev
    return out


@dataclass(frozen=True)
class Verdict:
    mismatch: bool
    lines: tuple[int, int]
    text: str


def judge(links: list[Link]) -> Verdict | None:
    """Compare the layers; None when the evidence lacks the uplink or anything to compare it with."""
    up = [link for link in links if link.up and link.name != "lo"]
    uplinks = [link for link in up if link.kind == "physical"]
    tunnels = [link for link in up if link.kind in OVERHEAD]
    pods = [link for link in up if link.kind in ("veth", "bridge")]
    if not uplinks or not (tunnels or pods):
        return None
    by_name = {link.name: link for link in uplinks}
    widest = max(uplinks, key=lambda link: link.mtu)  # the tunnel's uplink when it does not say: fewest false alarms
    for tunnel in tunnels:
        uplink = by_name.get(tunnel.dev, widest)
        if tunnel.mtu + OVERHEAD[tunnel.kind] > uplink.mtu:
            return Verdict(True, (min(tunnel.line, uplink.line), max(tunnel.line, uplink.line)),
                           f"{tunnel.name} ({tunnel.kind}) mtu {tunnel.mtu} + {OVERHEAD[tunnel.kind]} > "
                           f"{uplink.name} mtu {uplink.mtu}")
    ceiling = min(tunnels, key=lambda link: link.mtu) if tunnels else widest
    for pod in pods:
        if pod.mtu > ceiling.mtu:
            return Verdict(True, (min(pod.line, ceiling.line), max(pod.line, ceiling.line)),
                           f"{pod.name} mtu {pod.mtu} > {ceiling.name} mtu {ceiling.mtu}")
    first, last = min(link.line for link in up), max(link.line for link in up)
    return Verdict(False, (first, last), f"every tunnel fits its uplink ({widest.name} mtu {widest.mtu}) and no pod "
                                         f"interface exceeds {ceiling.name} mtu {ceiling.mtu}")


def parse(artifact: Artifact) -> ParseResult:
    """Each interface's MTU, and whether the layers of the node's path agree."""
    text = normalise(artifact.content[:8 * 1024 * 1024])
    lines = text.split("\n")
    sink = FactSink(artifact, lines)
    links = _links(text, lines, sink)
    for link in links:
        if link.up and link.name != "lo":
            sink.add("net.mtus", [f"{link.name}={link.mtu}"], link.line)
    if (verdict := judge(links)) is not None:
        sink.add("net.mtu_mismatch", verdict.mismatch, verdict.lines[0], verdict.lines[1], text=verdict.text)
    return sink.done()


def _links(text: str, lines: list[str], sink: FactSink) -> list[Link]:
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except (ValueError, RecursionError) as err:  # RecursionError: nesting deeper than the decoder goes
            sink.problem(f"network interfaces answer is not JSON: {err}")
            return []
        if not isinstance(doc, dict) or doc.get("available") is not True:
            reason = doc.get("error") if isinstance(doc, dict) else None
            sink.problem(f"network interfaces unavailable: {reason or 'no reason given'}")
            return []
        return _from_json(doc, lines)
    return _from_text(lines)


def sniff(text: str) -> int:
    """0-100 confidence that the text lists network interfaces (ip link, ifconfig, the agent's JSON)."""
    head = text[:200_000]
    if head.lstrip().startswith("{") and SCHEMA_PREFIX in head[:2000]:
        return 95
    lines = normalise(head).split("\n")[:2000]
    hits = sum(1 for line in lines if (" mtu " in line or "  mtu " in line) and (_IP_LINK.match(line)
                                                                                 or _IFCONFIG.match(line)))
    return 0 if hits == 0 else min(85, 50 + 10 * hits)


PARSER = Parser(kinds=(ArtifactKind.NET_LINKS,), parse=parse, sniff=sniff)
