"""The Block Kit renderers of /drill and /triage's own messages, checked against Slack's limits and by content.

Slack's limits come from the stand-in's validator (tests/standins/slack_blocks.py), the one the e2e tests use.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

from bot.render.drills.slack_drill import (
    EVIDENCE_PREFIX,
    HYPOTHESIS_CALLBACK,
    block_dicts,
    closed_root,
    gave_up_reply,
    hypothesis_modal,
    page_blocks,
)
from bot.render.slack_triage import (
    WRONG_CALLBACK,
    evidence_listing,
    home_blocks,
    hypothesis_label,
    with_note,
    wrong_modal,
)
from drills import session as drill
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from drills.sources import SOURCES
from playbooks.pipeline import default_playbooks
from tests.standins.slack_blocks import validate_blocks

INCIDENT = INCIDENT_DIR / "oom-trainer-limit"


def test_the_drill_page_shows_only_the_page_and_one_button_per_source() -> None:
    incident = load_incident(INCIDENT)
    session, view = drill.start(incident, "U0ALICE", "C0TRAIN", now=datetime(2026, 11, 25, tzinfo=UTC))
    blocks = block_dicts(page_blocks(view, session))
    assert validate_blocks(blocks) == []
    text = json.dumps(blocks)
    assert incident.meta.ground_truth is not None and incident.meta.ground_truth.hypothesis not in text
    buttons = [e for b in blocks if b["type"] == "actions" for e in b["elements"]]
    evidence = [e for e in buttons if e["action_id"].startswith(EVIDENCE_PREFIX)]
    assert [e["action_id"].removeprefix(EVIDENCE_PREFIX) for e in evidence] == [s.id for s in SOURCES]
    assert all(e["value"] == session.id for e in buttons)


def test_a_finished_root_loses_its_buttons_and_gains_the_note() -> None:
    blocks = [{"type": "section", "text": {"type": "mrkdwn", "text": "page"}},
              {"type": "actions", "elements": [{"type": "button", "text": {"type": "plain_text", "text": "Hint"},
                                                "action_id": "drill_hint", "value": "s1"}]}]
    closed = closed_root(blocks, ":checkered_flag: Finished")
    assert [b["type"] for b in closed] == ["section", "context"]
    assert closed[-1]["elements"][0]["text"] == ":checkered_flag: Finished"
    assert with_note(blocks, "Resolved")[-1]["elements"][0]["text"] == "Resolved"


def test_the_hypothesis_form_lists_every_playbook_within_slacks_limits() -> None:
    refs = evidence_for(load_incident(INCIDENT)).refs
    view = hypothesis_modal("declare", "s1", refs)
    assert view["callback_id"] == HYPOTHESIS_CALLBACK
    assert json.loads(view["private_metadata"]) == {"session": "s1", "action": "declare"}
    groups = view["blocks"][1]["element"]["option_groups"]
    assert {g["label"]["text"].removeprefix("Playbook ") for g in groups} == {p.spec.id for p in default_playbooks()}
    assert all(len(g["options"]) <= 100 and all(len(o["text"]["text"]) <= 75 for o in g["options"]) for g in groups)


def test_giving_up_names_the_user_and_escapes_the_answer() -> None:
    reply = gave_up_reply("U0ALICE", "the <limit> & more", "why", "Pod → Events", 300)
    text = json.dumps(block_dicts(reply.blocks))
    assert "<@U0ALICE>" in text and "&lt;limit&gt; &amp; more" in text and "par 5m00s" in text


def test_the_evidence_listing_cites_each_fact_and_stays_in_three_sections() -> None:
    report = replay(load_incident(INCIDENT))
    text, blocks = evidence_listing(7, report)
    assert text == "Evidence behind triage run 7"
    assert validate_blocks(blocks) == []
    sections = [b for b in blocks if b["type"] == "section"]
    assert 1 <= len(sections) <= 3 and all(len(b["text"]["text"]) <= 3000 for b in sections)
    shown = "\n".join(b["text"]["text"] for b in sections)
    cited = [e.fact for f in report.findings for h in f.hypotheses for e in h.evidence]
    assert cited and f"`{cited[0]}`" in shown


def test_the_wrong_diagnosis_form_puts_this_reports_leader_first() -> None:
    report = replay(load_incident(INCIDENT))
    view = wrong_modal(report, "{}", default_playbooks())
    assert view["callback_id"] == WRONG_CALLBACK
    groups = view["blocks"][1]["element"]["option_groups"]
    lead = report.leading()
    assert lead is not None
    assert groups[0]["label"]["text"] == "In this report"
    assert groups[0]["options"][0]["text"]["text"].startswith(hypothesis_label(lead[0].playbook, lead[1].id))
    assert groups[-1]["options"][0]["value"] == "other"


def test_the_app_home_says_so_when_there_is_nothing_yet() -> None:
    empty = home_blocks([], "No incidents yet.", 20)
    assert [b["type"] for b in empty["blocks"]] == ["header", "section", "context"]
    assert empty["blocks"][1]["text"]["text"] == "No incidents yet."
    full = home_blocks(["one", "x" * 5000], "unused", 20)
    assert [b["text"]["text"] for b in full["blocks"][1:3]] == ["one", "x" * 3000]
