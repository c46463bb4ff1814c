"""`triagebot triage` against the Kubernetes stand-in when the cluster cannot be reached, and through a merged
KUBECONFIG list (issue 28, point 4). Real subprocesses of the CLI; only the API server is a stand-in."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

from tests.harness.processes import finish
from tests.standins.kube_api import KubeStandIn

ROOT = Path(__file__).resolve().parents[2]
SHOP = ROOT / "tests" / "fixtures" / "live" / "k8s" / "shop.yaml"
# Small budgets: an unreachable API server should cost seconds, not the default 20 s deadline.
FAST = {"TRIAGEBOT_CALL_TIMEOUT": "1", "TRIAGEBOT_DEADLINE": "3"}


def spawn(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    base = {"PATH": "/usr/bin:/bin", "HOME": str(ROOT), "TRIAGEBOT_CACHE_DIR": "", "COLUMNS": "80", **FAST}
    return subprocess.Popen([sys.executable, "-m", "bot.cli", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT, env={**base, **(env or {})})


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return finish(spawn(*args, env=env))


def shop() -> list[dict[str, object]]:
    return [doc for doc in yaml.safe_load_all(SHOP.read_text(encoding="utf-8")) if doc]


def closed_port_kubeconfig(tmp_path: Path) -> tuple[Path, str]:
    """A kubeconfig that pointed at a stand-in which is now stopped: its port is closed."""
    with KubeStandIn(shop()) as kube:
        path = kube.kubeconfig(tmp_path / "gone")
        server = str(kube.https_url or kube.url)
    return path, server


def test_triage_exits_3_with_one_line_when_the_cluster_is_unreachable(tmp_path: Path) -> None:
    path, server = closed_port_kubeconfig(tmp_path)
    # The two commands are independent: run at once (each is mostly interpreter start-up; CI has two cores).
    triage, record = map(finish, [
        spawn("triage", "checkout", "-n", "shop", "--kubeconfig", str(path)),
        spawn("record", "checkout", "-n", "shop", "--kubeconfig", str(path), "-o", str(tmp_path / "rec"))])
    assert triage.returncode == 3, triage.stderr
    assert triage.stderr.splitlines() == [triage.stderr.strip()]  # one line, no traceback
    assert re.fullmatch(rf"triagebot: error: could not reach the cluster at {re.escape(server)}: .*[Rr]efused.*",
                        triage.stderr.strip()), triage.stderr
    assert "Missing evidence" in triage.stdout  # the report still says what could not be read
    assert record.returncode == 3, record.stderr
    assert record.stderr.strip().endswith("; nothing recorded")
    assert not (tmp_path / "rec").exists()


def test_a_user_mistake_stays_exit_2_with_the_cluster_reachable(tmp_path: Path) -> None:
    with KubeStandIn(shop()) as kube:
        path = kube.kubeconfig(tmp_path / "kc")
        wrong, ok = map(finish, [spawn("triage", "checkuot", "-n", "shop", "--kubeconfig", str(path)),
                                 spawn("triage", "checkout", "-n", "shop", "--kubeconfig", str(path))])
    assert wrong.returncode == 2 and wrong.stderr.startswith('triagebot: error: service "checkuot" not found')
    assert ok.returncode == 0, ok.stderr


def test_a_kubeconfig_list_reaches_the_cluster_the_first_file_names(tmp_path: Path) -> None:
    """KUBECONFIG=first:second, where second's current-context names a cluster whose port is closed: kubectl uses
    first's current-context, and so must the triage; in the other order it is second's, and the cluster is gone."""
    gone, _ = closed_port_kubeconfig(tmp_path)
    second = yaml.safe_load(gone.read_text())
    for kind in ("clusters", "users", "contexts"):
        for entry in second[kind]:
            entry["name"] = "gone"
    second["contexts"][0]["context"] = {"cluster": "gone", "user": "gone"}
    second["current-context"] = "gone"
    (tmp_path / "second").write_text(yaml.safe_dump(second))
    with KubeStandIn(shop()) as kube:
        first = kube.kubeconfig(tmp_path / "first")
        listed = cli("triage", "checkout", "-n", "shop", env={"KUBECONFIG": os.pathsep.join(
            [str(first), str(tmp_path / "second")])})
        asked = len(kube.requests)
        reversed_ = cli("triage", "checkout", "-n", "shop", env={"KUBECONFIG": os.pathsep.join(
            [str(tmp_path / "second"), str(first)])})
        assert len(kube.requests) == asked  # the reversed list never asked this cluster
    assert listed.returncode == 0, listed.stderr
    assert asked > 0
    assert "checkout" in listed.stdout
    assert reversed_.returncode == 3, reversed_.stderr
