"""Reports keep what matters (issue 28, point 5), checked in every renderer on real cases.

The evidence comes from tests/realworld (each case's case.yaml names the public thread it was pasted in) and the
recorded incidents under drills/incidents; the synthetic inputs below are property tests of the wrapping and
shortening rules only.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from bot.cli.main import build_parser
from bot.render.common import SEP, cut_words, headline, notes
from bot.render.drills.drill_terminal import artifact_in_full, prompt
from bot.render.drills.replay_table import summary_lines
from bot.render.evidence import CONTEXT, QUOTE_LIMIT, sentence, shorten, why
from bot.render.markdown import render_markdown
from bot.render.slack import _clip, blocks_json
from bot.render.sources import link, markdown_link, with_link
from bot.render.terminal import render_text
from bot.render.wrap import breaks, wrap_plain
from collectors.factset import FactSet
from collectors.models import Citation, Fact
from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from collectors.text import find_spans
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.engine import template_variables
from playbooks.files import playbook_files
from playbooks.pipeline import analyse, default_playbooks
from playbooks.report import Report, Target

REALWORLD = Path(__file__).resolve().parents[2] / "realworld"
# https://github.com/kubernetes/kubernetes/issues/116133: the meaning sits past column 80 ("untolerated taint {...}")
TAINT = REALWORLD / "pending" / "k8s-issue-116133-untolerated-control-plane-taint"
# https://github.com/projectcalico/calico/issues/9215: the cause is the line's last word ("Unauthorized")
CALICO = REALWORLD / "container-creating" / "calico-issue-9215-unauthorized-not-ip-exhaustion"
# https://github.com/NVIDIA/gpu-operator/issues/1146: syslog lines whose prefix names the host, worker4
SYSLOG_XID = REALWORLD / "gpu-xid" / "gpu-operator-issue-1146-xid-48-64-syslog"


def _case(folder: Path) -> Report:
    path = folder / "evidence.txt"
    return analyse(artifacts_from_text(path.read_text(encoding="utf-8"), str(path), kind=None))


def _flat(text: str) -> str:
    return " ".join(text.split())


# --- a quoted line is wrapped, never cut; the matched words always show -------------------------------------------

def test_a_quoted_line_is_shown_whole_in_every_renderer() -> None:
    report = _case(TAINT)
    assert report.leading() is not None and report.leading()[1].id == "untolerated-taint"  # type: ignore[index]
    meaning = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }. preemption: 0/1 nodes"
    assert meaning in _flat(render_text(report, width=80))
    assert meaning in render_markdown(report)
    why_block = next(b for b in blocks_json(report) if b.get("text", {}).get("text", "").startswith("*Why*"))
    assert meaning in why_block["text"]["text"]
    assert "…" not in why_block["text"]["text"]


def test_the_word_that_says_why_is_kept_from_parser_to_quote() -> None:
    text = (CALICO / "evidence.txt").read_text(encoding="utf-8")
    line = text.splitlines()[1].strip()
    assert len(line) > 200  # the parser cut it at 200 ("for sandbo…"), the renderer at 160
    facts = [f for a in artifacts_from_text(text, "calico", kind=None) for f in parse_artifact(a).facts
             if f.name == "sandbox.errors"]
    assert facts and facts[0].excerpt.endswith("connection is unauthorized: Unauthorized")


def test_the_matched_words_are_found_as_written_or_word_by_word() -> None:
    line = "0/1 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }."
    (start, end), = find_spans(line, ["untolerated-taint"])
    assert line[start:end] == "untolerated taint"
    xid = "NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error"
    (start, end), = find_spans(xid, [48])
    assert xid[start:end] == "48"
    assert find_spans(xid, True) == []


def test_a_very_long_line_keeps_its_span_with_context_and_says_what_it_left_out() -> None:
    line = "a" * 1000 + " Unauthorized " + "b" * 1000
    at = line.index("Unauthorized")
    short, spans = shorten(line, [(at, at + len("Unauthorized"))])
    assert [short[a:b] for a, b in spans] == ["Unauthorized"]
    left_out = [int(n) for n in re.findall(r"\[… (\d+) chars …\]", short)]
    assert len(left_out) == 2 and sum(left_out) == len(line) - (2 * CONTEXT + len("Unauthorized"))
    assert "…" not in line and len(short) < len(line)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="ab c{}:/", min_size=QUOTE_LIMIT + 1, max_size=3000), st.data())
def test_shortening_never_hides_a_span(line: str, data: st.DataObject) -> None:
    starts = sorted(set(data.draw(st.lists(st.integers(0, len(line) - 5), min_size=1, max_size=3))))
    spans = [(s, s + 4) for s in starts if all(s >= t + 4 for t in starts if t < s)]
    short, moved = shorten(line, spans)
    assert [short[a:b] for a, b in moved] == [line[a:b] for a, b in spans]


# --- nothing copyable is split -----------------------------------------------------------------------------------

@settings(max_examples=80, deadline=None)
@given(st.lists(st.text(alphabet="abc/-_.:{}", min_size=1, max_size=40), min_size=1, max_size=30),
       st.integers(8, 60))
def test_wrapping_breaks_only_at_spaces(tokens: list[str], width: int) -> None:
    text = " ".join(tokens)
    lines = wrap_plain(text, width)
    assert " ".join(lines).split() == text.split()  # every token whole, in order
    assert all(len(line) <= width or " " not in line for line in lines)
    assert breaks(text, width) == sorted(breaks(text, width))


def test_the_terminal_never_splits_a_path_a_command_or_a_quote() -> None:
    for report in (_case(TAINT), replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))):
        for width in (60, 80):
            shown = render_text(report, width=width).splitlines()
            lead = report.leading()
            assert lead is not None
            places = {q.place for said in why(lead[1], report.facts) for q in said.quotes}
            for place in places:
                assert any(place in line for line in shown), place
            for check in lead[1].next_checks:
                assert any(line.strip() == check for line in shown), check
            words = {w for line in shown for w in line.split()}
            assert "cri-container" not in words and "untolerated-control-plane-taint/" not in words


def test_replay_all_lists_each_incident_id_whole() -> None:
    rows = [{"id": "crashloop-liveness-model-load", "difficulty": "medium", "expected": "crash-loop/x",
             "leading": "crash-loop/liveness-probe-kill", "status": "confirmed", "contradictions": [], "match": True},
            {"id": "creating-pod-cidr-exhausted", "difficulty": "medium", "expected": "container-creating/y",
             "leading": "-", "status": "-", "contradictions": ["container-creating/z"], "match": False}]
    console = Console(width=30, record=True, color_system=None)
    for line in summary_lines(rows):
        console.print(line, soft_wrap=True)
    out = console.export_text().splitlines()
    assert any("crashloop-liveness-model-load" in line for line in out)
    assert any("creating-pod-cidr-exhausted" in line and "container-creating/z" in line for line in out)
    assert out[-1] == "1/2 incidents lead with their ground-truth hypothesis."


def test_slack_clips_at_a_line_never_mid_command() -> None:
    command = "kubectl get pods -A -o wide --field-selector spec.nodeName=gpu-node-7"
    text = "\n".join([command] * 80)
    clipped = _clip(text)
    assert len(clipped) <= 3000
    body = clipped.split("\n_…truncated")[0]
    assert all(line == command for line in body.splitlines())


def test_symptom_help_lists_every_playbook_id_unbroken(capsys: pytest.CaptureFixture[str]) -> None:
    assert [f.stem for f in playbook_files()] == sorted(p.spec.id for p in default_playbooks())
    with pytest.raises(SystemExit):
        build_parser().parse_args(["analyze", "--help"])
    helped = capsys.readouterr().out
    words = set(helped.replace(",", " ").split())
    # each id whole: argparse no longer breaks "error-rate" at its hyphen
    assert {f.stem for f in playbook_files()} <= words


# --- node conditions list only the abnormal ones -----------------------------------------------------------------

def test_node_conditions_say_only_the_abnormal_ones() -> None:
    assert sentence("node.conditions", ["MemoryPressure"]) == "The node reports MemoryPressure as abnormal."
    # Any fact whose meaning lists its possible values says only the value seen.
    assert sentence("probe.failures", ["liveness"]) == "Probe kinds that failed: liveness."
    report = replay(load_incident(INCIDENT_DIR / "evicted-node-memory-pressure"))
    for shown in (render_text(report, width=100), render_markdown(report), json.dumps(blocks_json(report))):
        assert "DiskPressure" not in shown and "PIDPressure" not in shown
        assert "The node reports MemoryPressure as abnormal." in shown


# --- one lead, the others that agree with it as supporting -------------------------------------------------------

def test_one_confirmed_lead_with_its_supporting_hypotheses() -> None:
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    assert report.lead is not None
    # Both confirmed: the refinement leads and its parent supports it (docs/playbooks.md, "Ranking", rule 7).
    assert (report.lead.hypothesis, report.lead.supporting) == ("host-memory-underestimated", ["limit-too-low"])
    data = json.loads(report.to_json())
    assert data["lead"] == {"playbook": "oom-killed", "hypothesis": "host-memory-underestimated",
                            "status": "confirmed", "supporting": ["limit-too-low"]}
    assert Report.model_validate(data).lead == report.lead  # the added field reads back (and is recomputed)
    text = render_text(report, width=100)
    assert text.count("✔ confirmed") == 1
    assert text.index("↳ supporting (confirmed, 0.97): limit-too-low") < text.index("\nWhy\n")
    markdown = render_markdown(report)
    assert markdown.count("✔ confirmed") == 1 and "- ↳ supporting (confirmed, 0.97): limit-too-low" in markdown
    blocks = blocks_json(report)
    assert "↳ supporting (confirmed, 0.97): limit-too-low" in blocks[1]["text"]["text"]
    others = json.dumps(blocks[2:])
    assert ":large_green_circle:" not in others  # no second green verdict further down


def test_a_sibling_alternative_is_not_called_supporting() -> None:
    report = _case(SYSLOG_XID)
    assert report.lead is not None and report.lead.hypothesis == "gpu-fallen-off-bus"
    # uncorrectable-ecc is another branch of gpu-xid, not a refinement of the lead: it stays an other hypothesis.
    assert "uncorrectable-ecc" not in report.lead.supporting


# --- template variables are filled from every place the evidence names them --------------------------------------

def test_a_syslog_host_fills_node_in_next_checks() -> None:
    report = _case(SYSLOG_XID)
    assert report.facts["xid.hosts"] == ["worker4"]
    checks = [c for f in report.findings for h in f.hypotheses for c in h.next_checks]
    assert "kubectl describe node worker4 | grep -A8 -E '^(Capacity|Allocatable)'" in checks
    assert not any("<node>" in c for c in checks)


def test_two_hosts_name_no_one_node() -> None:
    def xid_hosts(hosts: list[str]) -> FactSet:
        return FactSet([Fact(name="xid.hosts", value=hosts, citation=Citation(artifact="k", start=1, end=1))])

    assert template_variables(Target(), xid_hosts(["a", "b"]))["node"] is None
    assert template_variables(Target(), xid_hosts(["a"]))["node"] == "a"
    assert template_variables(Target(node="n"), xid_hosts(["a"]))["node"] == "n"


# --- the small points --------------------------------------------------------------------------------------------

def test_nothing_recognised_is_said_once() -> None:
    report = analyse(artifacts_from_text("hello there, nothing to see\n", "paste", kind=None))
    assert headline(report) == "Nothing in this evidence was recognised."
    assert notes(report)[0].startswith("Looked for these kinds of output:")
    assert render_text(report).count("was recognised") == 1
    assert render_markdown(report).count("was recognised") == 1


def test_the_drill_prompt_has_no_colour_code_look_alike() -> None:
    assert prompt(0) == "drill 0:00> "
    assert prompt(125) == "drill 2:05> "
    assert "[0m" not in prompt(0)


def test_source_references_can_be_opened() -> None:
    assert link("seed 004, scenario 1 (004:1371-1451)") == "docs/sources.md#the-seed-documents"
    assert link("seed-digest §1.15") == "docs/sources.md#the-seed-digest"
    assert link("NVIDIA Xid catalog (docs.nvidia.com/deploy/xid-errors), Xid 45") == \
        "https://docs.nvidia.com/deploy/xid-errors"
    assert with_link("https://github.com/NVIDIA/nccl/issues/525") == "https://github.com/NVIDIA/nccl/issues/525"
    assert markdown_link("seed 000:27") == "[seed 000:27](docs/sources.md#the-seed-documents)"
    docs = (Path(__file__).resolve().parents[3] / "docs" / "sources.md").read_text(encoding="utf-8")
    for heading in ("## The seed documents", "## The seed digest", "## Public references"):
        assert heading in docs  # the anchors above point at these
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    # The lead's sources: host-memory-underestimated cites the scenario's sizing lines.
    assert "seed 004, scenario 1 (004:1402-1417) <docs/sources.md#the-seed-documents>" in render_text(report, 120)
    assert "- [seed 004, scenario 1 (004:1402-1417)](docs/sources.md#the-seed-documents)" in render_markdown(report)


def test_one_line_summaries_shorten_at_a_word() -> None:
    assert cut_words("pod training-job-xyz-7d9f on gpu-node-2", 30) == "pod training-job-xyz-7d9f on…"
    assert cut_words("short", 30) == "short"
    assert len(cut_words("x" * 50, 30)) == 30  # one word longer than the limit is the only thing cut


def test_a_playbook_and_hypothesis_name_stays_together() -> None:
    name = f"crash-loop {SEP} corrupt-model-artifact,"
    lines = wrap_plain(f"Ruled out: node-oom, gpu-oom, kubelet-eviction, {name} x", 50)
    assert any(name in line for line in lines)


def test_drill_evidence_lines_and_commands_go_out_whole() -> None:
    incident = load_incident(INCIDENT_DIR / "oom-trainer-limit")
    dmesg = next(a for a in incident.artifacts if a.id == "dmesg.txt")
    console = Console(width=60, record=True, color_system=None)
    artifact_in_full(dmesg, console)
    shown = console.export_text().splitlines()
    long_line = dmesg.content.splitlines()[120]
    assert len(long_line) > 60 and long_line in shown  # line 121, the oom-kill line, on one line
    assert f"$ {dmesg.command}" in shown


# https://github.com/kubernetes/kubernetes/issues/45419: `journalctl -u kubelet` lines whose prefix names the node
JOURNAL_PLEG = REALWORLD / "node-not-ready" / "k8s-issue-45419-pleg-node-became-not-ready-journal"


def test_a_kubelet_journal_host_fills_node_in_next_checks() -> None:
    report = _case(JOURNAL_PLEG)
    assert report.lead is not None and report.lead.hypothesis == "pleg-unhealthy"
    lead = report.leading()
    assert lead is not None
    assert "ssh ip-10-50-20-208.ec2.internal crictl ps -a | wc -l" in lead[1].next_checks
    assert not any("<node>" in check for check in lead[1].next_checks)


def test_the_rules_narrative_says_what_supports_the_lead() -> None:
    from bot.assist.narrate import deterministic_narrative

    text = deterministic_narrative(replay(load_incident(INCIDENT_DIR / "oom-trainer-limit")))
    assert text.startswith("What we know: `host-memory-underestimated` is confirmed: ")
    assert "`limit-too-low` is confirmed, supporting `host-memory-underestimated`: " in text


def test_explain_prints_each_rule_on_one_line() -> None:
    report = replay(load_incident(INCIDENT_DIR / "oom-trainer-limit"))
    lead = report.leading()
    assert lead is not None and lead[1].rule is not None
    shown = render_text(report, width=80, explain=True).splitlines()
    assert f"    {lead[1].rule.cel}" in shown and len(lead[1].rule.cel) > 80


def test_drill_list_keeps_incident_ids_whole() -> None:
    from bot.render.drills.drill_terminal import incident_list
    from drills.recorded.catalog import load_catalog

    found = load_catalog(None)
    console = Console(width=70, record=True, color_system=None)
    incident_list(found, None, None, console)
    shown = console.export_text()
    for entry in found.entries:
        assert entry.meta.id in shown, entry.meta.id


def test_slack_evidence_listing_quotes_whole_lines() -> None:
    from bot.render.slack_triage import evidence_listing

    report = _case(TAINT)
    text = json.dumps(evidence_listing(7, report))
    assert "untolerated taint {node-role.kubernetes.io/control-plane: }" in text


def test_slack_drill_sections_cut_at_a_line() -> None:
    from bot.render.drills.slack_drill import _fit

    command = "kubectl get events -n ml --field-selector involvedObject.name=training-job-xyz"
    fitted = _fit("\n".join([command] * 100), 1000)
    assert all(line == command for line in fitted.splitlines()[:-1]) and fitted.endswith("_…cut_")
