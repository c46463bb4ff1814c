"""The node agent over real HTTP (uvicorn on 127.0.0.1), reading fixture /proc, cgroup and kmsg trees.

One agent serves the module: a node whose kernel log holds an Xid 79, a memcg OOM kill and conntrack
overflow, whose conntrack table is nearly full with drops, and with one throttled pod. This machine has
no GPU, so NVML is genuinely unavailable. The client source is then run end to end against it, with a
second node whose agent is down and a third with no address.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import uvicorn

from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.live.agent import collect_agent
from collectors.live.base import NodeRef, PodRef, Scope, Window
from collectors.models import Artifact, ArtifactKind, Fact, Missing
from collectors.parsers.node import conntrack, cpu_stat, kernel
from collectors.parsers.registry import parse_artifact

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent"
TOKEN = "agent-token-0123456789abcdef"
UID = "6f1c2d3e-4b5a-4c6d-8e7f-90a1b2c3d4e5"
UPTIME = 10000.0  # the fixture's /proc/uptime: kmsg usec are seconds after now - UPTIME


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@dataclass
class Agent:
    url: str
    settings: AgentSettings

    def get(self, path: str, token: str | None = TOKEN, **params: str) -> httpx.Response:
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        return httpx.get(self.url + path, params=params, headers=headers, timeout=10, trust_env=False)


@pytest.fixture(scope="module")
def agent(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Agent]:
    tmp = tmp_path_factory.mktemp("agent")
    # The node's interfaces: a 1500-byte uplink carrying a VXLAN device also left at 1500 (no room for its header).
    for name, mtu, physical in (("eth0", 1500, True), ("flannel.1", 1500, False), ("lo", 65536, False)):
        link = tmp / "sys" / "class" / "net" / name
        link.mkdir(parents=True)
        (link / "mtu").write_text(f"{mtu}\n", encoding="ascii")
        (link / "operstate").write_text("up\n" if physical else "unknown\n", encoding="ascii")
        (link / "uevent").write_text(f"INTERFACE={name}\n" + ("" if physical or name == "lo" else "DEVTYPE=vxlan\n"),
                                     encoding="ascii")
        if physical:
            (link / "device").mkdir()
    sandboxes = tmp / "sandboxes"  # where the DaemonSet would mount containerd's sandbox directories
    (sandboxes / "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9" / "shm").mkdir(parents=True)
    settings = AgentSettings(
        token=TOKEN, host="127.0.0.1", port=free_port(), node_name="gpu-node-2",  # type: ignore[arg-type]
        shm_roots={"/run/containerd/io.containerd.grpc.v1.cri/sandboxes": sandboxes},
        proc_root=FIXTURES / "proc", sys_root=tmp / "sys", cgroup_root=FIXTURES / "cgroup",
        kmsg_path=FIXTURES / "kmsg", pod_resources_socket=tmp / "kubelet.sock",
        container_bundle_dirs=[str(FIXTURES / "run/containerd/io.containerd.runtime.v2.task/k8s.io/{id}")],
        max_response_bytes=64 * 1024)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host=settings.host, port=settings.port,
                                           log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name="agent", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail("the agent did not start within 10 s")
        time.sleep(0.02)
    try:
        yield Agent(f"http://127.0.0.1:{settings.port}", settings)
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def facts(parse_result_facts: list[Fact]) -> dict[str, object]:
    return {f.name: f.value for f in parse_result_facts}


# ---- authentication and bad input ---------------------------------------------------------------------


def test_healthz_needs_no_token(agent: Agent) -> None:
    response = agent.get("/healthz", token=None)
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "node": "gpu-node-2"}


@pytest.mark.parametrize("path", ["/v1/kernel-log", "/v1/conntrack", "/v1/cpu-stat", "/v1/nvml", "/v1/nope"])
@pytest.mark.parametrize("token", [None, "wrong-token-0123456789abcdef", TOKEN[:-1], TOKEN + "x", TOKEN.upper()])
def test_requests_without_the_right_token_are_401(agent: Agent, path: str, token: str | None) -> None:
    response = agent.get(path, token=token)
    assert response.status_code == 401
    assert response.json() == {"error": "missing or wrong bearer token",
                                "expected": "Authorization: Bearer <agent token>"}
    assert response.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", [f"Basic {TOKEN}", TOKEN, "Bearer", f"Bearer{TOKEN}"])
def test_other_schemes_and_shapes_are_401(agent: Agent, header: str) -> None:
    response = httpx.get(agent.url + "/v1/conntrack", headers={"Authorization": header}, trust_env=False)
    assert response.status_code == 401


def test_scheme_is_case_insensitive(agent: Agent) -> None:
    response = httpx.get(agent.url + "/v1/conntrack", headers={"Authorization": f"bearer {TOKEN}"}, trust_env=False)
    assert response.status_code == 200


def test_bad_since_is_a_400_json_error(agent: Agent) -> None:
    response = agent.get("/v1/kernel-log", since="yesterday")
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "cannot read since='yesterday'"
    assert "RFC 3339" in body["expected"] and "30m" in body["expected"]


@pytest.mark.parametrize("uid", ["../../etc", "..%2F..%2Fetc", f"{UID}/../../..", "/etc/passwd"])
def test_path_like_pod_uid_is_a_400(agent: Agent, uid: str) -> None:
    response = agent.get("/v1/cpu-stat", pod_uid=uid)
    assert response.status_code == 400
    assert "is not a pod UID" in response.json()["error"]
    assert response.json()["expected"].startswith("a pod UID")


def test_unknown_container_is_a_404_listing_the_containers(agent: Agent) -> None:
    response = agent.get("/v1/cpu-stat", pod_uid=UID, container="sidecar")
    assert response.status_code == 404
    assert response.json() == {"error": f"container 'sidecar' not found in pod {UID}",
                               "expected": "one of the pod's containers: app"}


def test_pod_not_on_the_node_is_a_404(agent: Agent) -> None:
    response = agent.get("/v1/cpu-stat", pod_uid="00000000-0000-4000-8000-000000000000")
    assert response.status_code == 404
    assert "not running on this node" in response.json()["error"]


def test_unknown_parameter_and_unknown_path_and_method(agent: Agent) -> None:
    response = agent.get("/v1/conntrack", verbose="1")
    assert (response.status_code, response.json()["expected"]) == (400, "parameters: max_bytes")
    missing = agent.get("/v1/nope")
    assert missing.status_code == 404 and "/v1/kernel-log" in missing.json()["expected"]
    post = httpx.post(agent.url + "/v1/conntrack", headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False)
    assert post.status_code == 405 and post.json()["error"] == "Method Not Allowed"


# ---- the evidence -------------------------------------------------------------------------------------


def test_kernel_log_since_a_duration(agent: Agent) -> None:
    response = agent.get("/v1/kernel-log", since="30m")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    assert response.headers["x-triagebot-source"] == "kmsg"
    assert response.headers["x-triagebot-truncated"] == "false"
    lines = response.text.splitlines()
    # Records from uptime 8200 s on: the Xid (with its dictionary lines), the OOM kill, the last table-full.
    assert lines[0] == "4,1201,9000000000,-;NVRM: Xid (PCI:0000:18:00): 79, pid=0, name=python, " \
                       "GPU has fallen off the bus."
    assert lines[1:3] == [" SUBSYSTEM=pci", " DEVICE=+pci:0000:18:00.0"]
    assert len([ln for ln in lines if not ln.startswith(" ")]) == 6
    assert "Linux version" not in response.text and ",8000000000," not in response.text
    found = facts(kernel.parse(_artifact(ArtifactKind.KERNEL_LOG, response.text)).facts)
    assert found["xid.codes"] == [79]
    assert found["gpu.fallen_off_bus"] is True
    assert found["kernel.oom_memcg"] is True
    assert found["conntrack.table_full"] is True


def test_kernel_log_since_an_absolute_time(agent: Agent) -> None:
    boot = datetime.fromisoformat(agent.get("/v1/kernel-log", since="1m").headers["x-triagebot-boot-time"])
    assert abs((datetime.now(UTC) - boot).total_seconds() - UPTIME) < 60
    since = boot + timedelta(seconds=9400)  # between the Xid (9000 s) and the OOM kill (9500 s)
    text = agent.get("/v1/kernel-log", since=since.isoformat().replace("+00:00", "Z")).text
    assert "Xid" not in text
    assert text.startswith("4,1230,9500000000,-;python invoked oom-killer")


def test_kernel_log_is_bounded(agent: Agent) -> None:
    response = agent.get("/v1/kernel-log", since="7d", max_bytes="600")
    assert response.status_code == 200
    assert len(response.content) <= 600
    # The newest records are kept (the agent streams the log and holds only the tail); the cut is said up front.
    assert response.text.startswith("… ") and "older records left out to fit max_bytes=600" in response.text
    assert response.headers["x-triagebot-truncated"] == "true"
    assert int(response.headers["x-triagebot-dropped-bytes"]) > 0
    assert response.text.endswith("nf_conntrack: table full, dropping packet\n")
    assert "Linux version" not in response.text
    too_big = agent.get("/v1/kernel-log", max_bytes=str(10 * 1024 * 1024))
    assert too_big.status_code == 400
    assert too_big.json()["expected"] == "an integer number of bytes from 256 to 65536"


def test_conntrack_text_gives_drops_and_usage(agent: Agent) -> None:
    response = agent.get("/v1/conntrack")
    assert response.status_code == 200
    text = response.text
    assert text.startswith("net.netfilter.nf_conntrack_count = 261990\nnet.netfilter.nf_conntrack_max = 262144\n")
    assert conntrack.sniff(text) >= 90
    result = conntrack.parse(_artifact(ArtifactKind.CONNTRACK_STATS, text))
    assert result.problems == []
    found = facts(result.facts)
    assert found["conntrack.drops"] == (0x31 + 0x31 + 0x4) + (0xa + 0xa + 0x2) + 0 + (0x1 + 0x1)
    assert found["conntrack.usage_ratio"] == 0.9994


def test_cpu_stat_of_a_container_gives_the_throttled_ratio(agent: Agent) -> None:
    response = agent.get("/v1/cpu-stat", pod_uid=UID, container="app")
    assert response.status_code == 200
    assert response.headers["x-triagebot-cgroup-version"] == "v2"
    assert response.headers["x-triagebot-cgroup"].startswith(
        "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod6f1c2d3e_4b5a_4c6d_8e7f_90a1b2c3d4e5.slice/"
        "cri-containerd-")
    assert cpu_stat.sniff(response.text) >= 90
    assert facts(cpu_stat.parse(_artifact(ArtifactKind.CPU_STAT, response.text)).facts)["cpu.throttled_ratio"] == 0.42


def test_nvml_is_unavailable_on_this_gpu_less_machine(agent: Agent) -> None:
    response = agent.get("/v1/nvml")
    assert response.status_code == 200
    body = response.json()
    assert body["available"] is False
    assert body["error"] == "NVML Shared Library Not Found"
    assert body["nvidia_pci_devices"] == []
    assert body["schema"] == "triagebot.nvml/v1" and body["node"] == "gpu-node-2"


def test_the_agent_serves_concurrent_requests(agent: Agent) -> None:
    with httpx.Client(base_url=agent.url, headers={"Authorization": f"Bearer {TOKEN}"}, trust_env=False) as client:

        def one(index: int) -> int:
            path = ("/v1/kernel-log", "/v1/conntrack", "/v1/nvml")[index % 3]
            return client.get(path).status_code

        with ThreadPoolExecutor(max_workers=8) as pool:
            assert set(pool.map(one, range(48))) == {200}


def _artifact(kind: ArtifactKind, text: str) -> Artifact:
    return Artifact(id="a", kind=kind, content=text)


# ---- the client source, end to end --------------------------------------------------------------------


def _scope() -> Scope:
    return Scope(
        namespace="shop", service="checkout",
        pods=[
            PodRef(name="checkout-7d9f8b6c5-x2k4q", uid=UID, node="gpu-node-2", phase="Running",
                   containers=["app", "sidecar"], gpu_request=1),
            PodRef(name="checkout-7d9f8b6c5-pending", uid="11111111-2222-4333-8444-555555555555",
                   node="gpu-node-2", phase="Pending", containers=["app"]),
            PodRef(name="checkout-7d9f8b6c5-zz9", uid="", node="gpu-node-3", phase="Running", containers=["app"]),
        ],
        nodes=[NodeRef(name="gpu-node-2", internal_ip="127.0.0.1", gpu_capacity=8),
               NodeRef(name="gpu-node-3", internal_ip="10.0.0.3", gpu_capacity=8),
               NodeRef(name="cpu-node-9", internal_ip=None)])


def test_collect_agent_end_to_end(agent: Agent) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    urls = {"gpu-node-2": agent.url, "gpu-node-3": dead, "cpu-node-9": None}
    now = datetime.now(UTC)
    window = Window.last(timedelta(minutes=30), now)
    result = collect_agent(lambda node: urls[node.name], TOKEN, _scope(), window, timeout=2.0)

    by_id = {a.id: a for a in result.artifacts}
    assert sorted(by_id) == ["agent-gpu-node-2-conntrack.txt", "agent-gpu-node-2-cpu-checkout-7d9f8b6c5-x2k4q-app.txt",
                             "agent-gpu-node-2-kernel.log", "agent-gpu-node-2-net-links.json",
                             "agent-gpu-node-2-nvml.json", "agent-gpu-node-2-shm-checkout-7d9f8b6c5-x2k4q.json"]
    shm = by_id["agent-gpu-node-2-shm-checkout-7d9f8b6c5-x2k4q.json"]
    assert (shm.kind, shm.subject) == (ArtifactKind.DF, "pod/shop/checkout-7d9f8b6c5-x2k4q")
    assert shm.command == ("kubectl exec -n shop checkout-7d9f8b6c5-x2k4q -- df -h /dev/shm  "
                           "# from the agent on node gpu-node-2")
    assert by_id["agent-gpu-node-2-net-links.json"].command == "ip -d link  # on node gpu-node-2"
    kernel_log = by_id["agent-gpu-node-2-kernel.log"]
    assert (kernel_log.kind, kernel_log.subject, kernel_log.source) == (ArtifactKind.KERNEL_LOG, "node/gpu-node-2",
                                                                       "agent")
    assert kernel_log.command.startswith("journalctl -k --no-pager --since '")
    assert kernel_log.command.endswith(" UTC'  # on node gpu-node-2")
    assert kernel_log.captured_at is not None
    cpu = by_id["agent-gpu-node-2-cpu-checkout-7d9f8b6c5-x2k4q-app.txt"]
    assert cpu.subject == "pod/shop/checkout-7d9f8b6c5-x2k4q"
    assert cpu.command.startswith("cat /sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/")
    assert cpu.command.endswith(".scope/cpu.stat  # on node gpu-node-2")
    assert by_id["agent-gpu-node-2-conntrack.txt"].command.startswith("conntrack -S")
    assert by_id["agent-gpu-node-2-nvml.json"].command == "nvidia-smi -q  # on node gpu-node-2"

    parsed = {f.name: f.value for a in result.artifacts for f in parse_artifact(a).facts}
    assert parsed["xid.codes"] == [79]
    assert parsed["conntrack.drops"] == 126
    assert parsed["cpu.throttled_ratio"] == 0.42
    assert parsed["net.mtu_mismatch"] is True
    assert isinstance(parsed["pod.shm_size_bytes"], int) and 0 <= float(parsed["pod.shm_used_ratio"]) <= 1
    assert [v for a in result.artifacts for f in parse_artifact(a).facts if f.name == "net.mtus" for v in f.value] == [
        "eth0=1500", "flannel.1=1500"]

    missing = {(m.source, m.reason) for m in result.missing}
    assert ("agent:node/gpu-node-2", "NVML unavailable on node gpu-node-2: NVML Shared Library Not Found") in missing
    assert ("agent:node/cpu-node-9", "no agent address for the node") in missing
    sidecar = [m for m in result.missing if "sidecar" in m.reason]
    assert [m.source for m in sidecar] == ["agent:node/gpu-node-2"]
    assert "HTTP 404: container 'sidecar' not found" in sidecar[0].reason
    down = [m for m in result.missing if m.source == "agent:node/gpu-node-3"]
    assert len(down) == 1 and "unreachable" in down[0].reason  # one entry: the other calls were skipped
    assert not any("pending" in m.reason for m in result.missing)  # a Pending pod has no cgroup to read
    assert TOKEN not in json.dumps([m.model_dump() for m in result.missing])


def test_collect_agent_with_a_wrong_token_is_one_missing_entry(agent: Agent) -> None:
    scope = Scope(namespace="shop", nodes=[NodeRef(name="gpu-node-2")],
                  pods=[PodRef(name="p", uid=UID, node="gpu-node-2", containers=["app"])])
    window = Window.last(timedelta(minutes=5), datetime.now(UTC))
    result = collect_agent(lambda node: agent.url, "not-the-token-0123456789", scope, window)
    assert result.artifacts == []
    assert result.missing == [Missing(source="agent:node/gpu-node-2",
                                      reason=f"agent at {agent.url} refused the token (HTTP 401)")]


def test_collect_agent_timeout_is_one_missing_entry() -> None:
    """A listener that accepts and never answers: the node costs one timeout."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        scope = Scope(namespace="shop", nodes=[NodeRef(name="slow-node", gpu_capacity=8)])
        window = Window.last(timedelta(minutes=5), datetime.now(UTC))
        started = time.monotonic()
        result = collect_agent(lambda node: url, TOKEN, scope, window, timeout=0.5)
        assert time.monotonic() - started < 3
    assert result.artifacts == []
    assert result.missing == [Missing(source="agent:node/slow-node", reason=f"agent at {url} timed out after 0.5s")]


def test_collect_agent_long_windows_are_clamped_to_what_the_agent_serves(agent: Agent) -> None:
    scope = Scope(namespace="shop", nodes=[NodeRef(name="gpu-node-2")])
    window = Window.last(timedelta(days=30), datetime.now(UTC))
    result = collect_agent(lambda node: agent.url, TOKEN, scope, window)
    assert [a.kind for a in result.artifacts] == [ArtifactKind.KERNEL_LOG, ArtifactKind.CONNTRACK_STATS,
                                                  ArtifactKind.NET_LINKS]
    assert result.missing == []


def test_collect_agent_takes_a_naive_window_as_utc(agent: Agent) -> None:
    scope = Scope(namespace="shop", nodes=[NodeRef(name="gpu-node-2")])
    now = datetime.now(UTC).replace(tzinfo=None)
    result = collect_agent(lambda node: agent.url, TOKEN, scope, Window.last(timedelta(minutes=30), now))
    assert result.missing == []
    assert "Xid (PCI:0000:18:00): 79" in result.artifacts[0].content
