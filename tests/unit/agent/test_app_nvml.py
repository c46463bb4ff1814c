"""/v1/nvml on a GPU node (a recorded fake of pynvml): devices, kernel and NVML Xids mapped to pods."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from starlette.applications import Starlette

from collectors.agent import app as agent_app
from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.agent.nvml import XidWatcher
from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nvml as nvml_parser
from tests.unit.agent.fake_nvml import FakeNvml, h100_node

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "agent"
TOKEN = "k" * 24
AUTH = {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> FakeNvml:
    gpus = FakeNvml(h100_node(lost=0))
    monkeypatch.setattr(agent_app, "load_nvml", lambda: gpus)
    return gpus


class Client:
    """Requests straight into the ASGI app (no socket): the HTTP behaviour is covered in integration."""

    def __init__(self, app: Starlette, watcher: XidWatcher) -> None:
        self.app = app
        self.watcher = watcher

    def get(self, path: str, params: dict[str, str] | None = None,
            headers: dict[str, str] | None = None) -> httpx.Response:
        async def call() -> httpx.Response:
            transport = httpx.ASGITransport(app=self.app)
            async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
                return await client.get(path, params=params, headers=headers)

        return asyncio.run(call())


@pytest.fixture
def client(fake: FakeNvml, tmp_path: Path) -> Iterator[Client]:
    settings = AgentSettings(
        token=TOKEN, node_name="gpu-node-4", proc_root=FIXTURES / "proc", kmsg_path=FIXTURES / "kmsg",  # type: ignore[arg-type]
        sys_root=tmp_path, pod_resources_json=FIXTURES / "pod-resources.json", xid_watch=False)
    watcher = XidWatcher(fake, wait_ms=20)
    assert watcher.start()
    try:
        yield Client(create_app(settings, watcher=watcher), watcher)
    finally:
        watcher.stop()


def test_snapshot_maps_kernel_and_nvml_xids_to_pods(client: Client, fake: FakeNvml) -> None:
    fake.emit_xid(1, 48)
    deadline = time.monotonic() + 5
    while not client.watcher.events(datetime.now(UTC) - timedelta(minutes=1)):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    response = client.get("/v1/nvml", params={"since": "1h"}, headers=AUTH)
    assert response.status_code == 200
    doc = response.json()
    assert doc["available"] is True and doc["node"] == "gpu-node-4"
    assert doc["devices"][0]["lost"] is True
    assert doc["devices"][0]["pods"] == ["ml/trainer-3/trainer"]
    assert doc["pod_resources"]["available"] is True
    events = [(e["source"], e["xid"], e.get("uuid"), e["pods"]) for e in doc["xid_events"]]
    assert events == [
        ("kernel", 79, "GPU-9d3b1a52-6f0e-3c4e-8d2b-7e1f0a9c4b21", ["ml/trainer-3/trainer"]),
        ("nvml-event", 48, "GPU-4c1f8a2e-7b3d-5e9f-a1c2-d3e4f5a6b7c8", ["ml/trainer-3/trainer"]),
    ]
    facts = nvml_parser.parse(Artifact(id="n", kind=ArtifactKind.NVML, content=response.text)).facts
    found: dict[str, list[object]] = {}
    for fact in facts:
        found.setdefault(fact.name, []).append(fact.value)
    assert found["gpu.fallen_off_bus"] == [True]
    assert found["xid.codes"] == [[79], [48]]
    assert found["xid.pci_bus_ids"] == [["0000:18:00"], ["0000:2a:00"]]


def test_a_budget_too_small_for_the_devices_says_what_would_fit(client: Client) -> None:
    response = client.get("/v1/nvml", params={"since": "1h", "max_bytes": "4096"}, headers=AUTH)
    assert response.status_code == 400
    assert response.json()["error"] == "max_bytes=4096 is too small for this answer"
    needed = response.json()["expected"].rsplit(" ", 1)[1]
    fits = client.get("/v1/nvml", params={"since": "1h", "max_bytes": needed}, headers=AUTH)
    assert fits.status_code == 200 and len(fits.content) <= int(needed)
    assert fits.json()["truncated"] == {"xid_events": 1, "limit_bytes": int(needed)}


def test_no_token_no_snapshot(client: Client) -> None:
    assert client.get("/v1/nvml").status_code == 401
