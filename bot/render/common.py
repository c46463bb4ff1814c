"""Wording shared by every renderer, so the terminal, markdown and Slack say the same thing."""

from __future__ import annotations

from playbooks.report import HypothesisResult, Report, ScopeAnswer

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


# The answer to seed 000's "request-, pod-, node-, pool-specific, or global?", as people say it.
SCOPE_WORDS = {"request": "request-specific", "pod": "pod-specific", "node": "node-specific", "pool": "pool-wide",
               "cluster": "global (cluster-wide)"}
ANSWER_MARK = {"yes": "yes", "no": "no", "unknown": "?"}


def scope_line(report: Report) -> str:
    """One line: the narrowest layer the evidence confines the failure to, then every question's answer."""
    answers = ", ".join(f"{a.level} {ANSWER_MARK[a.answer]}" for a in report.scope.answers)
    if report.scope.level is None:
        if all(a.answer == "unknown" for a in report.scope.answers):
            return "Scope: not narrowed; no evidence says whether it is request-, pod-, node-, pool- or cluster-wide."
        return f"Scope: not narrowed ({answers})."
    return f"Scope: {SCOPE_WORDS[report.scope.level]} ({answers})."


def scope_answered(report: Report) -> list[ScopeAnswer]:
    """The questions the evidence answered, yes or no, narrowest first."""
    return [a for a in report.scope.answers if a.answer != "unknown"]


def cache_line(report: Report) -> str | None:
    """How old the cached cluster state was, when the report was served from the watch cache."""
    if report.cache is None:
        return None
    scope = ", ".join(report.cache.namespaces) if report.cache.namespaces else "all namespaces"
    return f"Cluster objects from the watch cache ({scope}), {report.cache.age_seconds:.0f}s old"
