"""Every alert the catalog maps to a playbook reaches the bot with the shipped Alertmanager route (issue 31, point 1).

The triagebot route of deploy/alertmanager/receiver-example.yml is generated from collectors/catalogs/alerts.yaml
(deploy/alertmanager/gen_routes.py). Checked with the real `amtool config routes test`: every name the catalog,
upstream_alerts.yaml and rules.yml know, with the labels it usually carries, is routed to triagebot exactly when
the catalog maps it to a playbook; the bot's own health alerts, Watchdog and InfoInhibitor never are.
"""

from __future__ import annotations

import subprocess
import sys
from fnmatch import fnmatchcase
from functools import cache
from importlib.util import module_from_spec, spec_from_file_location
from pathlib import Path
from types import ModuleType

import pytest

from collectors.catalogs.alert_map import AlertRule, load_rules, symptom_for
from tests.deploy.support import ALERTMANAGER, PROMETHEUS, REPO, amtool, load_yaml

RECEIVER = ALERTMANAGER / "receiver-example.yml"
UPSTREAM = REPO / "collectors" / "catalogs" / "upstream_alerts.yaml"


@cache
def _generator() -> ModuleType:
    spec = spec_from_file_location("gen_routes", ALERTMANAGER / "gen_routes.py")
    assert spec is not None and spec.loader is not None
    module = module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass resolves annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _known_names() -> set[str]:
    """Every alert name we know of: upstream's defaults, our own rules (any added later included), and the
    catalog's literal names. Patterns get a sample name each (`*` as a word), as users name their own alerts."""
    upstream = load_yaml(UPSTREAM)
    names = {n for source in upstream["sources"] for files in source["files"].values() for n in files}
    names |= {r["alert"] for g in load_yaml(PROMETHEUS / "rules.yml")["groups"] for r in g["rules"] if "alert" in r}
    for rule in load_rules():
        for pattern in rule.alerts:
            names.add(pattern.replace("*", "Job").replace("?", "X") if "*" in pattern or "?" in pattern else pattern)
    return names


# The labels an alert usually carries, by its exporter (kube-prometheus's rules keep the series' labels).
_KSM = {"job": "kube-state-metrics", "namespace": "ml-training", "container": "trainer",
        "pod": "trainer-0", "severity": "warning"}
_USUAL: list[tuple[str, dict[str, str]]] = [
    ("KubeQuota*", {"namespace": "ml-training", "resource": "requests.nvidia.com/gpu", "resourcequota": "gpus",
                    "job": "kube-state-metrics", "severity": "info"}),
    ("KubeHpaMaxedOut", {"namespace": "shop", "horizontalpodautoscaler": "web", "job": "kube-state-metrics",
                         "severity": "warning"}),
    ("KubeJob*", {"namespace": "ml-training", "job_name": "train-42", "job": "kube-state-metrics"}),
    ("KubeDeployment*", {"namespace": "shop", "deployment": "web", "job": "kube-state-metrics"}),
    ("KubeStatefulSet*", {"namespace": "shop", "statefulset": "db", "job": "kube-state-metrics"}),
    ("KubeContainerWaiting", {**_KSM, "reason": "CrashLoopBackOff"}),
    ("KubePod*", _KSM), ("CPUThrottlingHigh", _KSM),
    ("KubeNode*", {"node": "gpu-node-2", "job": "kube-state-metrics", "condition": "Ready", "status": "true"}),
    ("Kubelet*", {"node": "gpu-node-2", "instance": "10.0.0.12:10250", "job": "kubelet",
                  "metrics_path": "/metrics"}),
    ("Node*", {"instance": "10.0.0.12:9100", "job": "node-exporter", "device": "/dev/nvme0n1p1",
               "fstype": "ext4", "mountpoint": "/"}),
    ("TargetDown", {"job": "web", "namespace": "shop", "service": "web", "severity": "warning"}),
    ("GPU*", {"Hostname": "gpu-node-2", "gpu": "3", "UUID": "GPU-5f3a", "modelName": "NVIDIA A100-SXM4-80GB",
              "namespace": "ml-training", "pod": "trainer-0"}),
    ("NGINX*", {"ingress": "web", "exported_namespace": "shop", "namespace": "ingress-nginx"}),
]


def usual_labels(name: str) -> dict[str, str]:
    labels = next((dict(ls) for pattern, ls in _USUAL if fnmatchcase(name, pattern)),
                  {"namespace": "ml-training", "pod": "trainer-0", "severity": "warning"})
    return {"alertname": name, **labels}


def _receivers(labels: dict[str, str]) -> set[str]:
    argv = [amtool(), "config", "routes", "test", f"--config.file={RECEIVER}",
            *(f"{k}={v}" for k, v in labels.items())]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    return set(done.stdout.strip().split(","))


MAPPED = sorted(n for n in _known_names() if symptom_for(n, usual_labels(n)) is not None)
UNMAPPED = sorted(n for n in _known_names() if symptom_for(n, usual_labels(n)) is None)


