"""The layer-narrowing questions (seed 000:126-131): each case states the facts and every answer expected."""

from __future__ import annotations

from typing import Any

import pytest

from bot.render.markdown import render_markdown
from bot.render.slack import blocks_json
from bot.render.terminal import render_text
from drills.recorded.incident import INCIDENT_DIR, load_incident
from drills.recorded.replay import replay
from playbooks.scope import ORDER, load_questions, narrow
from tests.unit.playbooks.conftest import build_facts

TWELVE = [f"embed-{n}" for n in range(12)]

# (case id, facts, answers by level in ORDER, the scope)
CASES: list[tuple[str, dict[str, Any], str, str | None]] = [
    # Seed 004:1922-1924: three failing pods, all on one node of five.
    ("failures-on-one-node-of-five",
     {"pods.names": TWELVE, "pods.failing_count": 3, "pods.failing_node": "gpu-l4-09",
      "pods.failing_node_share": 1.0, "pods.node_count": 5},
     "? ? yes no no", "node"),
    ("one-failing-pod-of-twelve",
     {"pods.names": TWELVE, "pods.failing_count": 1, "pods.failing_node": "gpu-l4-03",
      "pods.failing_node_share": 1.0, "pods.node_count": 5},
     "? yes ? ? no", "pod"),
    ("a-few-pods-on-several-nodes",
     {"pods.names": TWELVE, "pods.failing_count": 3, "pods.failing_node_share": 0.333, "pods.node_count": 5},
     "? yes no ? no", "pod"),
    ("every-pod-fails-on-every-node",
     {"pods.names": TWELVE[:4], "pods.failing_count": 4, "pods.failing_node_share": 0.25, "pods.node_count": 4},
     "? no no ? ?", None),
    ("the-container-hit-its-own-limit",
     {"container.last_terminated.reason": "OOMKilled", "kernel.oom_memcg": True},
     "? yes ? ? ?", "pod"),
    ("a-canary-carries-the-errors",
     {"http.error_ratio": 0.04, "http.failing_version": "v2"},
     "? yes ? ? ?", "pod"),
    ("large-payloads-through-a-smaller-mtu",
     {"net.mtu_mismatch": True, "http.error_ratio": 0.02},
     "yes ? ? ? ?", "request"),
    ("a-gpu-off-the-bus",
     {"gpu.fallen_off_bus": True, "xid.codes": [79], "node.conditions": []},
     "? ? yes ? ?", "node"),
    ("no-gpus-left-in-the-pool",
     {"scheduling.reasons": ["insufficient-gpu"], "pod.phase": "Pending"},
     "? ? ? yes ?", "pool"),
    ("coredns-failing-for-everyone",
     {"dns.error_ratio": 0.31, "dns.errors": True},
     "? ? ? ? yes", "cluster"),
    ("nothing-to-go-on",
     {"alert.symptoms": ["error-rate"]},
     "? ? ? ? ?", None),
]


@pytest.mark.parametrize(("facts", "answers", "level"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_answers_and_scope(facts: dict[str, Any], answers: str, level: str | None) -> None:
    scope = narrow(build_facts(facts))
    assert [a.level for a in scope.answers] == list(ORDER)
    assert " ".join({"yes": "yes", "no": "no", "unknown": "?"}[a.answer] for a in scope.answers) == answers
    assert scope.level == level
    for a in scope.answers:
        if a.answer == "unknown":
            assert not a.because and a.needs, a.level  # an open question says what would answer it
        else:
            assert a.because and not a.needs, a.level


def test_a_yes_cites_its_facts_but_never_every_pod_name() -> None:
    scope = narrow(build_facts(dict(CASES[0][1])))
    node = next(a for a in scope.answers if a.level == "node")
    assert "pods.failing_node = gpu-l4-09 (case:3)" in node.because
    assert not any(b.startswith("pods.names") for a in scope.answers for b in a.because)
    xid = narrow(build_facts(dict(CASES[7][1])))
    assert not any(b.startswith("node.conditions") for a in xid.answers for b in a.because)  # empty says nothing


def test_the_bundled_questions_load_in_order_and_cite_a_source() -> None:
    questions = load_questions()
    assert [q.level for q in questions] == list(ORDER)
    assert all(q.source and q.text.endswith("?") for q in questions)


# A malformed scope.yaml is refused: test_layers.py::test_a_malformed_file_is_refused, beside layers.yaml.


def test_every_renderer_shows_the_scope() -> None:
    report = replay(load_incident(INCIDENT_DIR / "errors-one-node-of-five"))
    assert report.scope.level == "node"
    line = "Scope: node-specific (request ?, pod ?, node yes, pool no, cluster no)."
    assert line in render_text(report, width=200)
    markdown = render_markdown(report)
    assert f"## Scope\n\n{line}\n" in markdown
    assert "| node | Is it confined to one node (its kernel, GPU, disk or network)? | yes | " in markdown
    slack = [b for b in blocks_json(report) if b["type"] == "context" and ":dart:" in b["elements"][0]["text"]]
    assert len(slack) == 1 and line in slack[0]["elements"][0]["text"]
    assert '"scope": {\n    "level": "node"' in report.to_json()


def test_nothing_answered_says_so_and_slack_leaves_it_out() -> None:
    report = replay(load_incident(INCIDENT_DIR / "errors-one-node-of-five"))
    report.scope = narrow(build_facts({"alert.symptoms": ["error-rate"]}))
    assert "Scope: not narrowed; no evidence says whether" in render_text(report, width=200)
    assert not [b for b in blocks_json(report) if b["type"] == "context" and ":dart:" in b["elements"][0]["text"]]
