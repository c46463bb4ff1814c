"""Capture before the kill, end to end: the shipped NCCLJobStalled rule evaluated by real Prometheus on real
scraped series, real Alertmanager posting the webhook to the bot, the Kubernetes stand-in serving the job's
pods and every rank's log, and two real node agents serving the nodes' kernel logs. The bot must write a
recorded incident holding every rank's log tail, the pods, the kernel Xid lines and the DCGM series, and that
incident must replay (with `triagebot replay`) to the verdict the evidence gives.

The evidence is composed: the rank logs from real line formats (tests/harness/training_job.py), the Xid 79 line
in the shape the kernel prints it (as in tests/unit/playbooks/test_nccl_wavefront_report.py). Rank 3 never
enqueued collective #20418 and its node, gpu-node-1, lost a GPU off the bus: the straggler's node confirms
gpu-hardware. The rule's `for:` is cut from 3m to 2s so the test does not wait three minutes; its expression is
the shipped one, and promtool's unit tests (deploy/prometheus/rules_test.yml) hold the 3m.
"""

from __future__ import annotations

import copy
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml
from sqlalchemy import Engine, select

from bot.store.models import TriageRun
from collectors.agent.app import create_app
from collectors.agent.config import AgentSettings
from collectors.models import ArtifactKind
from drills.recorded.incident import load_incident
from tests.harness.alertmanager import GaugeExporter, start_alerting_prometheus, start_alertmanager
from tests.harness.bot_server import ROOT, WEBHOOK_TOKEN, bot_in_thread, bot_values, settings_from
from tests.harness.fixtures import sqlite_url
from tests.harness.processes import wait_until
from tests.harness.training_job import logs_for, node_name, nodes, pod_name, pytorchjob
from tests.standins.kube_api import KubeStandIn
from tests.standins.slack_api import SlackStandIn

__all__ = ["sqlite_url"]  # fixture, re-exported for pytest

NS = "ml-training"
JOB = "llama-ft"
RANKS = 4
PER_NODE = 2
STRAGGLER = 3  # llama-ft-worker-2, on gpu-node-1
AGENT_TOKEN = "agent-token-0123456789abcdef"
AGENT_FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "agent"
UPTIME = 10000.0  # the agent fixture's /proc/uptime: a kmsg record's usec counts from now - UPTIME
KMSG_QUIET = "6,1180,9900000000,-;IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n"
KMSG_XID = ("6,1180,9900000000,-;IPv6: ADDRCONF(NETDEV_CHANGE): eth0: link becomes ready\n"
            "4,2034,9910000000,-;NVRM: Xid (PCI:0000:3b:00): 79, pid=40103, name=python, GPU has fallen off the "
            "bus.\n")


def stalled_rule() -> dict[str, Any]:
    rules = yaml.safe_load((ROOT / "deploy" / "prometheus" / "rules.yml").read_text(encoding="utf-8"))
    rule = next(copy.deepcopy(r) for g in rules["groups"] for r in g["rules"] if r.get("alert") == "NCCLJobStalled")
    assert rule["for"] == "3m"
    rule["for"] = "2s"
    return {"groups": [{"name": "capture", "rules": [rule]}]}


def free_port_on(*hosts: str) -> int:
    """A port free on every one of the loopback addresses (the agents share one port, as in a DaemonSet)."""
    for _ in range(20):
        with socket.socket() as first:
            first.bind((hosts[0], 0))
            port: int = first.getsockname()[1]
            try:
                for host in hosts[1:]:
                    with socket.socket() as other:
                        other.bind((host, port))
            except OSError:
                continue
            return port
    raise RuntimeError("no port free on every loopback address")


