"""The ranking rules of docs/playbooks.md ("Ranking: who leads the report"), one test each, on real text where
a public thread has it (tests/realworld/, with its source beside it)."""

from __future__ import annotations

from pathlib import Path

from bot.render.common import headline
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse, default_playbooks
from playbooks.report import Report

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"


def _report(case: str) -> Report:
    text = (REALWORLD / case / "evidence.txt").read_text(encoding="utf-8")
    return analyse(artifacts_from_text(text, case.rsplit("/", 1)[-1]))


def _leader(report: Report) -> str | None:
    lead = report.leading()
    return f"{lead[0].playbook}/{lead[1].id}" if lead else None


def test_a_hypothesis_nothing_supports_never_leads() -> None:
    # A lone PyTorch watchdog timeout (EleutherAI/lm-evaluation-harness#1404): nothing says a rank is Pending.
    report = _report("nccl-hang/lm-eval-harness-pr-1404-watchdog-allreduce-straggler")
    assert report.symptoms == ["nccl-hang"]
    statuses = {h.id: h.status for f in report.findings for h in f.hypotheses}
    assert statuses["rank-not-running"] == "unknown"
    lead = report.leading()
    assert lead is None or lead[1].status in ("confirmed", "likely")
    if lead is None:
        assert headline(report).startswith("No hypothesis has evidence for it yet")


def test_a_pointer_joins_the_playbook_it_points_to() -> None:
    # `kubectl get pods` showing OOMKilled with restarts, and the Last State block (hmcts/cnp-flux-config#28772).
    report = _report("oom-killed/hmcts-flux-28772-get-pods-oomkilled-status")
    assert {"crash-loop", "oom-killed"} <= set(report.symptoms)
    pointer = next(h for f in report.findings if f.playbook == "crash-loop" for h in f.hypotheses
                   if h.id == "oom-loop")
    assert pointer.status == "confirmed" and pointer.merged_into == "oom-killed"
    lead = _leader(report)
    assert lead is not None and lead.startswith("oom-killed/")
    assert report.findings[0].playbook == "oom-killed"
    assert pointer.falsified_by != "The last termination reason is not OOMKilled."


def test_a_pointer_stands_alone_when_its_playbook_did_not_run() -> None:
    # The same real paste, with only the crash-loop playbook loaded: nothing to join, so the pointer leads.
    text = (REALWORLD / "oom-killed/hmcts-flux-28772-get-pods-oomkilled-status/evidence.txt").read_text("utf-8")
    only = [p for p in default_playbooks() if p.spec.id == "crash-loop"]
    report = analyse(artifacts_from_text(text, "paste"), playbooks=only)
    assert report.symptoms == ["crash-loop"]
    assert _leader(report) == "crash-loop/oom-loop"
    assert report.leading() is not None and report.leading()[1].merged_into is None


def test_node_evidence_about_no_node_cannot_confirm_a_fault_on_the_pods_node() -> None:
    # A describe fragment of an OOM-killed, crash-looping GPU pod on node gpu-7, and a dmesg Xid 79 pasted
    # without any host name (composed for this test: the two halves are real shapes, the pairing is ours).
    describe = ("Name:         trainer-0\nNamespace:    ml\nNode:         gpu-7/10.0.0.7\nStatus:       Running\n"
                "Containers:\n  trainer:\n    State:          Waiting\n      Reason:       CrashLoopBackOff\n"
                "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n"
                "    Restart Count:  6\n    Limits:\n      memory:          16Gi\n      nvidia.com/gpu:  1\n")
    dmesg = "[  123.456789] NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.\n"
    report = analyse(artifacts_from_text(describe, "describe.txt") + artifacts_from_text(dmesg, "dmesg.txt"))
    statuses = {f"{f.playbook}/{h.id}": h.status for f in report.findings for h in f.hypotheses}
    assert statuses["crash-loop/gpu-fault"] == "likely"
    lead = _leader(report)
    assert lead is not None and lead.startswith("oom-killed/"), lead
