"""Reading a finding the way the playbook tests assert on it."""

from __future__ import annotations

from playbooks.report import Finding


def statuses(finding: Finding) -> dict[str, str]:
    """Every explored hypothesis's status by id."""
    return {h.id: h.status for h in finding.hypotheses}


def leader(finding: Finding) -> str:
    """The best hypothesis that is not ruled out (hypotheses come sorted by score)."""
    return next(h.id for h in finding.hypotheses if h.status != "ruled-out")