@contextmanager
def node_agent(tmp: Path, host: str, port: int, node: str, kmsg: str) -> Iterator[None]:
    kmsg_path = tmp / f"kmsg-{node}"
    kmsg_path.write_text(kmsg, encoding="utf-8")
    settings = AgentSettings(
        token=AGENT_TOKEN, host=host, port=port, node_name=node,  # type: ignore[arg-type]
        proc_root=AGENT_FIXTURES / "proc", sys_root=tmp / "sys", cgroup_root=AGENT_FIXTURES / "cgroup",
        kmsg_path=kmsg_path, pod_resources_socket=tmp / "kubelet.sock", xid_watch=False)
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host=host, port=port, log_level="warning",
                                           lifespan="on"))
    thread = threading.Thread(target=server.run, name=f"agent-{node}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            pytest.fail(f"the node agent of {node} did not start")
        time.sleep(0.02)
    try:
        yield
    finally:
        server.should_exit = True
        thread.join(timeout=10)


def stored_report(engine: Engine) -> dict[str, Any] | None:
    with engine.connect() as conn:
        report = conn.execute(select(TriageRun.report).where(TriageRun.trigger == "alert")).scalar_one_or_none()
    return dict(report) if report else None


def captured(drills: Path) -> list[Path]:
    return sorted(p for p in drills.glob("capture-*") if (p / "incident.yaml").is_file()) if drills.is_dir() else []


def test_a_stalled_job_alert_captures_every_rank_and_replays_to_the_verdict(tmp_path: Path, sqlite_url: str) -> None:
    objects = [*pytorchjob(JOB, RANKS, ns=NS, per_node=PER_NODE), *nodes(RANKS, per_node=PER_NODE, addresses=True)]
    pods = {pod_name(JOB, r): node_name(r, PER_NODE) for r in range(RANKS)}
    uids = {o["metadata"]["name"]: o["metadata"]["uid"] for o in objects if o["kind"] == "Pod"}
    drills = tmp_path / "drills"
    port = free_port_on("127.0.0.1", "127.0.0.2")
    gpu = GaugeExporter("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).",
                        ("gpu", "UUID", "Hostname", "modelName", "namespace", "pod", "container"))
    owner = GaugeExporter("kube_pod_owner", "Information about the Pod's owner.",
                          ("namespace", "pod", "uid", "owner_kind", "owner_name", "owner_is_controller"))
    with SlackStandIn(channels=("C0ALERTS",)) as slack, \
            KubeStandIn(objects, pod_logs=logs_for(JOB, RANKS, STRAGGLER, ns=NS)) as kube, \
            gpu, owner, \
            node_agent(tmp_path, "127.0.0.1", port, "gpu-node-0", KMSG_QUIET), \
            node_agent(tmp_path, "127.0.0.2", port, "gpu-node-1", KMSG_XID):
        for pod, node in pods.items():
            labels = {"gpu": "0", "UUID": f"GPU-{uids[pod][-12:]}", "Hostname": node,
                      "modelName": "NVIDIA H100 80GB HBM3", "namespace": NS, "pod": pod, "container": "pytorch"}
            gpu.set(labels, 97)
            owner.set({"namespace": NS, "pod": pod, "uid": uids[pod], "owner_kind": "PyTorchJob",
                       "owner_name": JOB, "owner_is_controller": "true"}, 1)
        values = bot_values(slack_api_url=slack.api_url, database_url=sqlite_url, default_channel="C0ALERTS",
                            permissions={"channels": {"C0ALERTS": ["*"]}},
                            kubeconfig=kube.kubeconfig(tmp_path / "kubeconfig"), drills_dir=str(drills),
                            agent_token=AGENT_TOKEN, agent_url_template=f"http://{{node_ip}}:{port}",
                            call_timeout=5.0, deadline=40.0)
        root = tmp_path / "chain"
        with bot_in_thread(settings_from(values)) as bot, \
                start_alertmanager(root, f"{bot.url}/alertmanager", WEBHOOK_TOKEN,
                                   group_by=("alertname", "namespace", "job_name")) as am, \
                start_alerting_prometheus(root, rules=stalled_rule(), scrape=[gpu.target, owner.target],
                                          alertmanager=am) as prom:
            bot.ctx.settings.prometheus_url = prom.url
            prom.wait_scraped()
            # The rule wants the job to have worked before it went idle: wait until Prometheus holds a busy sample
            # of every rank, joined to its job as the rule joins it, instead of sleeping for a few scrapes.
            prom.wait_for(f'count(max_over_time(DCGM_FI_DEV_GPU_UTIL{{namespace="{NS}"}}[30m]) > 50) == {RANKS} '
                          f'and on() count(kube_pod_owner{{namespace="{NS}",owner_name="{JOB}"}}) == {RANKS}', 30,
                          "a busy sample of every rank and its owner")
            assert captured(drills) == []
            for pod, node in pods.items():  # every GPU of the job drops at once
                gpu.set({"gpu": "0", "UUID": f"GPU-{uids[pod][-12:]}", "Hostname": node,
                         "modelName": "NVIDIA H100 80GB HBM3", "namespace": NS, "pod": pod, "container": "pytorch"},
                        0)
            wait_until(lambda: bool(captured(drills)), 90, "the captured incident in the drills dir")
            wait_until(lambda: any("Evidence captured" in m.text for m in slack.messages["C0ALERTS"]), 30,
                       "the capture note in the alert's thread")
            wait_until(lambda: stored_report(bot.ctx.engine) is not None, 30, "the triage run in the database")
            live = stored_report(bot.ctx.engine)
            assert live is not None

    folders = captured(drills)
    assert len(folders) == 1 and folders[0].name.startswith(f"capture-{NS}-{JOB}-")
    incident = load_incident(folders[0])
    meta = incident.meta
    assert meta.page.startswith("NCCLJobStalled: ") and JOB in meta.page
    assert meta.target.service == f"job/{JOB}" and meta.target.namespace == NS
    assert meta.symptoms == ["nccl-hang"] and "captured" in meta.tags and meta.ground_truth is None
    by_kind: dict[ArtifactKind, list[Any]] = {}
    for art in incident.artifacts:
        by_kind.setdefault(art.kind, []).append(art)

    # Every rank's log tail, in one artifact, each line behind its pod.
    ranks = next(a for a in incident.artifacts if a.id.endswith("-ranks.log"))
    assert ranks.command.startswith(f"kubectl logs -n {NS} -l training.kubeflow.org/job-name={JOB} --prefix")
    for r in range(RANKS):
        assert f"[pod/{pod_name(JOB, r)}/pytorch] [rank{r}]:" in ranks.content
    # The pods, with the nodes they run on.
    pod_list = json.loads(by_kind[ArtifactKind.POD][0].content)
    assert {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pod_list["items"]} == pods
    # Each node's kernel log from its own agent: the Xid line on gpu-node-1 only.
    kernel = {a.subject: a.content for a in by_kind[ArtifactKind.KERNEL_LOG]}
    assert set(kernel) == {"node/gpu-node-0", "node/gpu-node-1"}
    assert "Xid" in kernel["node/gpu-node-1"] and "Xid" not in kernel["node/gpu-node-0"]
    # The DCGM series of the job's pods, as Prometheus answered.
    util = next(a for a in by_kind[ArtifactKind.PROMETHEUS_QUERY] if "DCGM_FI_DEV_GPU_UTIL" in a.command)
    assert all(f'"pod":"{pod}"' in util.content.replace(" ", "") for pod in pods)

    # `triagebot replay` on the folder gives the verdict the evidence gives: rank 3 never enqueued the collective
    # the others wait on, and its node lost a GPU (Xid 79), so the GPU fault on the straggler's node leads.
    done = subprocess.run([sys.executable, "-m", "bot.cli", "replay", str(folders[0]), "--format", "json"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["facts"]["nccl.suspect_ranks"] == [STRAGGLER]
    assert report["facts"]["nccl.suspect_pods"] == [pod_name(JOB, STRAGGLER)]
    assert report["facts"]["nccl.suspect_hosts"] == ["gpu-node-1"]
    hang = next(f for f in report["findings"] if f["playbook"] == "nccl-hang")
    statuses = {h["id"]: h["status"] for h in hang["hypotheses"]}
    assert statuses["gpu-hardware"] == "confirmed" and statuses["straggler-rank"] == "confirmed"
    assert (report["findings"][0]["playbook"], report["findings"][0]["hypotheses"][0]["id"]) == (
        "nccl-hang", "gpu-hardware")
    # ... which is the report on-call got from the live triage.
    assert leader(report) == leader(live)


def leader(report: dict[str, Any]) -> tuple[str, str, str]:
    lead = report["findings"][0]
    return lead["playbook"], lead["hypotheses"][0]["id"], lead["hypotheses"][0]["status"]
