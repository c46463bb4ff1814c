"""Interfaces and MTUs (ip link, ifconfig, the agent's JSON) -> net.mtus and net.mtu_mismatch."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import net_links

REALWORLD = Path(__file__).resolve().parents[2] / "realworld" / "latency"


def facts(text: str) -> dict[str, tuple[object, int, int]]:
    result = net_links.parse(Artifact(id="n", kind=ArtifactKind.NET_LINKS, content=text))
    assert result.problems == []
    out: dict[str, tuple[object, int, int]] = {}
    for f in result.facts:
        if f.name == "net.mtus":
            previous = out.get(f.name, ([], 0, 0))[0]
            assert isinstance(previous, list)
            out[f.name] = ([*previous, *f.value], 0, 0)
        else:
            out[f.name] = (f.value, f.citation.start, f.citation.end)
    return out


def test_ip_d_link_from_flannel_841() -> None:
    # https://github.com/flannel-io/flannel/issues/841: VXLAN at 1500 on a 9001 uplink: low, but it fits.
    got = facts((REALWORLD / "flannel-841-aws-vxlan-1500-on-9001-not-a-mismatch" / "evidence.txt").read_text())
    assert got["net.mtus"][0] == ["flannel.1=1500", "eth0=9001"]
    assert got["net.mtu_mismatch"] == (False, 3, 7)


def test_ifconfig_from_flannel_1775() -> None:
    # https://github.com/flannel-io/flannel/issues/1775: flannel's defaults; docker0 is up but not running.
    got = facts((REALWORLD / "flannel-1775-ifconfig-vxlan-1450-consistent" / "evidence.txt").read_text())
    mtus = got["net.mtus"][0]
    assert isinstance(mtus, list)
    assert "ens160=1500" in mtus and "flannel.1=1450" in mtus and not [m for m in mtus if m.startswith("docker0")]
    assert got["net.mtu_mismatch"][0] is False


# Constructed `ip -o link` lines (the shapes of the two pastes above), one per rule of the check.
CASES = [
    ("vxlan-with-no-room-on-the-uplink",
     "2: ens3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc mq state UP\n"
     "5: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN\n", True),
    ("wireguard-needs-sixty",
     "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n"
     "7: cilium_wg0: <POINTOPOINT,NOARP,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN\n", True),
    ("pods-wider-than-the-tunnel",
     "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n"
     "4: tunl0@NONE: <NOARP,UP,LOWER_UP> mtu 1480 qdisc noqueue state UNKNOWN\n"
     "9: cali4b1c2d3e4f5@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP\n", True),
    ("jumbo-pods-on-a-plain-uplink-without-a-tunnel",
     "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n"
     "9: lxc12ab34cd@if8: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 9000 qdisc noqueue state UP\n", True),
    ("ipip-with-room",
     "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n"
     "4: tunl0@NONE: <NOARP,UP,LOWER_UP> mtu 1480 qdisc noqueue state UNKNOWN\n"
     "9: cali4b1c2d3e4f5@if3: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1480 qdisc noqueue state UP\n", False),
    ("a-tunnel-that-is-down-does-not-count",
     "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n"
     "5: flannel.1: <BROADCAST,MULTICAST> mtu 1500 qdisc noqueue state DOWN\n"
     "9: veth0a1b2c3d@if2: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP\n", False),
]


@pytest.mark.parametrize(("text", "mismatch"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_layers_are_compared(text: str, mismatch: bool) -> None:
    assert facts(text)["net.mtu_mismatch"][0] is mismatch


@pytest.mark.parametrize("text", [
    "2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc mq state UP\n",  # one side only
    "3: eth0@if12: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UP\n",  # a pod's own view
    "nothing here\n",
])
def test_one_side_of_the_path_decides_nothing(text: str) -> None:
    assert "net.mtu_mismatch" not in facts(text)


def test_unavailable_agent_answer_is_a_problem_not_a_fact() -> None:
    result = net_links.parse(Artifact(id="n", kind=ArtifactKind.NET_LINKS,
                                      content='{"schema": "triagebot.netlinks/v1", "available": false, '
                                              '"error": "cannot list /sys/class/net: Permission denied"}'))
    assert result.facts == [] and "Permission denied" in result.problems[0]


def test_sniff() -> None:
    pasted = (REALWORLD / "flannel-1775-ifconfig-vxlan-1450-consistent" / "evidence.txt").read_text()
    assert net_links.sniff(pasted) >= 50
    assert net_links.sniff("Name: checkout\nNamespace: shop\n") == 0
