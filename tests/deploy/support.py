"""Shared helpers of the deploy tests: paths, the external tools they run, and kustomize rendering.

A tool that is missing fails the test in CI (CI set) and skips it elsewhere with a message saying what
to install, like the other harnesses (tests/harness/prometheus.py).
"""

from __future__ import annotations

import atexit
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
KUSTOMIZE = DEPLOY / "kustomize"
BASE = KUSTOMIZE / "base"
COMPONENTS = KUSTOMIZE / "components"
OVERLAYS = KUSTOMIZE / "overlays"
PROMETHEUS = DEPLOY / "prometheus"
ALERTMANAGER = DEPLOY / "alertmanager"
SLACK = DEPLOY / "slack"

# Kustomize >= 4 is needed for `components` with `labels` and target patches (kubectl >= 1.21 embeds it).
_MIN_KUSTOMIZE = (4, 0)

Doc = dict[str, Any]


def need(name: str, hint: str, *candidates: str) -> str:
    """The path of a tool; if absent, fail in CI (CI set) and skip with a clear message elsewhere."""
    for candidate in (*candidates, shutil.which(name)):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    missing(f"`{name}` is not installed ({hint})")
    raise AssertionError("unreachable")


def missing(message: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI must provide it", pytrace=False)
    pytest.skip(f"{message}; skipped because CI is unset")


@cache
def _kubectl() -> str | None:
    return next((p for p in ("/usr/bin/kubectl", shutil.which("kubectl")) if p and os.access(p, os.X_OK)), None)


@cache
def _kustomize_version(kubectl: str) -> tuple[int, int] | None:
    done = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True,
                          timeout=30, check=False)
    try:
        raw = str(json.loads(done.stdout).get("kustomizeVersion", ""))
    except ValueError:
        return None
    m = re.match(r"v?(\d+)\.(\d+)", raw)
    return (int(m.group(1)), int(m.group(2))) if m else None


def kubectl() -> str:
    """kubectl with an embedded kustomize new enough for these manifests."""
    path = _kubectl()
    if path is None:
        missing("`kubectl` is not installed (it renders the kustomize overlays offline: "
                "the image's kubectl, or Debian's kubernetes-client >= 1.21)")
        raise AssertionError("unreachable")
    version = _kustomize_version(path)
    if version is None or version < _MIN_KUSTOMIZE:
        shown = "unknown" if version is None else f"v{version[0]}.{version[1]}"
        missing(f"`{path}` embeds kustomize {shown}; these manifests need kustomize >= "
                f"v{_MIN_KUSTOMIZE[0]} (kubectl >= 1.21)")
    return path


def kubernetes_validate() -> str:
    here = Path(sys.executable).parent / "kubernetes-validate"
    return need("kubernetes-validate", "pip install kubernetes-validate, part of the dev extra", str(here))


def promtool() -> str:
    return need("promtool", "apt-get install -y --no-install-recommends prometheus")


def amtool() -> str:
    return need("amtool", "apt-get install -y --no-install-recommends prometheus-alertmanager")


@dataclass(frozen=True)
class Variant:
    """One way to install: an overlay from the repo, or base plus a list of components."""

    name: str
    overlay: str | None = None
    components: tuple[str, ...] = field(default_factory=tuple)

    def uses(self, component: str) -> bool:
        return component in self.components


def overlay_components(overlay: str) -> tuple[str, ...]:
    """The component names an overlay lists, in order."""
    doc = yaml.safe_load((OVERLAYS / overlay / "kustomization.yaml").read_text(encoding="utf-8"))
    return tuple(Path(c).name for c in doc.get("components") or [])


def overlay_names() -> list[str]:
    return sorted(p.name for p in OVERLAYS.iterdir() if (p / "kustomization.yaml").is_file())


def component_names() -> list[str]:
    return sorted(p.name for p in COMPONENTS.iterdir() if (p / "kustomization.yaml").is_file())


# Combinations beyond the shipped overlays, so every component is rendered together with the others.
COMBOS: dict[str, tuple[str, ...]] = {
    "combo-http-everything": ("http-ingress", "node-agent", "node-agent-kernel-log", "node-agent-priority",
                              "postgres-incluster", "kubelet-logs"),
    "combo-socket-agent-external-no-operator": ("socket-mode", "node-agent", "postgres-external",
                                                "without-prometheus-operator"),
}


def variants() -> list[Variant]:
    found = [Variant("base")]
    found += [Variant(f"overlay-{o}", overlay=o, components=overlay_components(o)) for o in overlay_names()]
    found += [Variant(name, components=components) for name, components in COMBOS.items()]
    return found


def _run_kustomize(directory: Path) -> str:
    done = subprocess.run([kubectl(), "kustomize", str(directory)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, f"kubectl kustomize {directory} failed:\n{done.stderr}"
    return done.stdout


@cache
def rendered_text(variant: Variant) -> str:
    """The YAML `kubectl kustomize` renders for a variant (combos are built in a scratch copy of deploy/)."""
    if variant.name == "base":
        return _run_kustomize(BASE)
    if variant.overlay is not None:
        return _run_kustomize(OVERLAYS / variant.overlay)
    scratch = Path(_scratch_dir()) / variant.name
    if scratch.exists():
        shutil.rmtree(scratch)
    # Kustomize only loads directories below or beside the kustomization by relative path: copy the tree.
    shutil.copytree(KUSTOMIZE, scratch / "deploy" / "kustomize")
    shutil.copytree(PROMETHEUS, scratch / "deploy" / "prometheus")
    combo = scratch / "deploy" / "kustomize" / "overlays" / variant.name
    combo.mkdir(parents=True)
    doc = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization", "resources": ["../../base"],
           "components": [f"../../components/{c}" for c in variant.components]}
    (combo / "kustomization.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    return _run_kustomize(combo)


@cache
def _scratch_dir() -> str:
    path = tempfile.mkdtemp(prefix="triagebot-deploy-")
    atexit.register(shutil.rmtree, path, True)
    return path


def rendered(variant: Variant) -> list[Doc]:
    return [d for d in yaml.safe_load_all(rendered_text(variant)) if d]


def of_kind(docs: list[Doc], kind: str) -> list[Doc]:
    return [d for d in docs if d.get("kind") == kind]


def one(docs: list[Doc], kind: str, name: str) -> Doc:
    found = [d for d in docs if d.get("kind") == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind}/{name}, found {len(found)}"
    return found[0]


WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")


def pod_specs(docs: list[Doc]) -> Iterator[tuple[Doc, Doc]]:
    """(workload, pod spec) for every workload in the docs."""
    for doc in docs:
        if doc.get("kind") in WORKLOAD_KINDS:
            yield doc, doc["spec"]["template"]["spec"]


def env_of(container: Doc) -> dict[str, Doc]:
    return {e["name"]: e for e in container.get("env") or []}


def load_yaml(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def load_yaml_all(path: Path) -> list[Any]:
    return [d for d in yaml.safe_load_all(path.read_text(encoding="utf-8")) if d is not None]
