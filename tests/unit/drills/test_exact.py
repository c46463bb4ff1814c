"""Exact follow-ups built from a playbook: which observation tells two causes apart, and the order of checks."""

from __future__ import annotations

from typing import Any

import pytest

from drills import exact, interview
from drills.exact import ExactQuestion
from drills.questions import load_bank
from playbooks.model import Playbook

BANK = load_bank()


def _hypothesis(hid: str, prior: float, discriminating: list[str], cite: list[str], check: str,
                children: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"id": hid, "claim": f"{hid} is the cause: details", "prior": prior, "discriminating": discriminating,
            "likely": " || ".join(f"has({f})" for f in discriminating) or None, "cite": cite,
            "falsified_by": "x", "next_checks": [check], "source": ["seed 001:1"],
            "chart": {"none": "no metric shows this in a test"},
            "children": children or []}


# A small tree declared whole: three top-level causes with different priors, two of them with children.
PLAYBOOK = Playbook.model_validate({
    "id": "demo", "title": "Demo", "trigger": "true", "sources": [],
    "hypotheses": [
        _hypothesis("quota", 0.5, ["quota.used_ratio"], ["events.reasons", "quota.used_ratio"],
                    "kubectl describe resourcequota -n {{ namespace|sh }}"),
        _hypothesis("gpu", 0.9, ["scheduling.reasons", "gpu.allocatable_total"],
                    ["events.reasons", "scheduling.reasons"], "kubectl describe pod {{ pod|sh }}"),
        _hypothesis("taint", 0.7, ["node.taints"], ["node.taints"], "kubectl get nodes -o wide"),
    ]})


def test_discriminate_offers_the_facts_one_cause_declares_and_the_other_does_not() -> None:
    q = exact.discriminate(PLAYBOOK, "seed-1")
    assert q is not None and q.kind == "discriminate"
    a, b = (h for h in PLAYBOOK.hypotheses if h.id in q.hypotheses)
    right = sorted(set(a.discriminating) ^ set(b.discriminating))
    shown_right = sorted(q.options[i].rsplit("`", 2)[1] for i in q.answer)
    assert shown_right == right
    wrong = [o.rsplit("`", 2)[1] for i, o in enumerate(q.options) if i not in q.answer]
    assert wrong and not set(wrong) & set(right)


def test_the_same_seed_asks_the_same_question_and_another_seed_may_not() -> None:
    asked = {exact.discriminate(PLAYBOOK, f"seed-{n}") for n in range(12)}
    assert exact.discriminate(PLAYBOOK, "seed-1") == exact.discriminate(PLAYBOOK, "seed-1")
    assert len({q.hypotheses for q in asked if q}) > 1  # the three pairs are spread over questions


def test_order_ranks_the_first_check_of_each_top_level_cause_by_prior() -> None:
    q = exact.order(PLAYBOOK, "seed-1")
    assert q is not None and q.kind == "order"
    in_order = [q.options[i] for i in q.answer]
    assert in_order == ["`kubectl describe pod <pod>`", "`kubectl get nodes -o wide`",
                        "`kubectl describe resourcequota -n <namespace>`"]
    assert list(q.answer) != list(range(3))  # never shown already in order


def test_no_order_question_when_the_playbook_ranks_nothing() -> None:
    flat = PLAYBOOK.model_copy(update={"hypotheses": [h.model_copy(update={"prior": 0.5})
                                                      for h in PLAYBOOK.hypotheses]})
    assert exact.order(flat, "seed-1") is None


@pytest.mark.parametrize(("text", "kind", "expected"), [
    ("a c", "discriminate", (0, 2)),
    ("A, C", "discriminate", (0, 2)),
    ("1 3", "discriminate", (0, 2)),
    ("c", "discriminate", (2,)),
    ("a a", "discriminate", None),          # twice
    ("z", "discriminate", None),            # no such option
    ("g", "discriminate", None),            # a letter past the options
    ("I think so", "discriminate", None),   # no option named
    ("no idea", "discriminate", None),      # a letter inside a word is no choice
    ("a) and c)", "discriminate", (0, 2)),
    ("c a b", "order", (2, 0, 1)),
    ("c a", "order", None),                 # an order must name every option
])
def test_parse(text: str, kind: str, expected: tuple[int, ...] | None) -> None:
    q = ExactQuestion(kind=kind, prompt="p", options=("x", "y", "z"), answer=(0, 1), playbook="demo",
                      hypotheses=())
    assert exact.parse(text, q) == expected


