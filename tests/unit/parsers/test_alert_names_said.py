"""Round 13 (issue #24, class a): alert names said in a sentence (signals.yaml alert-names-said-*): read as names
only, never as the symptom the alert maps to, and never from a sentence about alerts in general
(test_names_nothing.py)."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts


@pytest.mark.parametrize(("line", "names"), [
    # https://github.com/prometheus-operator/kube-prometheus/issues/1531 (description)
    ("Alertnames are KubeControllerManagerDown and KubeSchedulerDown.",
     ["KubeControllerManagerDown", "KubeSchedulerDown"]),
    # The same form with one name, and in backticks as markdown writes it (sample sentences).
    ("The alert name is `KubePodCrashLooping`, it fires every night.", ["KubePodCrashLooping"]),
    ("we get two alerts named NodeFilesystemSpaceFillingUp & NodeFilesystemAlmostOutOfSpace",
     ["NodeFilesystemSpaceFillingUp", "NodeFilesystemAlmostOutOfSpace"]),
])
def test_alert_names_in_a_sentence_are_read_as_names(line: str, names: list[str]) -> None:
    facts = joined_facts(line)
    assert facts.get("alert.names") == names
    assert "alert.symptoms" not in facts  # a name said is not the alert's labels: nothing maps it to a playbook
