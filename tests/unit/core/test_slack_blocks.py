"""Golden Block Kit JSON per playbook, and Slack's limits on the worst case.

Regenerate after an intended change with: UPDATE_GOLDEN=1 pytest tests/unit/core/test_slack_blocks.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.render.slack import SlackRenderer, blocks_json, mrkdwn_escape
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.report import Finding, HypothesisResult, Missing, Report, Target

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "slack"
ONE_PER_PLAYBOOK = ["oom-trainer-limit", "pending-gpu-fragmentation", "latency-cpu-throttling",
                    "nccl-rank-pending-no-gang", "xid-79-fallen-off-bus", "crashloop-liveness-model-load",
                    "imagepull-tag-not-pushed", "evicted-node-memory-pressure"]


@pytest.mark.parametrize("incident", ONE_PER_PLAYBOOK)
def test_golden_blocks(incident: str) -> None:
    blocks = blocks_json(replay(load_incident(INCIDENT_DIR / incident)), run_id="run-42")
    path = GOLDEN / f"{incident}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(blocks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert blocks == json.loads(path.read_text(encoding="utf-8"))
    assert len(blocks) <= 50
    assert blocks[-1]["type"] == "actions" and {e["value"] for e in blocks[-1]["elements"]} == {"run-42"}


def test_huge_report_stays_within_slack_limits() -> None:
    big = "x" * 900
    lead = HypothesisResult(id="limit-too-low", status="confirmed", score=0.97, claim="<b>" + big,
                            because=[f"fact.{i} = {big}" for i in range(30)], falsified_by=big * 5,
                            next_checks=[big] * 20, mitigations=[big] * 20)
    rest = [HypothesisResult(id=f"h-{i}", status="unknown", score=0.3, claim="c", falsified_by="f")
            for i in range(200)]
    report = Report(target=Target(service="s" * 300), symptoms=["oom-killed"],
                    findings=[Finding(playbook="oom-killed", title="t", hypotheses=[lead, *rest])],
                    facts={}, artifacts=[], missing=[Missing(source="p" * 500, reason="r" * 500)] * 20)
    blocks = blocks_json(report)
    assert len(blocks) <= 50
    for block in blocks:
        for text in _texts(block):
            assert len(text) <= 3000
    # A name too long for the header is left out whole, never cut mid-word (it is in full in the report's JSON).
    assert blocks[0]["text"]["text"] == "Triage of service…" and len(blocks[0]["text"]["text"]) <= 150
    assert "&lt;b&gt;" in blocks[1]["text"]["text"]
    checks = next(b for b in blocks if b.get("text", {}).get("text", "").startswith("*Next checks*"))
    assert checks["text"]["text"].count("```") % 2 == 0


def _texts(block: dict[str, object]) -> list[str]:
    found: list[str] = []
    text = block.get("text")
    if isinstance(text, dict):
        found.append(str(text["text"]))
    for element in block.get("elements", []) or []:  # type: ignore[union-attr]
        if isinstance(element, dict) and "text" in element:
            inner = element["text"]
            found.append(str(inner["text"] if isinstance(inner, dict) else inner))
    return found


def test_operator_template_override(tmp_path: Path) -> None:
    (tmp_path / "falsify.md.j2").write_text("*Prove me wrong*: {{ lead.falsified_by|mrkdwn }}")
    blocks = [b.to_dict() for b in SlackRenderer(tmp_path).blocks(replay(load_incident(INCIDENT_DIR /
                                                                                     "oom-trainer-limit")))]
    assert any(b.get("text", {}).get("text", "").startswith("*Prove me wrong*:") for b in blocks)


def test_escape() -> None:
    assert mrkdwn_escape("a < b & c > d") == "a &lt; b &amp; c &gt; d"
