"""Alerts that people pasted in public threads, verbatim (whole lines), read as alerts (issue #24, point 2).

Each fixture in tests/fixtures/parsers/alert_pastes/ is cut from the thread named beside its case.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse

PASTES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "alert_pastes"

CASES: list[tuple[str, str, dict[str, Any]]] = [
    # m-lab/alertmanager-github-receiver's issue body.
    ("m-lab-github-receiver.txt", "https://github.com/rbo/sandbox/issues/2",
     # Its "* firing" line stands alone between blank lines, before the block that names the alert; the body's
     # "Alertmanager URL:" opening makes the whole body one alert text, so it is read.
     {"alert.names": ["Alert1"], "alert.severity": "page", "alert.status": "firing",
      "alert.annotations": ["summary=2 is more than 1"]}),
    # Alertmanager's e-mail copied from a mail client that dropped the break after each bold heading.
    ("email-copied-headings-run-together.txt", "https://github.com/helm/charts/issues/18593",
     {"alert.names": ["KubeControllerManagerDown", "KubeSchedulerDown"], "alert.severity": "critical"}),
    # pfnet-research/alertmanager-to-github's issue body: one cell a line.
    ("alertmanager-to-github-table.txt", "https://github.com/AndreiGavriliu/homelab/issues/5594",
     {"alert.names": ["KubePodCrashLooping"], "alert.symptoms": ["crash-loop"],
      "pod.name": "cloudflared-6f58f5689d-jhn8v", "pod.namespace": "cloudflared", "container.name": "cloudflared",
      "container.waiting.reason": "CrashLoopBackOff",
      "alert.severity": "warning"}),
    # The same receiver's issue title (title.tmpl), as the thread lists it.
    ("alertmanager-to-github-title.txt", "https://github.com/AndreiGavriliu/homelab/issues/5594",
     {"alert.names": ["KubePodCrashLooping"], "alert.symptoms": ["crash-loop"],
      "pod.name": "cloudflared-6f58f5689d-jhn8v", "pod.namespace": "cloudflared", "container.name": "cloudflared"}),
    # The same receiver's body holds no status; a title template written from the payload's status is the heading.
    ("alertmanager-to-github-heading-status.txt", "https://github.com/thaum-xyz/ankhmorpork/issues/578",
     {"alert.names": ["TargetDown"], "alert.status": "firing", "alert.severity": "warning"}),
    # amtool -o extended, an annotation with a line break in it, and its simple output (Alertmanager 0.22's State).
    ("amtool-extended-and-simple.txt", "https://github.com/prometheus/alertmanager/pull/2324",
     {"alert.names": ["Watchdog"], "alert.severity": "none"}),
    ("amtool-simple.txt", "https://github.com/prometheus/alertmanager/pull/2324",
     {"alert.names": ["Watchdog"], "alert.status": "firing"}),
    # amtool before the State column (Alertmanager 0.18).
    ("amtool-before-state.txt", "https://github.com/prometheus/alertmanager/issues/2736",
     {"alert.names": ["Test_Alert", "Check_Foo_Fails"],
      "alert.annotations": ["summary=This is a testing alert!"]}),
]


# Each paste is read as one kind of artifact among those it is split into: alert text, or for the payload posted
# by hand with curl to test a receiver, Alertmanager's webhook JSON (its alerts read as any payload's; a made-up
# alert name maps to no symptom, so nothing runs on it).
KINDS = [(name, url, "alert-text", expected) for name, url, expected in CASES] + [
    ("curl-posted-alert-list.txt", "https://github.com/krpn/prometheus-alert-webhooker/issues/22", "alertmanager",
     {"alert.names": ["my-alert"], "alert.status": "firing", "alert.severity": "critical",
      "evidence.symptoms": None}),
]


@pytest.mark.parametrize(("name", "url", "kind", "expected"), KINDS, ids=[c[0] for c in KINDS])
def test_pasted_alerts_are_read(name: str, url: str, kind: str, expected: dict[str, Any]) -> None:
    text = (PASTES / name).read_text(encoding="utf-8")
    artifacts = artifacts_from_text(text, name)
    report = analyse(artifacts)
    assert kind in {a.kind for a in artifacts}, (url, [a.kind for a in artifacts])
    assert {key: report.facts.get(key) for key in expected} == expected, (url, report.facts)


def test_the_github_table_keeps_annotations_apart() -> None:
    text = (PASTES / "alertmanager-to-github-table.txt").read_text(encoding="utf-8")
    report = analyse(artifacts_from_text(text, "t"))
    assert "reason=CrashLoopBackOff" in report.facts["alert.labels"]
    assert not [a for a in report.facts["alert.labels"] if a.startswith(("description=", "runbook_url="))]
    assert "runbook_url=https://runbooks.prometheus-operator.dev/runbooks/kubernetes/kubepodcrashlooping" in \
        report.facts["alert.annotations"]



def test_a_curl_posting_something_else_is_no_payload() -> None:
    text = "curl -X POST localhost:8080/api -d '{\"labels\": {\"app\": \"web\"}, \"replicas\": 3}'\n"
    assert "alertmanager" not in {a.kind for a in artifacts_from_text(text, "p")}
