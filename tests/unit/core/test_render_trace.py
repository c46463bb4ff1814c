"""The trace in every renderer: for each cited line, the rule that used it (which expression, where written), the
parser that read it and the line of code that emitted the fact. Real pastes from tests/realworld (their sources
are in each case.yaml)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.render.markdown import render_markdown
from bot.render.slack import mrkdwn_escape
from bot.render.slack_triage import evidence_listing
from bot.render.terminal import render_text
from bot.render.trace import read_by, use_text
from collectors.paste import artifacts_from_text
from playbooks.pipeline import analyse
from playbooks.report import Report, Traced, Use
from tests.standins.slack_blocks import DEFAULT_MAX_BLOCKS_JSON, blocks_json_size, validate_blocks

ROOT = Path(__file__).resolve().parents[3]
REALWORLD = ROOT / "tests" / "realworld"


@dataclass(frozen=True)
class Case:
    folder: str  # under tests/realworld
    fact: str
    lines: str
    parser: str
    playbook: str
    hypothesis: str
    expression: str  # the predicate of `hypothesis` that read the line


CASES = [
    # akash-network/support#244: dmesg with Xid 43, 31 and 94; the 94 confirms an uncorrectable ECC error.
    Case("gpu-xid/akash-support-244-dmesg-xid-43-31-94", "xid.codes", "13", "kernel", "gpu-xid",
         "uncorrectable-ecc", "confirm"),
    # Azure/AKS#1437: a scheduler message read by a line signal, not a structural parser.
    Case("pending/aks-issue-1437-insufficient-pods-after-upgrade", "scheduling.reasons", "3",
         "signal:scheduler-nodes-available", "pending", "too-many-pods", "confirm"),
    # azure-databricks-operator#62: `Last State: Terminated, Reason: OOMKilled` in a describe.
    Case("oom-killed/azure-databricks-operator-62-last-state-oomkilled-137", "container.last_terminated.reason", "4",
         "describe_pod", "oom-killed", "limit-too-low", "likely"),
]


def _report(case: Case) -> Report:
    text = (REALWORLD / case.folder / "evidence.txt").read_text(encoding="utf-8")
    return analyse(artifacts_from_text(text, "evidence.txt"))


def _traced(report: Report, case: Case) -> Traced:
    found = [t for t in report.trace if t.fact == case.fact and t.lines == case.lines]
    assert len(found) == 1, [(t.fact, t.lines) for t in report.trace]
    return found[0]


def _use(traced: Traced, case: Case) -> Use:
    return next(u for u in traced.uses if u.playbook == case.playbook and u.hypothesis == case.hypothesis)


def _line(place: str) -> str:
    file, _, number = place.rpartition(":")
    return (ROOT / file).read_text(encoding="utf-8").split("\n")[int(number) - 1].strip()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.folder.split("/")[0])
def test_each_cited_line_names_its_reader_the_emitting_code_and_the_rules(case: Case) -> None:
    report = _report(case)
    traced = _traced(report, case)
    assert traced.parser == case.parser
    # The emitting line is a call that hands the fact on (a sink's `add`), in a collectors module.
    assert traced.origin.startswith("collectors/parsers/") and "add(" in _line(traced.origin)
    use = _use(traced, case)
    assert use.expression == case.expression and use.status == report.leading()[1].status  # type: ignore[index]
    assert _line(use.rule).startswith(f"{case.expression}:")
    trigger = next(u for u in traced.uses if u.expression == "trigger") if any(
        u.expression == "trigger" for u in traced.uses) else None
    if trigger is not None:
        assert trigger.hypothesis is None and _line(trigger.rule).startswith("trigger:")
    # Every use is one of the expressions a playbook has, or the hypothesis's `cite:` list (no rule place).
    assert all(u.expression in ("trigger", "confirm", "likely", "rule_out", "cite") for u in traced.uses)
    assert all((u.rule == "") == (u.expression == "cite") for u in traced.uses)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.folder.split("/")[0])
def test_json_carries_the_trace_additively_and_reads_back(case: Case) -> None:
    report = _report(case)
    data = json.loads(report.to_json())
    traced = _traced(report, case)
    row = next(t for t in data["trace"] if t["fact"] == case.fact and t["lines"] == case.lines)
    assert row["origin"] == traced.origin and row["parser"] == case.parser
    assert {"playbook": case.playbook, "hypothesis": case.hypothesis, "expression": case.expression,
            "status": _use(traced, case).status, "rule": _use(traced, case).rule} in row["uses"]
    evidence = [e for f in data["findings"] for h in f["hypotheses"] for e in h["evidence"] if e["fact"] == case.fact]
    assert evidence and all(e["origin"] for e in evidence)
    finding = next(f for f in data["findings"] if f["playbook"] == case.playbook)
    assert finding["trigger"]["file"] == f"playbooks/{case.playbook}.yaml"
    assert Report.model_validate_json(report.to_json()).trace == report.trace


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.folder.split("/")[0])
def test_explain_shows_the_expression_and_the_emitting_code(case: Case) -> None:
    report = _report(case)
    traced = _traced(report, case)
    text = render_text(report, width=500, explain=True)
    place = f"{traced.artifact}:{traced.lines}"
    assert (f"read by {case.parser} from {place} ({traced.kind}), emitted at {traced.origin}; "
            f"used by {case.expression}") in text
    finding = next(f for f in report.findings if f.playbook == case.playbook)
    assert finding.trigger is not None
    assert f"{case.playbook}  triggered at {finding.trigger.file}:{finding.trigger.line}" in text
    assert "emitted at" not in render_text(report, width=500)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.folder.split("/")[0])
def test_markdown_has_one_row_per_cited_line(case: Case) -> None:
    report = _report(case)
    traced = _traced(report, case)
    md = render_markdown(report)
    table = md.split("## How it was decided\n", 1)[1].split("\n## ", 1)[0]
    rows = [r for r in table.splitlines() if r.startswith(f"| {traced.artifact}:{traced.lines} | ")]
    mine = [r for r in rows if f"| {read_by(traced.parser, traced.origin)} |" in r]
    assert len(mine) >= 1
    assert any(use_text(_use(traced, case)) in r for r in mine)
    assert len([r for r in table.splitlines() if r.startswith("| ") and "---" not in r]) == len(report.trace) + 1


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.folder.split("/")[0])
def test_slack_show_evidence_names_reader_code_and_rule(case: Case) -> None:
    report = _report(case)
    traced = _traced(report, case)
    _, blocks = evidence_listing(7, report)
    assert validate_blocks(blocks) == [] and blocks_json_size(blocks) <= DEFAULT_MAX_BLOCKS_JSON
    shown = "\n".join(b["text"]["text"] for b in blocks if b["type"] == "section")
    entry = next(e for e in shown.split("\n• ") if e.startswith(f"`{case.fact}`")
                 and f"({mrkdwn_escape(traced.artifact)}:{traced.lines})" in e)
    assert f"read by {mrkdwn_escape(read_by(traced.parser, traced.origin))}; used by " in entry
    assert mrkdwn_escape(use_text(_use(traced, case))) in entry or "more" in entry


def test_slack_show_evidence_stays_within_slacks_limits_on_a_big_report() -> None:
    # Every real gpu-xid paste at once: more cited lines than three sections hold.
    pastes = sorted(REALWORLD.glob("gpu-xid/*/evidence.txt"))
    artifacts = [a for p in pastes for a in artifacts_from_text(p.read_text(encoding="utf-8"), p.parent.name)]
    report = analyse(artifacts)
    assert len(report.trace) > 20
    _, blocks = evidence_listing(9, report)
    assert validate_blocks(blocks) == [] and blocks_json_size(blocks) <= DEFAULT_MAX_BLOCKS_JSON
    sections = [b for b in blocks if b["type"] == "section"]
    assert len(sections) <= 3 and all(len(b["text"]["text"]) <= 3000 for b in sections)
    assert "more lines cut" in blocks[-1]["elements"][0]["text"]
    # The lines a supported status rests on come first.
    first = sections[0]["text"]["text"].split("\n• ")[1]
    assert "→ confirmed" in first or "→ likely" in first


def test_a_joined_fact_names_the_join_that_made_it() -> None:
    # kubernetes/kubernetes#106304: a Service selecting app-id while its pods are labelled name; the verdict comes
    # from joining the Service with the pods, so the code that emitted it is the join, not either parser.
    report = _report(Case("service-unreachable/k8s-issue-106304-selector-app-id-vs-pod-label-name",
                          "service.selector_matches_pods", "43", "", "", "", ""))
    traced = next(t for t in report.trace if t.fact == "service.selector_matches_pods")
    assert traced.parser == "join:service-backends"
    assert traced.origin.startswith("collectors/joins.py:") and "selector_matches_pods" in _line(traced.origin)
