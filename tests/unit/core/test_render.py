"""Renderers show the same report as a note a person reads: the leader, its evidence in words with the raw line
and its place, the falsifier, copyable checks, the rest folded, and what was missing."""

from __future__ import annotations

import json
import re

import pytest

from bot.render.evidence import sentence, target_words, why
from bot.render.markdown import render_markdown
from bot.render.slack import blocks_json
from bot.render.terminal import render_text
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.report import ArtifactRef, Evidence, Finding, HypothesisResult, Missing, Report, Rule, Target

ALL_INCIDENTS = sorted(p.name for p in INCIDENT_DIR.iterdir() if (p / "incident.yaml").exists())
# `name = value (file:line)`: the fact-dump form the prose must not show.
FACT_DUMP = re.compile(r"\b[a-z_]+\.[a-z_.]+ = .+\([\w.-]+:\d")


def report() -> Report:
    xid_line = "NVRM: Xid (PCI:0000:2b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."
    lead = HypothesisResult(
        id="gpu-fallen-off-bus", status="confirmed", score=0.98, claim="GPU 0000:2b:00 fell off the bus",
        because=["xid.codes = [79, 45] (dmesg.txt:3)", "gpu.unhealthy_count = 0 (node.txt:9)"],
        evidence=[Evidence(fact="xid.codes", value=[79, 45], artifact="dmesg.txt", lines="3", excerpt=xid_line,
                           kind="kernel-log", parser="kernel"),
                  Evidence(fact="gpu.unhealthy_count", value=0, artifact="node.txt", lines="9",
                           excerpt="nvidia.com/gpu: 8", kind="describe-node", parser="describe_node")],
        decided_by="confirm", rule=Rule(file="playbooks/gpu-xid.yaml", line=12, cel="79 in xid.codes"),
        falsified_by="nvidia-smi still lists the GPU",
        next_checks=["kubectl describe node gpu-node-2 | grep -A8 -E '^(Capacity|Allocatable)' " + "x" * 80],
        mitigations=["Cordon and drain gpu-node-2."])
    other = HypothesisResult(id="xid-45-after-effect", status="ruled-out", score=0.02, claim="teardown only",
                             because=["xid.primary_codes = [79] (dmesg.txt:3)"], falsified_by="x")
    unknowns = [HypothesisResult(id=f"open-{i}", status="unknown", score=0.33, claim="too hot", falsified_by="y",
                                 needs=["gpu.temp_c"]) for i in range(5)]
    return Report(
        target=Target(namespace="ml", node="gpu-node-2", service="trainer", cluster="gpu-prod"),
        symptoms=["gpu-xid"],
        findings=[Finding(playbook="gpu-xid", title="GPU Xid", hypotheses=[lead, *unknowns, other])],
        facts={"xid.codes": [79, 45]},
        artifacts=[ArtifactRef(id="dmesg.txt", kind="kernel-log", source="recording", command="dmesg -T")],
        missing=[Missing(source="prometheus", reason="timeout after 5s")],
    )


def test_why_says_each_fact_in_words_with_the_raw_line_and_its_place() -> None:
    r = report()
    said = why(r.findings[0].hypotheses[0], r.facts)
    # gpu.unhealthy_count is cited but the deciding rule does not read it: it supports nothing here.
    assert [s.fact for s in said] == ["xid.codes"]
    assert said[0].sentence == "The NVIDIA driver logged Xid 79, 45."
    assert [(q.line, q.place) for q in said[0].quotes] == [
        ("NVRM: Xid (PCI:0000:2b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.", "dmesg.txt:3")]


def test_sentences_cover_booleans_ratios_and_unlisted_facts() -> None:
    assert sentence("gpu.fallen_off_bus", True) == "A GPU fell off the bus: the driver can no longer reach it."
    assert sentence("gpu.fallen_off_bus", False) == "No GPU fell off the bus."
    assert sentence("cpu.throttled_ratio", 0.6436) == "64% of CPU periods were throttled."
    assert sentence("container.memory_limit_bytes", 214748364800) == "The memory limit is 200 GiB."
    # Not in sentences.yaml: said from the vocabulary's meaning, never as a fact name.
    assert sentence("gpu.capacity_total", 8) == "nvidia.com/gpu capacity summed over nodes seen: 8."
    assert sentence("pod.phase", "Pending") == "Pod phase: Pending."


def test_target_in_words_on_one_line() -> None:
    assert target_words(report()) == "service trainer in namespace ml, on node gpu-node-2 (cluster gpu-prod)"
    assert target_words(Report(target=Target(), symptoms=[], findings=[], facts={}, artifacts=[])) == \
        "pasted evidence"
    assert target_words(Report(target=Target(pod="p-0", namespace="ml"), symptoms=[], findings=[], facts={},
                               artifacts=[])) == "pod p-0 in namespace ml"


def test_terminal_is_a_note_readable_at_80_columns_with_whole_commands() -> None:
    r = report()
    text = render_text(r, width=80)
    lines = text.splitlines()
    assert lines[0] == "Triage of service trainer in namespace ml, on node gpu-node-2 (cluster gpu-prod)"
    at = lines.index("  • The NVIDIA driver logged Xid 79, 45.")
    assert lines[at + 1:at + 3] == ["      “NVRM: Xid (PCI:0000:2b:00): 79, pid='<unknown>', name=<unknown>, GPU has",
                                    "      fallen off the bus.”  (dmesg.txt:3)"]
    # The command is one line, whole, however wide: copy and paste gets all of it.
    assert "  " + r.findings[0].hypotheses[0].next_checks[0] in lines
    assert not set("│┃┏┗╭╰━─") & set(text), "no box borders"
    assert "xid.codes" not in text and "gpu.unhealthy_count" not in text
    # Five open hypotheses fold into one line naming what would settle them.
    folded = [line for line in lines if "Not settled" in line]
    assert folded == ["  Not settled (5): open-0, open-1, open-2, open-3, open-4; metrics (Prometheus,"]
    assert text.count("open-") == 5
    assert "Ruled out: xid-45-after-effect." in text
    assert "  - prometheus: timeout after 5s" in lines
    prose = [line for line in lines if line.strip() and line != "  " + r.findings[0].hypotheses[0].next_checks[0]]
    assert all(len(line) <= 80 for line in prose)


