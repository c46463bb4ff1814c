"""/v1/net-links: the node's interfaces and MTUs from sysfs, read back by the net-links parser."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.agent.netif import interfaces
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.node import net_links

TOKEN = "k" * 24


def _sysfs(root: Path, links: dict[str, tuple[int, str, bool, str]]) -> Path:
    """A /sys/class/net tree: name -> (mtu, operstate, backed by a device, DEVTYPE)."""
    for name, (mtu, state, physical, devtype) in links.items():
        d = root / "class" / "net" / name
        d.mkdir(parents=True)
        (d / "mtu").write_text(f"{mtu}\n", encoding="ascii")
        (d / "operstate").write_text(f"{state}\n", encoding="ascii")
        (d / "uevent").write_text(f"INTERFACE={name}\nIFINDEX=3\n" + (f"DEVTYPE={devtype}\n" if devtype else ""),
                                  encoding="ascii")
        if physical:
            (d / "device").mkdir()
    return root


# An OpenStack VM: the tenant network leaves 1450 bytes, and the overlay was left at 1450 too.
OPENSTACK = {"lo": (65536, "unknown", False, ""), "ens3": (1450, "up", True, ""),
             "flannel.1": (1450, "unknown", False, "vxlan"), "cni0": (1450, "up", False, "bridge"),
             "veth1a2b3c4d": (1450, "up", False, "")}


def test_interfaces_are_read_from_sysfs(tmp_path: Path) -> None:
    doc = interfaces(_sysfs(tmp_path, OPENSTACK), "gpu-node-3")
    assert doc["available"] is True and doc["node"] == "gpu-node-3" and doc["schema"] == "triagebot.netlinks/v1"
    by_name = {i["name"]: i for i in doc["interfaces"]}
    assert by_name["ens3"] == {"name": "ens3", "mtu": 1450, "operstate": "up", "physical": True}
    assert by_name["flannel.1"]["devtype"] == "vxlan" and by_name["flannel.1"]["physical"] is False


def test_no_sysfs_says_why(tmp_path: Path) -> None:
    doc = interfaces(tmp_path / "missing")
    assert doc["available"] is False and "cannot list" in doc["error"]


def _get(settings: AgentSettings, path: str) -> httpx.Response:
    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=create_app(settings))
        async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
            return await client.get(path, headers={"Authorization": f"Bearer {TOKEN}"})

    return asyncio.run(call())


def test_the_endpoint_serves_what_the_parser_reads(tmp_path: Path) -> None:
    settings = AgentSettings(token=TOKEN, node_name="gpu-node-3", sys_root=_sysfs(tmp_path, OPENSTACK),  # type: ignore[arg-type]
                             xid_watch=False)
    response = _get(settings, "/v1/net-links")
    assert response.status_code == 200 and response.headers["content-type"] == "application/json"
    result = net_links.parse(Artifact(id="n", kind=ArtifactKind.NET_LINKS, content=response.text))
    facts = {f.name: f for f in result.facts}
    assert result.problems == []
    assert facts["net.mtu_mismatch"].value is True  # 1450 + 50 bytes of VXLAN do not fit in 1450
    assert "flannel.1 (vxlan) mtu 1450 + 50 > ens3 mtu 1450" in facts["net.mtu_mismatch"].excerpt
    assert _get(settings, "/v1/net-links?max_bytes=x").status_code == 400
