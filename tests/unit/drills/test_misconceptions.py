"""Misconceptions added for issue 26 (gpu-scheduling): a confident misstatement is caught, a correct answer or
a denial of the misstatement is not, and the clause that made it is shown."""

from __future__ import annotations

import pytest

from drills.grading import grade
from drills.questions import Question, load_bank

BANK = load_bank()


@pytest.mark.parametrize(("question", "answer", "misconception"), [
    ("k8s-gpu-scheduling-basics", "The kubelet sees the cards on its own, so no device plugin is needed at all.",
     "no-plugin-needed"),
    ("k8s-gpu-scheduling-limits", "The default scheduler already keeps a job on NVLink-connected GPUs.",
     "scheduler-topology-aware"),
    ("contiguous-gpu-allocation", "Kubernetes automatically hands a job GPUs behind the same NVLink switch.",
     "nvlink-by-default"),
    ("time-slicing-vs-mig", "Time-slicing gives every pod its own memory on the shared GPU.", "ts-isolates"),
    ("volcano-vs-kueue", "Kueue replaces the kube-scheduler and binds the pods itself.", "kueue-replaces-scheduler"),
])
def test_a_confident_misstatement_is_a_wrong_claim(question: str, answer: str, misconception: str) -> None:
    q = BANK.questions[question]
    result = grade(answer, q.expected_points, asked=q.question)
    assert [w.id for w in result.wrong_claims] == [misconception]
    assert result.wrong_claims[0].evidence and result.wrong_claims[0].evidence in answer


@pytest.mark.parametrize(("question", "answer"), [
    ("k8s-gpu-scheduling-limits", "The default scheduler does not know NVLink from PCIe, so a topology-aware "
                                  "plugin has to place multi-GPU jobs."),
    ("time-slicing-vs-mig", "Time-slicing gives no memory isolation, whereas MIG gives each slice its own memory."),
    ("volcano-vs-kueue", "Volcano replaces the kube-scheduler, whereas Kueue only admits jobs and leaves binding "
                         "to the default scheduler."),
])
def test_a_denial_or_a_contrast_is_not_the_misstatement(question: str, answer: str) -> None:
    q = BANK.questions[question]
    assert grade(answer, q.expected_points, asked=q.question).wrong_claims == ()


@pytest.mark.parametrize("question", [q for q in BANK.questions.values() if q.topic == "gpu-scheduling"],
                         ids=lambda q: q.id)
def test_model_answers_make_no_wrong_claim(question: Question) -> None:
    assert grade(question.model_answer, question.expected_points, asked=question.question).wrong_claims == ()
