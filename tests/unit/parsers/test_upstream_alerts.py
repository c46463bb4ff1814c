"""Every default alert of kube-prometheus and NVIDIA's GPU Operator is accounted for (issue #13, point 6): it maps
to a playbook, or alerts.yaml lists it with `symptom: null` and it posts with "no playbook for X yet". The names
are upstream's, read from their rule files and recorded with their source (collectors/catalogs/upstream_alerts.yaml).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.alerts.alert_message import AlertLinks, alert_root
from collectors.catalogs.alert_map import load_rules, symptom_for

ROOT = Path(__file__).resolve().parents[3]
CATALOG = ROOT / "collectors" / "catalogs" / "upstream_alerts.yaml"
PLAYBOOKS = ROOT / "playbooks"
DATA = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
NAMES = [(source["id"], name) for source in DATA["sources"] for names in source["files"].values() for name in names]


def test_the_names_are_recorded_with_their_source() -> None:
    assert {s["id"] for s in DATA["sources"]} == {"kube-prometheus", "gpu-operator", "ingress-nginx"}
    for source in DATA["sources"]:
        assert source["repository"].startswith("https://github.com/")
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"])
        assert source["files"] and all(names for names in source["files"].values())
    assert len(NAMES) == len(set(NAMES)) >= 130
    for name in ("KubePodCrashLooping", "KubeHpaMaxedOut", "KubeQuotaExceeded", "NodeFilesystemAlmostOutOfSpace",
                 "KubeContainerWaiting", "CPUThrottlingHigh", "Watchdog", "GPUOperatorNodeDeploymentDriverFailed"):
        assert any(n == name for _, n in NAMES), name


@pytest.mark.parametrize(("source", "name"), NAMES)
def test_every_default_alert_is_mapped_or_explicitly_unmapped(source: str, name: str) -> None:
    rule = next((r for r in load_rules() if r.matches(name, {})), None)
    assert rule is not None, f"{name} ({source}) is in no rule of alerts.yaml: map it or list it with symptom: null"
    if rule.symptom is None:
        # Posted with its one-line note instead of a verdict.
        root = alert_root({"status": "firing", "alerts": [{"labels": {"alertname": name}}],
                           "commonLabels": {"alertname": name, "namespace": "shop", "pod": "web-0"}}, AlertLinks())
        assert root.note == f"No playbook for {name} yet; the triage runs every playbook on its target."


def _hypotheses(symptom: str) -> set[str]:
    def walk(nodes: list[dict[str, object]]) -> set[str]:
        found: set[str] = set()
        for node in nodes:
            found.add(str(node["id"]))
            children = node.get("children") or []
            assert isinstance(children, list)
            found |= walk(children)
        return found

    return walk(yaml.safe_load((PLAYBOOKS / f"{symptom}.yaml").read_text(encoding="utf-8"))["hypotheses"])


def test_the_mappings_the_issue_names() -> None:
    # ... and the hypothesis each is meant for exists in that playbook.
    assert "capacity" in _hypotheses("latency") and "quota-exceeded" in _hypotheses("pending")
    assert "disk-pressure" in _hypotheses("evicted")
    assert symptom_for("KubeHpaMaxedOut") == "latency"
    assert (symptom_for("NGINXTooMany500s"), symptom_for("NGINXTooMany400s")) == ("error-rate", None)
    assert {symptom_for(n) for n in ("KubeQuotaAlmostFull", "KubeQuotaFullyUsed", "KubeQuotaExceeded")} == {"pending"}
    assert {symptom_for(n) for _, n in NAMES if n.startswith("NodeFilesystem")} == {"evicted"}
    assert symptom_for("KubeContainerWaiting", {"reason": "ImagePullBackOff"}) == "image-pull"
    assert symptom_for("KubeContainerWaiting", {"reason": "ContainerCreating"}) == "container-creating"
    assert symptom_for("KubeContainerWaiting", {"reason": "CreateContainerConfigError"}) == "container-creating"
    assert symptom_for("KubeContainerWaiting", {"reason": "CrashLoopBackOff"}) == "crash-loop"
