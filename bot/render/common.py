"""Wording shared by every renderer, so the terminal, markdown and Slack say the same thing."""

from __future__ import annotations

from bot.render.evidence import plain, unknown_line
from collectors.rbac import forbidden_reason
from playbooks.report import HypothesisResult, Report, ScopeAnswer

# Between a playbook and its hypothesis, as in "gpu-xid \u203a gpu-fallen-off-bus" (a single right angle quote).
SEP = "\u203a"
STATUS_MARK = {"confirmed": "✔ confirmed", "likely": "● likely", "unknown": "? unknown", "ruled-out": "✘ ruled out"}


def headline(report: Report) -> str:
    lead = report.leading()
    if lead is None:
        if (why := no_verdict_reason(report)) is not None:
            return f"No verdict: {why}."
        if not report.facts:
            return "Nothing in this evidence was recognised."
        if not report.findings:
            return "No playbook matched this evidence."
        own = [f.playbook for f in report.findings if not f.aside]
        if any(f.aside and any(h.supported for h in f.hypotheses) for f in report.findings):
            # What other workloads on the alert's node show is context; it must not read as the alert's cause.
            return (f"No verdict for the alert's own symptom ({', '.join(own) or 'no playbook'}); what other "
                    "workloads show is listed as \"also on this node\", not as its cause.")
        if any(h.status == "unknown" for f in report.findings for h in f.hypotheses):
            return ("No hypothesis has evidence for it yet; the checks below would settle the open ones "
                    f"({', '.join(report.symptoms)}).")
        return "Every hypothesis was ruled out; the cause lies outside the playbooks."
    finding, h = lead
    return f"{finding.playbook}: {h.id} ({h.status}, {h.score:.2f}): {h.claim}"


def notes(report: Report) -> list[str]:
    """The report's notes without what the headline already says: a note that opens with the headline's sentence
    ("Nothing in this evidence was recognised.") keeps only the rest, so the reader sees that sentence once."""
    said = headline(report) if report.leading() is None else ""
    out = []
    for note in report.notes:
        rest = note.removeprefix(said).lstrip() if said and note.startswith(said) else note
        if rest:
            out.append(rest[:1].upper() + rest[1:])
    return out


def open_checks(report: Report, per_finding: int = 3) -> list[str]:
    """When nothing leads: the checks of each symptom's most likely open hypothesis, the checks the headline
    promises ("the checks below would settle the open ones"), without repeats."""
    checks: list[str] = []
    for finding in report.findings:
        first = next((h for h in finding.hypotheses if h.status == "unknown" and h.next_checks), None)
        if first is not None:
            checks += first.next_checks[:per_finding]
    return list(dict.fromkeys(checks))


def others(report: Report, lead: HypothesisResult | None) -> list[tuple[str, HypothesisResult]]:
    """Every other hypothesis with its playbook (and why it is set aside, when it is), in report order."""
    return [(f"{f.playbook} ({f.aside})" if f.aside else f.playbook, h)
            for f in report.findings for h in f.hypotheses if h is not lead]


def folded_others(report: Report, lead: HypothesisResult | None
                  ) -> tuple[list[tuple[str, HypothesisResult]], list[str], str]:
    """The other hypotheses as a reader wants them: those with support one per line, the ruled-out ones named
    on one line, and the open ones folded into one line that says what evidence would settle them."""
    # The hypotheses that support the lead are shown under it (supporting()), not as verdicts of their own.
    under_lead = {id(h) for h in report.supporting()} if lead is not None else set()
    rest = [(p, h) for p, h in others(report, lead) if h.merged_into is None and id(h) not in under_lead]
    supported = [(p, h) for p, h in rest if h.status in ("confirmed", "likely")]
    own = _lead_playbook(report)
    ruled_out = [h.id if p == own else f"{p} {SEP} {h.id}" for p, h in rest if h.status == "ruled-out"]
    unknown = [h for _, h in rest if h.status == "unknown"]
    return supported, ruled_out, unknown_line(unknown) if unknown else ""


