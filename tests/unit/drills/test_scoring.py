"""Scoring: good trainee paths score high, guesses and sloppy paths do not, and every rule holds on its own."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest

from drills.debrief import Debrief
from drills.key import answer_key
from drills.recorded.evidence import evidence_for
from drills.recorded.incident import Incident, incident_dirs, load_incident
from drills.scoring import score
from drills.session import DrillSession
from drills.store import leaderboard_rows

Player = Callable[..., tuple[DrillSession, Debrief | None]]
Loader = Callable[[str], Incident]

# The truth of oom-trainer-limit is host-memory-underestimated: an eight-GPU trainer whose working set reached its
# memory limit while its GPUs' memory stayed at a third, so the host side of the job was left out of the limit. Its
# parent limit-too-low is the right branch. The only smallest separating set, and so the ideal path, is pod status
# (60 s) + metrics (90 s), par 150 s: the kernel log (180 s) proves the memcg kill, which confirms the parent but
# leaves the refinement only likely, so it separates nothing and is not discriminating.
OOM = "oom-trainer-limit"
TRUTH = "declare oom-killed/host-memory-underestimated"
PARENT = "declare oom-killed/limit-too-low"


def parts(session: DrillSession) -> dict[str, int]:
    assert session.score is not None
    return {p.name: p.points for p in session.score.parts}


def total(session: DrillSession) -> int:
    assert session.score is not None
    return session.score.total


# --- trainee paths on a real incident ---------------------------------------------------------------------------


def test_discriminating_evidence_then_the_right_answer_scores_high(player: Player, incident: Loader) -> None:
    # The path an experienced on-call takes: the pod says OOMKilled with eight GPUs, the metrics say the working
    # set hit the limit while GPU memory stayed at a third; a proposal on the way costs 30 s.
    session, debrief = player(incident(OOM), ["evidence pod status", "evidence metrics",
                                              "propose oom-killed/node-oom", TRUTH])
    assert debrief is not None and debrief.outcome == "right"
    got = parts(session)
    assert got["root cause"] == 50 and got["discrimination"] == 20 and got["independence"] == 5
    assert got["efficiency"] == 15  # the two sources needed, and nothing else
    assert got["time"] == 8  # par 150 s against 60 + 90 + 30 = 180 s: 8.3
    assert total(session) == 98


def test_the_documented_example_scores(player: Player, incident: Loader) -> None:
    # docs/drills.md: the ideal path plus the kernel log, which proves the memcg kill but not the refinement.
    session, _ = player(incident(OOM), ["evidence pod status", "evidence kernel log", "evidence metrics", TRUTH])
    # Efficiency 15 x 2 needed / 3 requested = 10; time 10 x 150 / (60 + 180 + 90 = 330 s) = 4.5, rounded half up.
    assert parts(session) == {"root cause": 50, "discrimination": 20, "efficiency": 10, "time": 5, "independence": 5}
    assert total(session) == 90


def test_the_ideal_path_scores_full_marks(player: Player, incident: Loader) -> None:
    key = answer_key(evidence_for(incident(OOM)))
    assert key.ideal_path == ("pod-status", "metrics") and key.par_seconds == 150
    session, _ = player(incident(OOM), [f"evidence {s}" for s in key.ideal_path] + [TRUTH])
    assert total(session) == 100


def test_a_guess_without_evidence_gets_the_root_cause_and_nothing_else(player: Player, incident: Loader) -> None:
    session, _ = player(incident(OOM), [TRUTH])
    got = parts(session)
    assert got == {"root cause": 50, "discrimination": 0, "efficiency": 0, "time": 0, "independence": 5}
    assert total(session) <= 55


def test_right_answer_without_the_discriminator_scores_like_a_guess(player: Player, incident: Loader) -> None:
    # An eight-GPU pod killed for memory fits a too-low limit, host memory left out and a node-wide OOM alike;
    # only the metrics (working set at the limit, GPU memory at a third) say the host side was left out.
    # Declaring from the pod status, with the events or even with the kernel log (a memcg kill proves the limit
    # was hit, not why), is a lucky guess.
    good, _ = player(incident(OOM), ["evidence pod status", "evidence metrics", TRUTH])
    assert total(good) == 100
    for other in ("events", "kernel log"):
        lucky, _ = player(incident(OOM), ["evidence pod status", f"evidence {other}", TRUTH])
        assert parts(lucky)["discrimination"] == 0 and parts(lucky)["time"] == 0, other
        assert parts(lucky)["efficiency"] == 8, other  # 15 x 1 useful (pod status) / 2 requested = 7.5
        assert total(lucky) == 63 and total(lucky) <= total(good) - 30, other


def test_wrong_answer_scores_low_even_with_the_evidence_in_hand(player: Player, incident: Loader) -> None:
    # The separating evidence plus the kernel log, whose memcg kill rules a node-wide OOM out.
    session, debrief = player(incident(OOM), ["evidence pod status", "evidence metrics", "evidence kernel log",
                                              "declare oom-killed/node-oom"])
    assert debrief is not None and debrief.outcome == "wrong"
    assert parts(session)["root cause"] == 0
    assert parts(session)["discrimination"] == 20  # they looked; they misread
    # 0 + 20 + efficiency 15 x 2 / 3 = 10 + time 10 x 150 / 330 = 4.5 -> 5 + independence 5
    assert total(session) == 40
    assert "rules it out" in debrief.declared_note


def test_a_wrong_guess_scores_almost_nothing(player: Player, incident: Loader) -> None:
    session, _ = player(incident(OOM), ["declare latency/dns"])
    assert total(session) == 5


def test_many_hints_cost_fifteen_points(player: Player, incident: Loader) -> None:
    path = ["evidence pod status", "evidence metrics"]
    clean, _ = player(incident(OOM), [*path, TRUTH])
    hinted, _ = player(incident(OOM), ["hint", "hint", "hint", "hint", *path, TRUTH])
    assert hinted.hint_level == 3
    assert parts(hinted)["independence"] == -10
    assert total(clean) - total(hinted) == 15


def test_the_right_branch_gets_half_the_root_cause(player: Player, incident: Loader) -> None:
    # The evidence that separates the truth in hand, and the parent declared: the limit was too low, which is
    # true, but not why (the host memory of the eight ranks left out of it).
    session, debrief = player(incident(OOM), ["evidence pod status", "evidence metrics", PARENT])
    assert debrief is not None and debrief.outcome == "right branch"
    assert parts(session) == {"root cause": 25, "discrimination": 20, "efficiency": 15, "time": 10, "independence": 5}
    assert total(session) == 75


def test_requesting_everything_costs_efficiency_and_time(player: Player, incident: Loader) -> None:
    everything = [f"evidence {s}" for s in ("alerts", "pod-status", "events", "objects", "node", "app-logs",
                                            "nccl-log", "metrics", "cgroup", "kubelet-log", "kernel-log",
                                            "conntrack")]
    session, _ = player(incident(OOM), [*everything, TRUTH])
    got = parts(session)
    assert got["discrimination"] == 20
    assert got["efficiency"] == 3  # 15 x 2 needed / 12 requested
    assert got["time"] == 1  # par 150 s against 1185 s (19m45s): 1.3
    assert total(session) == 79


def test_proposals_cost_clock_time(player: Player, incident: Loader) -> None:
    path = ["evidence pod status", "evidence metrics"]
    quiet, _ = player(incident(OOM), [*path, TRUTH])
    chatty, _ = player(incident(OOM), [*path, *["propose oom-killed/node-oom"] * 6, TRUTH])
    assert chatty.clock_seconds == quiet.clock_seconds + 6 * 30
    assert parts(chatty)["time"] < parts(quiet)["time"]


@pytest.mark.parametrize("incident_id", [p.name for p in incident_dirs()])
def test_every_incident_scores_100_on_its_ideal_path_and_low_on_a_guess(incident_id: str, player: Player) -> None:
    inc = load_incident(incident_dirs()[0].parent / incident_id)
    key = answer_key(evidence_for(inc))
    ideal, _ = player(inc, [f"evidence {s}" for s in key.ideal_path] + [f"declare {key.truth_key}"])
    guess, _ = player(inc, [f"declare {key.truth_key}"])
    assert total(ideal) == 100
    assert total(guess) == 55


# --- the scoring rules as plain data ----------------------------------------------------------------------------


def rule(**changes: object) -> dict[str, int]:
    args: dict[str, object] = dict(declared="pb/truth", truth="pb/truth", lineage=frozenset({"pb/truth"}),
                                   requested=["a"], separated=True, discriminating=frozenset({"a"}),
                                   ideal_path=["a"], par_seconds=60, clock_seconds=60, hint_level=0)
    args.update(changes)
    result = score(**args)  # type: ignore[arg-type]
    return {p.name: p.points for p in result.parts} | {"total": result.total}


def test_rule_some_but_not_enough_evidence_earns_efficiency_only() -> None:
    got = rule(requested=["a"], separated=False, discriminating=frozenset({"a", "b"}), ideal_path=["a", "b"],
               par_seconds=120, clock_seconds=60)
    assert got["discrimination"] == 0 and got["time"] == 0
    assert got["efficiency"] == 8  # 15 x 1 useful / max(1 requested, 2 needed) = 7.5, rounded half up


def test_rule_efficiency_counts_requests_against_the_ideal_path() -> None:
    assert rule(requested=["a", "x", "y"], clock_seconds=180)["efficiency"] == 5
    assert rule(requested=["a"])["efficiency"] == 15


def test_rule_time_is_par_over_clock() -> None:
    assert rule(clock_seconds=240)["time"] == 3  # 2.5 rounds half up
    assert rule(clock_seconds=30)["time"] == 10  # faster than par is par


def test_rule_nothing_but_root_cause_and_independence_for_an_ungrounded_answer() -> None:
    got = rule(requested=["x"], separated=False, clock_seconds=30)
    assert got == {"root cause": 50, "discrimination": 0, "efficiency": 0, "time": 0, "independence": 5,
                   "total": 55}


def test_rule_total_is_clamped_at_zero() -> None:
    assert rule(declared="pb/other", requested=[], separated=False, clock_seconds=0, hint_level=3)["total"] == 0


def test_rule_lineage_gets_half() -> None:
    assert rule(declared="pb/child", lineage=frozenset({"pb/truth", "pb/child"}))["root cause"] == 25


def test_leaderboard_counts_each_incidents_best_score_once(player: Player, incident: Loader) -> None:
    a1, _ = player(incident(OOM), [TRUTH], trainee="ann", session_id="a1")
    a2, _ = player(incident(OOM), ["evidence pod status", "evidence metrics", TRUTH], trainee="ann",
                   session_id="a2")
    b1, _ = player(incident(OOM), ["evidence kernel log", TRUTH], trainee="bob", session_id="b1")  # 55: no separation
    open_one, _ = player(incident(OOM), ["evidence kernel log"], trainee="cy", session_id="c1")
    rows = leaderboard_rows([a1, a2, b1, open_one])
    assert [r.trainee for r in rows] == ["ann", "bob"]
    assert rows[0].points == 100 and rows[0].drills == 2 and rows[0].incidents == 1 and rows[0].best == 100
    assert rows[0].average == round((total(a1) + 100) / 2, 1) == 77.5  # a guess (55) and the ideal path (100)
    assert rows[1].points == 55 and rows[1].drills == 1


# --- two hypotheses confirmed by the same recording (issue 26, point 5) ----------------------------------------


def _two_faults(incident: Loader) -> Incident:
    """A saved incident with two faults at once: the recording of a rank whose GPU fell off the bus (Xid 79)
    together with the recording of a job whose /dev/shm was left at 64 MiB, both real bundled recordings. The
    whole recording confirms nccl-hang/gpu-hardware (the truth) and nccl-hang/shm-too-small alike."""
    first, second = incident("nccl-xid79-watchdog-timeout"), incident("nccl-shm-default-64mib")
    taken = {a.id for a in first.artifacts}
    extra = [replace(a, id=f"shm-{a.id}") if a.id in taken else a for a in second.artifacts]
    meta = first.meta.model_copy(update={"id": "two-faults-saved", "must_not_confirm": [
        h for h in first.meta.must_not_confirm if h != "nccl-hang/shm-too-small"]})
    return first.model_copy(update={"meta": meta, "artifacts": [*first.artifacts, *extra]})


def test_a_rival_confirmed_by_the_same_recording_does_not_cost_discrimination(player: Player,
                                                                                incident: Loader) -> None:
    two = _two_faults(incident)
    key = answer_key(evidence_for(two))
    assert key.suitable and key.discriminating
    # Reading the NCCL log as well (it shows the shm fault too) must not undo the separation the kernel log made.
    session, debrief = player(two, ["evidence nccl-log", "evidence kernel-log", "evidence pod-status",
                                    "declare nccl-hang/gpu-hardware"])
    assert debrief is not None and debrief.outcome == "right"
    assert parts(session)["discrimination"] == 20


@pytest.mark.parametrize("steps", [
    ["evidence nccl-log", "evidence kernel-log", "evidence pod-status", "declare nccl-hang/gpu-hardware"],
    ["evidence nccl-log", "declare nccl-hang/gpu-hardware"],
    ["evidence pod-status", "evidence metrics", "declare nccl-hang/gpu-hardware"],
    ["declare nccl-hang/gpu-hardware"],
])
def test_the_debrief_never_credits_and_denies_the_same_step(player: Player, incident: Loader,
                                                            steps: list[str]) -> None:
    session, debrief = player(_two_faults(incident), steps)
    assert debrief is not None
    named = [s.source for s in debrief.your_path if s.discriminating]
    separated = parts(session)["discrimination"] == 20
    # A step shown as discriminating means evidence that separates; a zero for discrimination names which of
    # the player's steps were on a separating set instead of contradicting them.
    if not separated:
        why = next(p.why for p in debrief.score.parts if p.name == "discrimination")
        assert all(s in why for s in named), (named, why)
