"""Live triage against the Kubernetes stand-in, real Prometheus and a real node agent; record; replay.

A recording must replay to exactly the report the live triage gave: that is what makes drills honest.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml

from bot.runner.triage import run_triage
from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.live.collect import LiveAccess
from collectors.models import Target
from drills.recorded.incident import load_incident
from drills.recorded.record import write_incident
from drills.recorded.replay import replay
from tests.harness.openmetrics import History, per_second
from tests.harness.processes import finish
from tests.harness.prometheus import PromServer, free_port
from tests.standins.kube_api import Fault, KubeStandIn

ROOT = Path(__file__).resolve().parents[2]
K8S = ROOT / "tests" / "fixtures" / "live" / "k8s"
AGENT_FIXTURES = ROOT / "tests" / "fixtures" / "agent"
TOKEN = "agent-token-0123456789abcdef"
NOW = datetime.fromtimestamp(int(time.time()) // 30 * 30, UTC)


def objects(name: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all((K8S / name).read_text(encoding="utf-8")) if doc]


@pytest.fixture(scope="module")
def history() -> History:
    h = History(end=int(NOW.timestamp()), span=3600, step=30)
    for pod in ("checkout-7d9f8c6b5-abcde", "checkout-7d9f8c6b5-fghij"):
        labels = {"namespace": "shop", "pod": pod, "container": "app"}
        h.counter("container_cpu_cfs_periods", labels, per_second(10))
        h.counter("container_cpu_cfs_throttled_periods", labels, per_second(4))
        h.gauge("container_memory_working_set_bytes", labels, 300 * 2**20)
    return h


@pytest.fixture(scope="module")
def agent_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    tmp = tmp_path_factory.mktemp("agent")
    settings = AgentSettings(
        token=TOKEN, host="127.0.0.1", port=free_port(), node_name="node-a",  # type: ignore[arg-type]
        proc_root=AGENT_FIXTURES / "proc", sys_root=tmp / "sys", cgroup_root=AGENT_FIXTURES / "cgroup",
        kmsg_path=AGENT_FIXTURES / "kmsg", pod_resources_socket=tmp / "kubelet.sock")
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=settings.port,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "the agent did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{settings.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def test_live_record_replay_gives_the_same_report(tmp_path: Path, prom: PromServer, agent_url: str) -> None:
    with KubeStandIn(objects("shop.yaml"), now=NOW) as kube:
        # Every node's agent is this one loopback agent: fixture node IPs are never contacted.
        access = LiveAccess(kube=kube.api_client(), prometheus_url=prom.url, agent_url=lambda node: agent_url,
                            agent_token=TOKEN, call_timeout=5, deadline=60)
        target = Target(namespace="shop", service="checkout")
        live = run_triage(target, timedelta(hours=1), access, now=NOW)
    kinds = {a.kind for a in live.collected.result.artifacts}
    assert {"pod", "events", "prometheus-query", "kernel-log", "conntrack-stats"} <= {str(k) for k in kinds}
    assert live.report.facts["cpu.throttled_ratio"] == pytest.approx(0.4, abs=0.01)
    folder = write_incident(tmp_path / "checkout-recording", live.collected.result.artifacts, target,
                            live.captured_at, page="checkout is slow", title="recorded", missing=live.report.missing)
    replayed = replay(load_incident(folder))
    assert replayed.model_dump(mode="json") == live.report.model_dump(mode="json")


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    base = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "TRIAGEBOT_CACHE_DIR": "", "COLUMNS": "80"}
    return subprocess.Popen([sys.executable, "-m", "bot.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**base, **(env or {})})


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return finish(spawn(*args, env=env))


def test_missing_permissions_are_one_line_of_missing_evidence(tmp_path: Path) -> None:
    """A default install has no nodes/proxy: the report says which grant is missing, not a raw 403; and with
    kubelet_logs off it never asks (issue #13, point 10)."""
    forbidden = [Fault(r"/api/v1/nodes/[^/]+/proxy", 403)]
    with KubeStandIn(objects("shop.yaml"), faults=forbidden) as kube:
        kubeconfig = str(kube.kubeconfig(tmp_path / "kubeconfig"))
        asked = cli("triage", "checkout", "-n", "shop", "--kubeconfig", kubeconfig)
        proxied = [r for r in kube.requests if "/proxy/" in r.path]
        off = cli("triage", "checkout", "-n", "shop", "--kubeconfig", kubeconfig,
                  env={"TRIAGEBOT_KUBELET_LOGS": "false"})
        assert [r for r in kube.requests if "/proxy/" in r.path] == proxied  # the second triage never asked
    assert asked.returncode == 0, asked.stderr
    assert proxied and all(r.status == 403 for r in proxied)
    lines = asked.stdout.splitlines()
    block = lines[lines.index("Missing evidence") + 1:]
    said = " ".join(line.strip() for line in block)
    assert "not granted: get nodes/proxy (the kubelet-logs component grants it, or set kubelet_logs: false)" in said
    assert said.count("nodes/proxy") == 1  # one line, however many nodes were asked
    assert "403" not in asked.stdout and "system:serviceaccount" not in asked.stdout
    assert off.returncode == 0, off.stderr
    assert "kubernetes:kubelet-log: not read: kubelet_logs is off" in " ".join(off.stdout.split())


def test_cli_triage_record_replay(tmp_path: Path) -> None:
    with KubeStandIn(objects("shop.yaml")) as kube:
        kubeconfig = kube.kubeconfig(tmp_path / "kubeconfig")
        # Three independent commands, run at once.
        triage, record, missing = map(finish, [
            spawn("triage", "checkout", "-n", "shop", "--kubeconfig", str(kubeconfig), "--format", "json"),
            spawn("record", "checkout", "-n", "shop", "--kubeconfig", str(kubeconfig), "-o", str(tmp_path / "rec"),
                  "--page", "checkout errors"),
            spawn("triage", "checkuot", "-n", "shop", "--kubeconfig", str(kubeconfig))])
    assert triage.returncode == 0, triage.stderr
    assert record.returncode == 0, record.stderr
    assert "recorded" in record.stdout and "replay with: triagebot replay" in record.stdout
    live = json.loads(triage.stdout)
    replayed = cli("replay", str(tmp_path / "rec"), "--format", "json")
    assert replayed.returncode == 0, replayed.stderr
    again = json.loads(replayed.stdout)
    # Two live runs differ only in capture times; what was concluded is identical.
    for key in ("target", "symptoms", "findings", "facts", "missing"):
        assert again[key] == live[key], key
    assert [a["id"] for a in again["artifacts"]] == [a["id"] for a in live["artifacts"]]
    assert any(m["source"].startswith("prometheus") for m in live["missing"])
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        'triagebot: error: service "checkuot" not found in namespace "shop"; did you mean: checkout, checkout-api?']