SUPPORT_MARK = "↳ supporting"


def supporting_lines(report: Report) -> list[str]:
    """The hypotheses that agree with the lead and have evidence of their own (a refinement of it, or its parent),
    one line each: under the one verdict, as what contributes to it (docs/playbooks.md, "Ranking")."""
    return [f"{SUPPORT_MARK} ({h.status}, {h.score:.2f}): {h.id}: {' '.join(h.claim.split())}"
            for h in report.supporting()]


def _lead_playbook(report: Report) -> str | None:
    lead = report.leading()
    return lead[0].playbook if lead else (report.findings[0].playbook if report.findings else None)


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


def narrowing_line(report: Report) -> str | None:
    """The narrowing question in one line: the first layer still open, in the order the documents teach (seed
    000:7-16), the question that closes it and the layers open after it; None when no layer is open. The check
    itself is shown as a command, apart, so it copies whole."""
    n = report.narrowing
    if n is None:
        return None
    later = [layer for layer in n.open if layer != n.layer]
    then = f" (then: {', '.join(later)})" if later else ""
    return f"Still open: the {n.layer} layer{then}. {n.question} One check closes it:"


def cache_line(report: Report) -> str | None:
    """How old the cached cluster state was, when the report was served from the watch cache."""
    if report.cache is None:
        return None
    scope = ", ".join(report.cache.namespaces) if report.cache.namespaces else "all namespaces"
    return f"Cluster objects from the watch cache ({scope}), {report.cache.age_seconds:.0f}s old"


def scope_answered(report: Report) -> list[ScopeAnswer]:
    """The questions the evidence answered, yes or no, narrowest first."""
    return [a for a in report.scope.answers if a.answer != "unknown"]


def scope_evidence(report: Report) -> list[tuple[ScopeAnswer, list[str]]]:
    """Each answered question with its evidence said in words (fact names stay in the JSON)."""
    return [(a, [plain(b, report.facts) for b in a.because]) for a in scope_answered(report)]

# The source under which the live resolver reports an alert's scrape address that names no node, or several
# (collectors/live/k8s_resolve.py): it is the reason there is no verdict, when nothing else leads.
UNRESOLVED_INSTANCE = "kubernetes:instance/"


def no_verdict_reason(report: Report) -> str | None:
    """Why a report has no verdict, when the evidence says why better than "nothing was recognised": the alert's
    instance is no node's address, so none of the node's own evidence could be read. None once anything leads."""
    if report.leading() is not None:
        return None
    return next((m.reason for m in report.missing if m.source.startswith(UNRESOLVED_INSTANCE)), None)


def verdict_line(report: Report, limit: int = 200) -> str:
    """The verdict in one line, for a root message: the leading hypothesis, its status, and its claim."""
    lead = report.leading()
    if lead is None:
        return cut_words(headline(report), limit)
    finding, h = lead
    claim = " ".join(h.claim.split())
    text = f"{STATUS_MARK[h.status]}: {finding.playbook} {SEP} {h.id}: {claim}"
    return cut_words(text, limit)


def cut_words(text: str, limit: int) -> str:
    """`text` within `limit` characters, shortened at a space with "…": a word, an id or a path is shown whole or
    not at all (a single word longer than the limit is the one thing cut)."""
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    at = head.rfind(" ")
    return (head[:at] if at > 0 else head).rstrip() + "…"


def missing_lines(report: Report) -> list[str]:
    """What could not be read, one line per reason: the same Forbidden on three nodes is one line naming them.
    A raw Forbidden (as recorded before the collector said it in words) becomes the permission and its grant."""
    by_reason: dict[str, list[str]] = {}
    for m in report.missing:
        reason = forbidden_reason(m.reason) or m.reason
        by_reason.setdefault(reason, []).append(m.source)
    return [f"{', '.join(dict.fromkeys(sources))}: {reason}" for reason, sources in by_reason.items()]
