"""Drill steps: what the trainee sees, what proposals may say, hints, mistakes, persistence and resume."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.store.drill_sessions import SqlSessionStore
from drills import session as drill
from drills.debrief import Debrief
from drills.errors import DrillError
from drills.hypotheses import index
from drills.key import answer_key
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident, IncidentMeta, incident_dirs, load_incident
from drills.session import DrillSession
from drills.sources import BY_ID, label
from drills.store import MemorySessionStore, SessionStore

Player = Callable[..., tuple[DrillSession, Debrief | None]]
Loader = Callable[[str], Incident]
OOM = "oom-trainer-limit"
ALL_INCIDENTS = [p.name for p in incident_dirs()]


# --- the page -----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("incident_id", ALL_INCIDENTS)
def test_the_trainee_first_sees_only_the_page_time_and_target(incident_id: str, incident: Loader) -> None:
    inc = incident(incident_id)
    session, view = drill.start(inc, "alice", "#sre")
    assert view.kind == "page" and view.page is not None
    assert view.page.text == inc.meta.page.strip()
    assert view.page.time == inc.meta.captured_at
    assert view.page.target == {k: str(v) for k, v in inc.meta.target.model_dump().items() if v}
    assert view.artifacts == [] and view.answer is None and view.text == []
    shown = view.model_dump_json()
    truth = inc.meta.ground_truth
    assert truth is not None
    assert inc.meta.title not in shown and truth.explanation not in shown
    assert f"{truth.playbook}/{truth.hypothesis}" not in shown
    assert session.clock_seconds == 0 and session.revealed_sources == []


def test_an_incident_without_ground_truth_cannot_be_drilled(incident: Loader) -> None:
    inc = incident(OOM)
    fresh = inc.model_copy(update={"meta": inc.meta.model_copy(update={"ground_truth": None})})
    with pytest.raises(DrillError, match="no ground_truth"):
        drill.start(fresh, "alice", "#sre")


# --- evidence -------------------------------------------------------------------------------------------------------


def test_evidence_reveals_the_recorded_artifacts_of_one_source_and_costs_clock(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, view = drill.request_evidence(session, inc, "Kernel Log")
    assert view.source == "kernel-log" and [a.id for a in view.artifacts] == ["dmesg.txt"]
    assert view.artifacts[0].content.startswith("[Mon Nov  2")
    assert view.cost_seconds == BY_ID["kernel-log"].cost_seconds == session.clock_seconds
    assert session.revealed_sources == ["kernel-log"] and session.revealed_artifacts == ["dmesg.txt"]


def test_evidence_asked_twice_is_free_the_second_time(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "dmesg")
    again, view = drill.request_evidence(session, inc, "kernel-log")
    assert again.clock_seconds == session.clock_seconds and view.cost_seconds == 0
    assert again.revealed_sources == ["kernel-log"]


def test_unavailable_artifacts_are_shown_with_their_reason(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    _, view = drill.request_evidence(session, inc, "kubelet log")
    assert len(view.artifacts) == 1 and view.artifacts[0].unavailable is not None
    assert "403 Forbidden" in view.artifacts[0].unavailable


def test_a_source_with_nothing_recorded_still_costs_time(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, view = drill.request_evidence(session, inc, "conntrack")
    assert view.artifacts == [] and "Nothing was recorded" in view.text[0]
    assert session.clock_seconds == BY_ID["conntrack"].cost_seconds


def test_steps_are_pure(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    before = session.model_dump()
    drill.request_evidence(session, inc, "pod status")
    drill.propose(session, inc, "oom-killed/node-oom")
    drill.hint(session, inc)
    drill.declare(session, inc, "oom-killed", "limit-too-low")
    assert session.model_dump() == before


# --- proposals ------------------------------------------------------------------------------------------------------


def _first_ideal(inc: Incident) -> list[str]:
    return list(answer_key(evidence_for(inc)).ideal_path[:1])


@pytest.mark.parametrize("incident_id", ALL_INCIDENTS)
def test_proposal_answers_never_reveal_the_ground_truth(incident_id: str, incident: Loader) -> None:
    inc = incident(incident_id)
    truth = inc.meta.ground_truth
    assert truth is not None
    truth_key = f"{truth.playbook}/{truth.hypothesis}"
    refs = index(evidence_for(inc).playbooks)
    hidden_artifacts = {a.id for a in inc.artifacts}
    for revealed in ([], _first_ideal(inc)):
        session, _ = drill.start(inc, "alice", "#sre")
        for source in revealed:
            session, _ = drill.request_evidence(session, inc, source)
        seen = set(session.revealed_artifacts)
        for key, ref in refs.items():
            _, view = drill.propose(session, inc, key)
            assert view.answer is not None
            text = view.answer.message
            assert truth.explanation not in text
            assert not re.search(r"\b(root cause|correct|the answer|ground truth)\b", text, re.I), text
            # The truth may be named only as the parent a child hypothesis refines (static tree structure).
            if key != truth_key and truth_key in text:
                assert ref.parent == truth.hypothesis and ref.playbook == truth.playbook, text
            # Only evidence the trainee asked for is ever cited.
            for artifact in hidden_artifacts - seen:
                assert f"({artifact}:" not in text and f"({artifact})" not in text, text


def test_not_yet_testable_names_the_sources_to_look_at(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    _, view = drill.propose(session, inc, "oom-killed/node-oom")
    answer = view.answer
    assert answer is not None and answer.verdict == "untestable"
    assert "kernel-log" in answer.look_at and "kernel.oom_global" in answer.facts
    assert answer.message.startswith("Not yet testable: look at ")
    assert label("kernel-log") in answer.message and "kernel.oom_global" in answer.message


def test_not_yet_testable_leaves_out_sources_already_seen(incident: Loader) -> None:
    inc = incident("latency-conntrack-exhaustion")
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "metrics")
    _, view = drill.propose(session, inc, "latency/dns")
    assert view.answer is not None and view.answer.verdict == "untestable"
    # The kubelet log shows the node's own lookups failing (a pull's "lookup ... on 10.0.0.10:53: i/o timeout"), and a
    # pod's events can quote the same failure.
    assert "metrics" not in view.answer.look_at and view.answer.look_at == ["app-logs", "kubelet-log", "pod-status"]


def test_supported_and_ruled_out_cite_the_revealed_lines(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "pod status")
    session, _ = drill.request_evidence(session, inc, "kernel log")
    _, supported = drill.propose(session, inc, "limit-too-low")
    _, ruled = drill.propose(session, inc, "node-oom")
    assert supported.answer is not None and supported.answer.verdict == "supported" and supported.answer.direct
    assert "kernel.oom_memcg = true (dmesg.txt:121)" in supported.answer.because
    assert ruled.answer is not None and ruled.answer.verdict == "ruled-out"
    assert ruled.answer.message.startswith("Ruled out by kernel.oom_memcg = true (dmesg.txt:121)")


def test_supported_but_not_proven_says_what_would_prove_it(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "pod status")
    _, view = drill.propose(session, inc, "limit-too-low")
    assert view.answer is not None and view.answer.verdict == "supported" and not view.answer.direct
    assert ("To prove it, look at kernel log or node or events or cluster objects for kernel.oom_memcg"
            in view.answer.message)


def test_a_child_is_tested_through_its_parent(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "kernel log")
    _, view = drill.propose(session, inc, "oom-killed/qos-victim")  # child of node-oom, which memcg rules out
    assert view.answer is not None and view.answer.verdict == "ruled-out"
    assert "with oom-killed/node-oom" in view.answer.message


def test_proposing_by_bare_id_and_fragment(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    assert drill.propose(session, inc, "node-oom")[1].title == "oom-killed/node-oom"
    assert drill.propose(session, inc, "conntrack")[1].title == "latency/conntrack-exhaustion"
    with pytest.raises(DrillError, match="ambiguous"):
        drill.propose(session, inc, "disk-pressure")  # in image-pull and evicted
    with pytest.raises(DrillError, match="did you mean"):
        drill.propose(session, inc, "oom-killed/limit-to-low")


# --- hints ----------------------------------------------------------------------------------------------------------


def test_hints_go_from_direction_to_evidence_to_answer(incident: Loader) -> None:
    inc = incident(OOM)
    key = answer_key(evidence_for(inc))
    session, _ = drill.start(inc, "alice", "#sre")
    texts = []
    for _ in range(4):
        session, view = drill.hint(session, inc)
        texts.append(view.text[0])
    assert session.hint_level == 3
    assert texts[0].startswith("Direction:") and "oom-killed" in texts[0] and key.truth_key not in texts[0]
    assert texts[1].startswith("Evidence:") and label(key.ideal_path[0]) in texts[1]
    assert key.truth_key not in texts[1]
    # The answer is the refinement the recording confirms, not its parent (ranking rule 7, docs/playbooks.md).
    assert texts[2].startswith("Answer: oom-killed/host-memory-underestimated") and texts[3] == texts[2]


def test_the_evidence_hint_notices_evidence_already_in_hand(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    session, _ = drill.request_evidence(session, inc, "pod status")
    session, _ = drill.request_evidence(session, inc, "kernel log")
    session, _ = drill.hint(session, inc)
    _, view = drill.hint(session, inc)
    # The kernel log proves the memcg kill, not that the host memory was left out: the hint asks for the metrics.
    assert "you already have enough" not in view.text[0] and label("metrics") in view.text[0]
    session, _ = drill.request_evidence(session, inc, "metrics")
    _, view = drill.hint(session, inc)
    assert "you already have enough" in view.text[0] and label("metrics") in view.text[0]
    assert label("pod-status") in view.text[0] and label("kernel-log") not in view.text[0]


# --- mistakes -------------------------------------------------------------------------------------------------------


def test_mistakes_raise_drill_errors_with_what_was_expected(incident: Loader) -> None:
    inc = incident(OOM)
    session, _ = drill.start(inc, "alice", "#sre")
    with pytest.raises(DrillError, match="no evidence source 'tea leaves'; sources: alerts, pod-status"):
        drill.request_evidence(session, inc, "tea leaves")
    with pytest.raises(DrillError, match="no hypothesis"):
        drill.declare(session, inc, "oom-killed", "nope")
    with pytest.raises(DrillError):
        drill.declare(session, inc, "", "limit")  # declaring takes no fragments
    other = incident("latency-dns-ndots")
    with pytest.raises(DrillError, match="drills oom-trainer-limit"):
        drill.propose(session, other, "latency/dns")
    finished, _ = drill.declare(session, inc, "", "limit-too-low")
    assert finished.declared == "oom-killed/limit-too-low"
    for step in (lambda: drill.hint(finished, inc), lambda: drill.request_evidence(finished, inc, "node"),
                 lambda: drill.declare(finished, inc, "oom-killed", "limit-too-low")):
        with pytest.raises(DrillError, match="finished"):
            step()


# --- debrief --------------------------------------------------------------------------------------------------------


def test_the_debrief_shows_tree_ideal_path_meanings_and_references(player: Player, incident: Loader) -> None:
    # The trainee stops one level short: the kernel log proves the memcg kill and they declare the parent.
    inc = incident(OOM)
    session, debrief = player(inc, ["evidence pod status", "evidence kernel log", "propose node-oom",
                                    "declare oom-killed/limit-too-low"])
    assert debrief is not None and debrief.outcome == "right branch"
    book = next(p for p in evidence_for(inc).playbooks if p.spec.id == "oom-killed")
    assert [n.id for n in debrief.tree] == [h.id for h, _ in book.spec.walk()]
    node = {n.id: n for n in debrief.tree}
    truth, declared = node["host-memory-underestimated"], node["limit-too-low"]
    assert truth.truth and not truth.declared and truth.status == "confirmed"
    assert declared.declared and not declared.truth and declared.status == "confirmed"
    assert node["node-oom"].proposed and node["node-oom"].status == "ruled-out"
    assert node["qos-victim"].status == "not explored"
    assert [s.source for s in debrief.ideal_path] == ["pod-status", "metrics"] and debrief.par_seconds == 150
    assert [s.source for s in debrief.your_path] == ["pod-status", "kernel-log"]
    # The pod status is on the ideal path (eight GPUs asked for); the kernel log separates nothing for the truth.
    assert debrief.your_path[0].discriminating and "pod.gpu_request = 8" in debrief.your_path[0].shows
    assert not debrief.your_path[1].discriminating
    meanings = {m.artifact: m for m in debrief.evidence}
    assert [m.artifact for m in debrief.evidence][:2] == ["describe-pod.txt", "dmesg.txt"]
    assert any("rules out oom-killed/node-oom" in line for line in meanings["dmesg.txt"].meanings)
    assert not meanings["working-set-ratio.json"].revealed
    assert meanings["kubelet-log:node/gpu-node-2"].unavailable is not None
    assert inc.meta.ground_truth is not None and debrief.explanation == inc.meta.ground_truth.explanation
    assert "seed 004, scenario 1 (004:1371-1451)" in debrief.references
    assert drill.debrief(session, inc) == debrief  # rebuilt identically for a finished session


# --- persistence and resume -----------------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> SessionStore:
    if request.param == "memory":
        return MemorySessionStore()
    return SqlSessionStore.from_path(tmp_path / "state" / "drills.sqlite")


def test_sessions_round_trip_through_the_store(store: SessionStore, player: Player, incident: Loader) -> None:
    inc = incident(OOM)
    open_one, _ = player(inc, ["evidence pod status", "propose node-oom", "hint"], session_id="open")
    done, _ = player(inc, ["evidence kernel log", "declare oom-killed/limit-too-low"], session_id="done")
    store.save(open_one)
    store.save(done)
    assert store.load("open") == open_one and store.load("done") == done
    assert store.load("missing") is None
    moved, _ = drill.request_evidence(open_one, inc, "kernel log")
    store.save(moved)  # saving again replaces
    assert store.load("open") == moved
    assert {s.id for s in store.list_by_trainee("alice")} == {"open", "done"}
    assert store.list_by_trainee("nobody") == []
    rows = store.leaderboard("#sre")
    assert [(r.trainee, r.drills) for r in rows] == [("alice", 1)]
    assert store.leaderboard("#elsewhere") == []


def test_history_is_newest_first(store: SessionStore, incident: Loader) -> None:
    inc = incident(OOM)
    for hour, sid in ((3, "b"), (5, "c"), (1, "a")):
        session, _ = drill.start(inc, "alice", "#sre", session_id=sid, now=datetime(2026, 11, 2, hour, tzinfo=UTC))
        store.save(session)
    assert [s.id for s in store.list_by_trainee("alice")] == ["c", "b", "a"]
    assert [s.id for s in store.list_by_trainee("alice", limit=2)] == ["c", "b"]


def test_sqlite_sessions_survive_a_restart(tmp_path: Path, incident: Loader) -> None:
    inc = incident(OOM)
    path = tmp_path / "drills.sqlite"
    first = SqlSessionStore.from_path(path)
    session, _ = drill.start(inc, "alice", "#sre", session_id="r1")
    session, _ = drill.request_evidence(session, inc, "pod status")
    session, _ = drill.propose(session, inc, "node-oom")
    first.save(session)
    first.close()

    # A new process: a fresh store on the same file, and the drill goes on where it stopped.
    second = SqlSessionStore.from_path(path)
    resumed = second.load("r1")
    assert resumed == session
    assert resumed is not None
    resumed, _ = drill.request_evidence(resumed, inc, "metrics")
    resumed, debrief = drill.declare(resumed, inc, "oom-killed", "host-memory-underestimated")
    second.save(resumed)

    straight, _ = drill.start(inc, "alice", "#sre", session_id="r2")
    for source in ("pod status",):
        straight, _ = drill.request_evidence(straight, inc, source)
    straight, _ = drill.propose(straight, inc, "node-oom")
    straight, _ = drill.request_evidence(straight, inc, "metrics")
    straight, _ = drill.declare(straight, inc, "oom-killed", "host-memory-underestimated")
    assert resumed.score == straight.score and debrief.outcome == "right"
    assert SqlSessionStore.from_path(path).load("r1") == resumed


def test_a_session_payload_is_plain_json(incident: Loader, player: Player) -> None:
    session, _ = player(incident(OOM), ["evidence kernel log", "propose node-oom", "declare oom-killed/limit-too-low"])
    assert DrillSession.model_validate_json(session.model_dump_json()) == session
    assert "content" not in session.model_dump_json()  # ids only: artifact text stays in the recording


def test_incident_meta_is_unchanged_by_drilling(incident: Loader) -> None:
    inc = incident(OOM)
    before = IncidentMeta.model_validate(inc.meta.model_dump())
    drill.declare(drill.start(inc, "a", "b")[0], inc, "oom-killed", "limit-too-low")
    assert inc.meta == before
    assert load_incident(Path(inc.path)).meta == before
