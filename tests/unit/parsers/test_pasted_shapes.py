"""Paste shapes found in real threads that the readers once missed, each read from its real-world case (the
folder's case.yaml names the thread): the fact, its value and the line it is cited from."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"


def facts_of(case: str) -> set[tuple[str, str, object, int]]:
    text = (REALWORLD / case / "evidence.txt").read_text(encoding="utf-8")
    return {(str(a.kind), f.name, repr(f.value), f.citation.start)
            for a in artifacts_from_text(text, case.split("/")[-1]) for f in parse_artifact(a).facts}


@pytest.mark.parametrize(("case", "kind", "fact", "value", "line"), [
    # Describe rows without their From column: "0/4" is the scheduler message, not a component.
    ("pending/directpv-issue-100-unknown-age-unbound-then-volume-affinity", "events", "scheduling.nodes_total", 4, 8),
    # A description's tail (from Conditions: on, no Name:) is still a pod's description.
    ("pending/klotho-issue-553-describe-node-selectors-no-match", "describe-pod", "pod.qos_class", "Guaranteed", 15),
    # A description cut with "..." lines, after the prompt that says what it is.
    ("pending/local-path-provisioner-31-elided-describe-node-gone", "describe-pod", "pod.phase", "Pending", 10),
    # kubectl get events -o custom-columns=TIME,REASON,MSG: no TYPE column.
    ("crash-loop/inspektor-gadget-pr-187-custom-columns-events-liveness-kill", "events", "events.reasons",
     ["Killing"], 13),
    # The runtime could not exec the entrypoint (a Failed event row).
    ("crash-loop/deathstarbench-358-failed-to-start-stat-no-such-file", "events", "app.errors", ["entrypoint"], 3),
    # A memory cgroup's OOM told by its call trace, and by its usage-against-limit and stats lines.
    ("oom-killed/k8s-pr-1962-guestbook-frontend-syslog-memcg-2014", "kernel-log", "kernel.oom_memcg", True, 7),
    ("oom-killed/elcarro-pr-208-manager-memcg-40960kb-escaped-stats", "kernel-log", "kernel.oom_memcg", True, 7),
    # The conntrack message retyped without its spaces, in prose.
    ("latency/k8s-issue-97377-prose-conntrack-table-full-close-wait", "kernel-log", "conntrack.table_full", True, 2),
    # Node.js's lookup timeout, quoted in prose (a line signal hands it to the application-log reader).
    ("latency/minikube-issue-3606-eai-again-virtualbox-dns", "text", "dns.errors", True, 4),
])
def test_fact_is_read(case: str, kind: str, fact: str, value: object, line: int) -> None:
    assert (kind, fact, repr(value), line) in facts_of(case)
