"""Wording shared by every renderer, so the terminal, markdown and Slack say the same thing."""

from __future__ import annotations

from playbooks.report import HypothesisResult, Report

STATUS_MARK = {"confirmed": "✔ confirmed", "likely": "● likely", "unknown": "? unknown", "ruled-out": "✘ ruled out"}


def headline(report: Report) -> str:
    lead = report.leading()
    if lead is None:
        if not report.facts:
            return "Nothing in this evidence was recognised."
        if not report.findings:
            return "No playbook matched this evidence."
        if any(h.status == "unknown" for f in report.findings for h in f.hypotheses):
            return ("No hypothesis has evidence for it yet; the checks below would settle the open ones "
                    f"({', '.join(report.symptoms)}).")
        return "Every hypothesis was ruled out; the cause lies outside the playbooks."
    finding, h = lead
    return f"{finding.playbook}: {h.id} ({h.status}, {h.score:.2f}): {h.claim}"


def target_line(report: Report) -> str:
    t = report.target
    parts = [f"{k}={v}" for k, v in (("service", t.service), ("namespace", t.namespace), ("pod", t.pod),
                                       ("node", t.node), ("cluster", t.cluster)) if v]
    return " ".join(parts) or "pasted evidence"


def others(report: Report, lead: HypothesisResult | None) -> list[tuple[str, HypothesisResult]]:
    """Every other hypothesis with its playbook, in report order."""
    return [(f.playbook, h) for f in report.findings for h in f.hypotheses if h is not lead]