def test_explain_keeps_the_fact_names() -> None:
    text = render_text(report(), width=120, explain=True)
    assert "xid.codes = [79, 45]  read by kernel from dmesg.txt:3 (kernel-log)" in text


def test_markdown_is_the_same_note() -> None:
    md = render_markdown(report())
    assert md.startswith("# Triage of service trainer in namespace ml, on node gpu-node-2 (cluster gpu-prod)\n")
    assert "- The NVIDIA driver logged Xid 79, 45.\n  > `NVRM: Xid (PCI:0000:2b:00): 79," in md
    assert "(dmesg.txt:3)" in md and "xid.codes" not in md
    assert "- Not settled (5): open-0, open-1, open-2, open-3, open-4; metrics (Prometheus, DCGM) would settle them." \
        in md
    assert "## Missing evidence\n\n- prometheus: timeout after 5s" in md


def test_no_findings_headline() -> None:
    empty = Report(target=Target(), symptoms=[], findings=[], facts={"pod.phase": "Running"}, artifacts=[])
    assert "No playbook matched this evidence." in render_text(empty)
    nothing = Report(target=Target(), symptoms=[], findings=[], facts={}, artifacts=[], notes=["Looked for X."])
    text = render_text(nothing)
    assert "Nothing in this evidence was recognised." in text
    assert "Looked for X." in text


def test_a_report_from_the_watch_cache_says_how_old_it_was_everywhere() -> None:
    from bot.render.slack import blocks_json
    from playbooks.report import CacheState

    plain = report()
    cached = report().model_copy(update={"cache": CacheState(age_seconds=12.4, namespaces=["ml", "shop"])})
    line = "Cluster objects from the watch cache (ml, shop), 12s old"
    assert line in render_text(cached, width=160) and line not in render_text(plain, width=160)
    assert f"_{line}_" in render_markdown(cached) and "watch cache" not in render_markdown(plain)
    assert line in str(blocks_json(cached)) and "watch cache" not in str(blocks_json(plain))
    doc = cached.model_dump(mode="json")
    assert doc["cache"] == {"age_seconds": 12.4, "namespaces": ["ml", "shop"]}
    assert plain.model_dump(mode="json")["cache"] is None
    every_namespace = report().model_copy(update={"cache": CacheState(age_seconds=0.0)})
    assert "(all namespaces), 0s old" in render_markdown(every_namespace)


@pytest.mark.parametrize("incident", ALL_INCIDENTS)
def test_every_recorded_incident_reads_as_a_note(incident: str) -> None:
    r = replay(load_incident(INCIDENT_DIR / incident))
    text = render_text(r, width=80)
    slack = json.dumps(blocks_json(r), ensure_ascii=False)
    md = render_markdown(r)
    for shown in (text, slack, md):
        assert not FACT_DUMP.search(shown), FACT_DUMP.search(shown)
    lead = r.leading()
    assert lead is not None
    # The header names the target in words on one line.
    assert text.splitlines()[0].startswith("Triage of ") and "=" not in text.splitlines()[0]
    # At most one line of open hypotheses; no hypotheses table.
    assert text.count("Not settled (") <= 1
    assert len(text.splitlines()) < 120, len(text.splitlines())
    for check in lead[1].next_checks:
        assert "  " + check in text.splitlines(), check
        # Names the evidence gives are used: never a placeholder for a pod, namespace or node that is known.
        variables = {"pod": r.target.pod or r.facts.get("pod.name"),
                     "namespace": r.target.namespace or r.facts.get("pod.namespace"),
                     "node": r.target.node or r.facts.get("node.name") or r.facts.get("pod.node")}
        for name, value in variables.items():
            if value:
                assert f"<{name}>" not in check, (check, value)


def _keys(value: object, prefix: str = "") -> set[str]:
    """Every key path in a JSON value; list items share their list's path."""
    if isinstance(value, dict):
        return {k for key, v in value.items() for k in {prefix + key} | _keys(v, prefix + key + ".")}
    if isinstance(value, list):
        return {k for item in value for k in _keys(item, prefix)}
    return set()


def test_the_json_contract_keeps_every_documented_field() -> None:
    """The prose changed; the JSON report did not: every field docs/report-json.md shows is still there."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[3] / "docs" / "report-json.md").read_text(encoding="utf-8")
    documented = json.loads(doc.split("```json\n", 1)[1].split("```", 1)[0])
    shown = json.loads(replay(load_incident(INCIDENT_DIR / "oom-trainer-limit")).to_json())
    # `cache` is null outside serve's watch cache, and `narrowing` when nothing is open (this incident is confirmed
    # with nothing left open), so a replay shows none of their fields; tests/unit/playbooks/test_layers.py has them.
    missing = {k for k in _keys(documented) - _keys(shown) if not k.startswith(("facts.", "cache.", "narrowing."))}
    assert "narrowing" in shown
    assert not missing, missing
    lead = shown["findings"][0]["hypotheses"][0]
    assert lead["because"][0] == "container.last_terminated.reason = OOMKilled (describe-pod.txt:33)"