def test_the_shipped_route_is_the_generated_one() -> None:
    gen = _generator()
    text = RECEIVER.read_text(encoding="utf-8")
    assert gen.replace_block(text, gen.render(load_rules())) == text, (
        "receiver-example.yml is out of date: run python deploy/alertmanager/gen_routes.py")
    assert gen.main(["--check"]) == 0


def test_the_names_the_issue_counts_are_all_there() -> None:
    # 38 mapped names in the issue's count (upstream's and ours); the patterns' samples come on top.
    assert len(MAPPED) >= 38
    for name in ("KubeHpaMaxedOut", "KubeQuotaExceeded", "NodeFilesystemSpaceFillingUp",
                 "NodeHighNumberConntrackEntriesUsed", "KubeNodeNotReady", "GPUXidError", "TrainingStalled"):
        assert name in MAPPED


@pytest.mark.parametrize("name", MAPPED)
def test_every_mapped_alert_reaches_triagebot_and_people(name: str) -> None:
    assert _receivers(usual_labels(name)) == {"triagebot", "default"}


@pytest.mark.parametrize("name", UNMAPPED)
def test_alerts_mapped_to_no_playbook_never_reach_triagebot(name: str) -> None:
    receivers = _receivers(usual_labels(name))
    assert "triagebot" not in receivers and "default" in receivers


@pytest.mark.parametrize("labels", [
    {"alertname": "TriagebotDown", "job": "triagebot", "namespace": "triagebot"},
    {"alertname": "TriagebotTriageSlow", "namespace": "triagebot"},  # "*Latency*"-like names must not slip in
    {"alertname": "Watchdog", "severity": "none"},
    {"alertname": "InfoInhibitor", "namespace": "shop", "severity": "none"},
    {"alertname": "KubeAPILatencyHigh", "verb": "LIST", "resource": "pods"},  # first rule wins: no playbook
    {"alertname": "NodeFilesystemAlmostOutOfSpace", "fstype": "nfs4", "instance": "10.0.0.12:9100",
     "mountpoint": "/mnt/datasets"},
    {"alertname": "NodeFilesystemSpaceFillingUp", "fstype": "fuse.s3fs", "instance": "10.0.0.12:9100"},
    {"alertname": "TargetDown", "job": "kube-proxy", "namespace": "kube-system"},
    {"alertname": "SomeTeamsOwnAlert", "namespace": "shop"},
])
def test_noise_never_reaches_triagebot(labels: dict[str, str]) -> None:
    assert symptom_for(labels["alertname"], labels) is None
    receivers = _receivers(labels)
    assert "triagebot" not in receivers and "default" in receivers, receivers


@pytest.mark.parametrize(("labels", "symptom"), [
    ({"alertname": "KubeContainerWaiting", **_KSM, "reason": "ErrImagePull"}, "image-pull"),
    ({"alertname": "KubeContainerWaiting", **_KSM, "reason": "ContainerCreating"}, "container-creating"),
    ({"alertname": "NodeFilesystemSpaceFillingUp", "fstype": "xfs", "instance": "10.0.0.12:9100"}, "evicted"),
    ({"alertname": "TargetDown", "job": "checkout", "namespace": "shop"}, "service-unreachable"),
])
def test_label_conditioned_rules_route_as_they_map(labels: dict[str, str], symptom: str) -> None:
    assert symptom_for(labels["alertname"], labels) == symptom
    assert _receivers(labels) == {"triagebot", "default"}


def test_a_new_rule_is_routed_once_generated() -> None:
    # What "automatic" means: a name added to the catalog is in the generated route with no hand edit.
    gen = _generator()
    extra = AlertRule(alerts=("MyTeamQueueBacklog",), symptom="latency")
    block = gen.render([*load_rules(), extra])
    assert "MyTeamQueueBacklog" in block and "MyTeamQueueBacklog" not in gen.render(load_rules())


def test_glob_patterns_become_anchored_re2() -> None:
    gen = _generator()
    assert gen.glob_regex("*OOMKill*") == ".*OOMKill.*"
    assert gen.glob_regex("fuse.*") == "fuse\\..*"
    assert gen.glob_regex("DCGM_XID?") == "DCGM_XID."
    with pytest.raises(ValueError, match="character classes"):
        gen.glob_regex("Kube[AB]")


def test_wide_node_groups_are_split_by_node() -> None:
    # A node alert grouped only by name would put every node in one group, whose common labels name none.
    config = load_yaml(RECEIVER)
    [route] = [r for r in config["route"]["routes"] if r["receiver"] == "triagebot-skip"]
    assert {"instance", "node", "alertname", "namespace", "pod"} <= set(route["group_by"])
    assert route["continue"] is True
    assert config["route"]["routes"][-1] == {"receiver": "default"}


def test_mapped_names_are_routed_at_all() -> None:
    # Guards the parametrisation above against an empty list (a broken loader would pass vacuously).
    assert Path(RECEIVER).exists() and MAPPED and UNMAPPED