@pytest.mark.parametrize(("picked", "score"), [((0, 2), 100), ((0,), 50), ((0, 1), 0), ((0, 1, 2), 50), ((1,), 0)])
def test_discriminate_score_subtracts_wrong_picks(picked: tuple[int, ...], score: int) -> None:
    q = ExactQuestion(kind="discriminate", prompt="p", options=("x", "y", "z"), answer=(0, 2), playbook="d",
                      hypotheses=())
    assert exact.score(q, picked).score == score


@pytest.mark.parametrize(("picked", "score"), [((2, 0, 1), 100), ((0, 2, 1), 66), ((1, 0, 2), 0)])
def test_order_score_counts_pairs_in_the_right_order(picked: tuple[int, ...], score: int) -> None:
    q = ExactQuestion(kind="order", prompt="p", options=("x", "y", "z"), answer=(2, 0, 1), playbook="d",
                      hypotheses=())
    result = exact.score(q, picked)
    assert result.score == score and "c a b" in result.text


def test_every_question_that_names_a_playbook_gets_exact_follow_ups_from_it() -> None:
    named = [q for q in BANK.questions.values() if q.related_playbook]
    assert named
    for question in named:
        asked = exact.for_question(question)
        assert asked, question.id
        for q in asked:
            assert q.playbook == question.related_playbook
            assert len(set(q.options)) == len(q.options) >= 3
            assert sorted(q.answer) == list(q.answer) if q.kind == "discriminate" else \
                sorted(q.answer) == list(range(len(q.options)))
    assert not exact.for_question(next(q for q in BANK.questions.values() if not q.related_playbook))


# ---- in the interview exchange -----------------------------------------------------------------------------

NAMED = next(q for q in BANK.questions.values() if q.related_playbook and len(exact.for_question(q)) == 2)


def test_exact_follow_ups_come_after_the_free_answer_and_count_for_a_quarter() -> None:
    session, _ = interview.start(NAMED, max_follow_ups=0)
    session, steps = interview.submit(session, NAMED, NAMED.model_answer)
    assert [s.kind for s in steps] == ["feedback", "exact"] and steps[1].position == (1, 2)
    first, second = exact.for_question(NAMED)
    assert steps[1].text == first.text() and session.phase == "exact"
    coverage = steps[0].grade.score if steps[0].grade else -1

    session, steps = interview.submit(session, NAMED, first.letters(first.answer))
    assert [s.kind for s in steps] == ["exact-result", "exact"] and steps[0].text.startswith("100/100")
    wrong = tuple(reversed(second.answer)) if second.kind == "order" else \
        tuple(i for i in range(len(second.options)) if i not in second.answer)
    session, steps = interview.submit(session, NAMED, second.letters(wrong))
    assert [s.kind for s in steps] == ["exact-result", "model-answer"] and steps[0].text.startswith("0/100")
    assert session.exact_scores == (100, 0)
    assert steps[1].score == round(0.75 * coverage + 0.25 * 50)
    assert steps[1].grade is not None and steps[1].grade.score == coverage  # the coverage itself is unchanged


def test_an_unreadable_exact_answer_asks_again_and_a_skip_scores_zero() -> None:
    session, _ = interview.start(NAMED, max_follow_ups=0, )
    session, _ = interview.submit(session, NAMED, NAMED.model_answer)
    again, steps = interview.submit(session, NAMED, "probably the first one?")
    assert [s.kind for s in steps] == ["notice"] and "letters" in steps[0].text and again == session
    session, steps = interview.skip(session, NAMED)
    assert session.exact_scores == (0,) and steps[-1].kind == "exact"


def test_no_exact_follow_ups_when_the_budget_is_zero() -> None:
    session = interview.InterviewSession(question_id=NAMED.id, max_follow_ups=0, max_exact=0)
    session, steps = interview.submit(session, NAMED, NAMED.model_answer)
    assert [s.kind for s in steps] == ["feedback", "model-answer"] and steps[1].score == steps[0].grade.score  # type: ignore[union-attr]
