"""The ranking rules of docs/playbooks.md ("Ranking: who leads the report"), one test each, on real text where
a public thread has it (tests/realworld/, with its source beside it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.render.common import headline
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse, default_playbooks
from playbooks.report import Finding, HypothesisResult, Report, Target

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


# Rule 7: a refinement as well supported as its parent leads in the parent's place. Each situation is one finding
# written out whole: (id, parent, status, score) per hypothesis, then the hypothesis that must lead and the ones
# shown under it as supporting. Scores sit in the engine's bands (confirmed 0.90-0.99, likely 0.60-0.69, ordered
# by prior) with the parent above its child, as in the bundled playbooks, so the rule, not the score, puts the
# child first.
RefinementCase = tuple[str, list[tuple[str, str | None, str, float]], list[tuple[str, str | None, str, float]],
                       str, list[str]]

REFINEMENT_CASES: list[RefinementCase] = [
    ("confirmed parent, confirmed child: the child leads",
     [("limit-too-low", None, "confirmed", 0.97), ("host-memory-underestimated", "limit-too-low", "confirmed", 0.96),
      ("memory-leak", None, "unknown", 0.40)],
     [], "oom-killed/host-memory-underestimated", ["limit-too-low"]),
    ("confirmed parent, likely child: the parent leads, the child supports it",
     [("limit-too-low", None, "confirmed", 0.97), ("host-memory-underestimated", "limit-too-low", "likely", 0.66),
      ("memory-leak", None, "unknown", 0.40)],
     [], "oom-killed/limit-too-low", ["host-memory-underestimated"]),
    ("likely parent, likely child: the child leads",
     [("limit-too-low", None, "likely", 0.69), ("host-memory-underestimated", "limit-too-low", "likely", 0.62),
      ("memory-leak", None, "unknown", 0.40)],
     [], "oom-killed/host-memory-underestimated", ["limit-too-low"]),
    ("likely parent, confirmed child: the best supported one already leads",
     [("node-oom", None, "likely", 0.69), ("qos-victim", "node-oom", "confirmed", 0.95)],
     [], "oom-killed/qos-victim", ["node-oom"]),
    # No bundled playbook nests deeper than one level yet; the rule is written for any depth.
    ("two levels deep, all confirmed: the grandchild leads, both ancestors support it",
     [("cause", None, "confirmed", 0.99), ("refined", "cause", "confirmed", 0.97),
      ("more-refined", "refined", "confirmed", 0.96), ("other", None, "unknown", 0.30)],
     [], "pb/more-refined", ["cause", "refined"]),
    ("two levels deep, the grandchild only likely: the confirmed child leads",
     [("cause", None, "confirmed", 0.99), ("refined", "cause", "confirmed", 0.97),
      ("more-refined", "refined", "likely", 0.65)],
     [], "pb/refined", ["cause", "more-refined"]),
    # nccl-rank-pending-no-gang: both refinements of rank-not-running confirmed; the better scored one leads.
    ("two confirmed children: the better scored one leads, its sibling is an alternative",
     [("rank-not-running", None, "confirmed", 0.99), ("no-gang-scheduling", "rank-not-running", "confirmed", 0.98),
      ("rank-unschedulable", "rank-not-running", "confirmed", 0.97)],
     [], "nccl-hang/no-gang-scheduling", ["rank-not-running"]),
    ("a supported child of a hypothesis that does not lead changes nothing",
     [("limit-too-low", None, "confirmed", 0.97), ("node-oom", None, "likely", 0.69),
      ("qos-victim", "node-oom", "likely", 0.66)],
     [], "oom-killed/limit-too-low", []),
    ("a supported child in a later finding changes nothing",
     [("limit-too-low", None, "confirmed", 0.97)],
     [("rank-not-running", None, "confirmed", 0.96), ("no-gang-scheduling", "rank-not-running", "confirmed", 0.95)],
     "oom-killed/limit-too-low", []),
]


def _finding(playbook: str, rows: list[tuple[str, str | None, str, float]]) -> Finding:
    return Finding(playbook=playbook, title=playbook, hypotheses=[
        HypothesisResult(id=hid, parent=parent, status=status, score=score, claim=hid, falsified_by="f")  # type: ignore[arg-type]
        for hid, parent, status, score in rows])


@pytest.mark.parametrize(("situation", "first", "second", "leads", "supporting"), REFINEMENT_CASES,
                         ids=[case[0] for case in REFINEMENT_CASES])
def test_a_refinement_as_well_supported_as_its_parent_leads(
        situation: str, first: list[tuple[str, str | None, str, float]],
        second: list[tuple[str, str | None, str, float]], leads: str, supporting: list[str]) -> None:
    playbooks = {"limit-too-low": "oom-killed", "node-oom": "oom-killed", "rank-not-running": "nccl-hang",
                 "cause": "pb"}
    findings = [_finding(playbooks[first[0][0]], first)]
    if second:
        findings.append(_finding(playbooks[second[0][0]], second))
    report = Report(target=Target(namespace="ml", pod="p-0"), symptoms=[f.playbook for f in findings],
                    findings=findings, facts={}, artifacts=[])
    assert _leader(report) == leads, situation
    assert sorted(h.id for h in report.supporting()) == sorted(supporting), situation
    assert report.lead is not None and f"{report.lead.playbook}/{report.lead.hypothesis}" == leads
    assert sorted(report.lead.supporting) == sorted(supporting)
