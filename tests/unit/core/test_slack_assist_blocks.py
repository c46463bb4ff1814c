"""Golden Block Kit JSON for what the optional model writes: narratives (report and debrief) and /ask answers;
escaping of generated text, and Slack's limits.

Regenerate after an intended change with: UPDATE_GOLDEN=1 pytest tests/unit/core/test_slack_assist_blocks.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from bot.assist.ask import Answer
from bot.assist.corpus import Hit, Passage
from bot.assist.narrate import Narrative, deterministic_narrative
from bot.render.slack_assist import answer_blocks, answer_payload, narrative_blocks, narrative_payload
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay

GOLDEN = Path(__file__).resolve().parents[2] / "golden" / "slack"


def _rules(incident: str) -> Narrative:
    text = deterministic_narrative(replay(load_incident(INCIDENT_DIR / incident)))
    return Narrative(text=text, generated=False, model="fake:test", fallback="the model failed: no answer within 30s")


GENERATED = Narrative(text="What we know: `limit-too-low` is **confirmed**.\nWhat to check next: the limit.",
                      generated=True, model="openai:gpt-4o-mini")


@pytest.mark.parametrize(("name", "narrative", "template"), [
    ("narrative-rules-oom-trainer-limit", _rules("oom-trainer-limit"), "narrative"),
    ("narrative-generated", GENERATED, "narrative"),
    ("debrief-narrative-generated", GENERATED, "debrief_narrative"),
])
def test_golden_narrative_blocks(name: str, narrative: Narrative, template: str) -> None:
    blocks = [b.to_dict() for b in narrative_blocks(narrative, template=template)]
    path = GOLDEN / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(blocks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert blocks == json.loads(path.read_text(encoding="utf-8"))
    assert [b["type"] for b in blocks] == ["section", "context"]
    assert blocks[1]["elements"][0]["text"].endswith(narrative.label)


def test_generated_text_cannot_mention_or_link_anyone() -> None:
    hostile = Narrative(text="<!channel> see <https://evil.example|the fix> & **now**", generated=True,
                        model="m <@U0BOSS>")
    section, context = (b.to_dict() for b in narrative_blocks(hostile))
    assert "&lt;!channel&gt; see &lt;https://evil.example|the fix&gt; &amp; *now*" in section["text"]["text"]
    assert "<" not in section["text"]["text"] and "<" not in context["elements"][0]["text"]
    payload = narrative_payload(hostile)
    assert payload["text"].startswith("&lt;!channel&gt;")


def test_a_huge_narrative_stays_within_slacks_limits() -> None:
    huge = Narrative(text="```" + "&" * 5000, generated=False, fallback="x" * 4000)
    for block in narrative_payload(huge)["blocks"]:
        texts = [block["text"]["text"]] if "text" in block else [e["text"] for e in block["elements"]]
        assert all(len(t) <= 3000 for t in texts)
    section = narrative_payload(huge)["blocks"][0]["text"]["text"]
    assert section.count("```") % 2 == 0  # a cut code fence is closed again


def test_operator_template_override(tmp_path: Path) -> None:
    (tmp_path / "narrative.md.j2").write_text("*TL;DR*{% if not generated %} (rules){% endif %}: {{ text|mrkdwn }}")
    (tmp_path / "narrative_label.md.j2").write_text("{{ 'AI' if generated else 'rules: ' ~ fallback }}")
    section, context = (b.to_dict() for b in narrative_blocks(_rules("oom-trainer-limit"), tmp_path))
    assert section["text"]["text"].startswith("*TL;DR* (rules): What we know:")
    assert context["elements"][0]["text"] == "rules: the model failed: no answer within 30s"


# ------------------------------------------------------------------------------------------------------------
# /ask
# ------------------------------------------------------------------------------------------------------------

XID = Passage(id="xid:79", kind="xid", title="Xid 79: GPU has fallen off the bus",
              cite="collectors/catalogs/xid.yaml#79",
              text="NVIDIA Xid 79 (GPU has fallen off the bus), severity critical. Meaning: the GPU stopped "
                   "answering over PCIe. " + "Drain the node, then power-cycle it. " * 12)
PLAYBOOK = Passage(id="playbook:gpu-xid#gpu-fallen-off-bus", kind="playbook", title="gpu fallen off bus",
                   cite="playbooks/gpu-xid.yaml#gpu-fallen-off-bus", text="A GPU on <node> stopped answering.")
HITS = [Hit(passage=XID, score=3.7135), Hit(passage=PLAYBOOK, score=3.1887)]


def _answer(**fields: object) -> Answer:
    values: dict[str, object] = {"question": "what does xid 79 mean", "hits": HITS,
                                 "fallback": "no model is configured"}
    values.update(fields)
    return Answer.model_validate(values)


@pytest.mark.parametrize(("name", "answer"), [
    ("ask-passages", _answer()),
    ("ask-generated", _answer(text="The GPU fell off the bus [1]; **drain** the node [2].", generated=True,
                              model="fake:test", fallback=None)),
    ("ask-nothing", _answer(hits=[], fallback="no passage matched the question", notes=["no docs folder"])),
])
def test_golden_answer_blocks(name: str, answer: Answer) -> None:
    blocks = [b.to_dict() for b in answer_blocks(answer)]
    path = GOLDEN / f"{name}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(blocks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert blocks == json.loads(path.read_text(encoding="utf-8"))


def test_answer_structure() -> None:
    generated = answer_payload(_answer(text="Drain it [1].", generated=True, model="fake:test", fallback=None))
    blocks = generated["blocks"]
    assert [b["type"] for b in blocks] == ["section", "context", "divider", "section", "section"]
    assert blocks[1]["elements"][0]["text"] == (":robot_face: Generated by fake:test from the passages below — "
                                                "check them")
    assert blocks[3]["text"]["text"].startswith("*[1] Xid 79: GPU has fallen off the bus*")
    assert "`collectors/catalogs/xid.yaml#79`" in blocks[3]["text"]["text"]
    assert "&lt;node&gt;" in blocks[4]["text"]["text"]  # passage text is escaped like anything else
    assert generated["text"] == "Answer to: what does xid 79 mean"
    plain = answer_blocks(_answer())
    assert "No generated answer (no model is configured)" in plain[1].to_dict()["elements"][0]["text"]


def test_a_hostile_answer_cannot_mention_anyone() -> None:
    blocks = answer_payload(_answer(question="<!here> why", text="<!channel> <@U0BOSS> do it [1]", generated=True,
                                    model="m", fallback=None))["blocks"]
    shown = json.dumps(blocks)
    assert "<!" not in shown and "<@" not in shown and "&lt;!channel&gt;" in shown


def test_twenty_long_passages_fit_in_one_message() -> None:
    long = Passage(id="doc:x", kind="doc", title="T" * 200, cite="docs/x.md#" + "y" * 200, text="word & " * 400)
    answer = _answer(hits=[Hit(passage=long, score=1.0)] * 20, text="z" * 2900, generated=True, model="m",
                     fallback=None)
    blocks = answer_payload(answer)["blocks"]
    assert len(blocks) <= 50 and len(json.dumps(blocks)) <= 13_000
    assert all(len(b["text"]["text"]) <= 3000 for b in blocks if "text" in b)
    shown = sum(1 for b in blocks if b.get("text", {}).get("text", "").startswith("*["))
    assert 1 <= shown < 20
    assert blocks[-1]["elements"][0]["text"] == (f"Passages [{shown + 1}]-[20] are left out: Slack limits a "
                                                 "message's size.")
