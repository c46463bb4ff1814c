"""A `kubectl get pod -o yaml` pasted from the middle of a nested block (collectors/parsers/kubernetes/
k8s_object_text.py _after_cut_top): the first lines sit deeper than the keys after them, and the status below is
still read. The shapes are synthetic (the key layout of core/v1 PodStatus, every release); the real paste of this
class is tests/realworld/oom-killed/flux-helm-controller-349-pod-yaml-laststate-oomkilled-1gb.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from collectors.parsers.kubernetes.k8s_object_text import _after_cut_top
from tests.unit.parsers.paste_facts import first_facts

CUT_IN_CONDITIONS = """\
        lastTransitionTime: '2024-01-02T10:00:00Z'
      - type: PodScheduled
        status: 'True'
    hostIP: 10.0.0.4
    startTime: '2024-01-02T09:59:58Z'
    containerStatuses:
      - name: worker
        lastState:
          terminated:
            exitCode: 137
            reason: OOMKilled
        restartCount: 3
    qosClass: Burstable
"""

HEALTHY_CUT = """\
        status: 'True'
      - type: PodScheduled
        status: 'True'
    hostIP: 10.0.0.4
    containerStatuses:
      - name: worker
        state:
          running:
            startedAt: '2024-01-02T10:00:01Z'
        restartCount: 0
    qosClass: Guaranteed
"""


def test_a_status_whose_top_was_cut_is_read_at_any_indentation() -> None:
    facts = first_facts(CUT_IN_CONDITIONS)
    assert facts.get("container.restart_count") == 3, facts
    assert facts.get("pod.qos_class") == "Burstable", facts
    assert facts.get("container.last_terminated.reason") == "OOMKilled", facts
    assert facts.get("container.last_terminated.exit_code") == 137, facts


def test_a_healthy_cut_status_names_no_symptom() -> None:
    facts = first_facts(HEALTHY_CUT)
    assert facts.get("pod.qos_class") == "Guaranteed", facts
    assert facts.get("container.restart_count") == 0, facts
    assert "container.last_terminated.exit_code" not in facts, facts
    assert facts.get("evidence.symptoms", []) == [], facts


def test_a_piece_whose_top_is_not_deeper_is_left_alone() -> None:
    assert _after_cut_top("a: 1\n  b: [\n") is None


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=" -:ab\n'\"[]{}#", max_size=200))
def test_any_text_returns_none_or_a_mapping(text: str) -> None:
    got = _after_cut_top(text)
    assert got is None or (isinstance(got[1], dict) and 0 <= got[0] <= len(text))
