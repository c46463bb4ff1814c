"""Round 13 (issue #24, class a): a GPU said to sit in an idle performance state while work runs
(symptom_words.yaml, the P-state entry) runs gpu-underutilized; an idle GPU in P8, or P0 under load, does not."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import first_facts


@pytest.mark.parametrize("line", [
    # https://github.com/microsoft/pai/issues/3387 (description)
    "Sometimes GPU perf state change to P8 and cause low performance for running job.",
])
def test_an_idle_p_state_under_work_is_an_underutilised_gpu(line: str) -> None:
    assert "gpu-underutilized" in (first_facts(line).get("evidence.symptoms") or [])  # type: ignore[operator]


@pytest.mark.parametrize("line", [
    "When nothing is scheduled nvidia-smi shows perf state P8 for every GPU.",
    "The performance state is P0 while the job is running.",
    "Is it normal that the perf state is P8 before the job starts?",
])
def test_an_idle_gpu_or_a_busy_p_state_is_no_symptom(line: str) -> None:
    assert "gpu-underutilized" not in (first_facts(line).get("evidence.symptoms") or [])  # type: ignore[operator]
