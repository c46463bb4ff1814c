"""fix round f7: an exit status above 128 said as "exit N" (stated.yaml exit-code-bare), a Korean sentence read as
prose, and the kubelet's SystemOOM said by name (system-oom-said). Negated, asked and small statuses give nothing."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/RosieOh/RoundHouse/issues/16 (description, the Symptom section)
ROUNDHOUSE = "## 증상\nGrafana 파드가 exit 137로 재시작을 반복했고 CPU를 9코어까지 썼습니다.\n"

# https://github.com/kubernetes/kubernetes/issues/53669 (description, the Expected section)
K8S_53669 = ('some nice event telling me that the pod got SystemOOM - oomkilled and a nice termination status ... not '
             'just "Error" ... so we can report on this happening and it is obvious when debugging\n')


def test_the_korean_sentence_gives_its_exit_status() -> None:
    assert stated_facts(ROUNDHOUSE).get("container.last_terminated.exit_code") == 137, stated_facts(ROUNDHOUSE)


@pytest.mark.parametrize(("sentence", "code"), [
    ("The worker keeps restarting with exit 137 after a few minutes.", 137),
    ("The sidecar exited 143 when the node drained.", 143),
    ("Our job exits with 139 on the second epoch.", 139),
])
def test_a_signal_status_said_bare_is_read(sentence: str, code: int) -> None:
    assert stated_facts(sentence).get("container.last_terminated.exit_code") == code, stated_facts(sentence)


@pytest.mark.parametrize("sentence", [
    "Take exit 12 off the highway and the office is on the left.",  # not a status above 128
    "The script calls exit 1 when the config is missing.",  # a small status: too common to be a container's
    "The pod did not exit 137 this time, it kept running.",  # negated
    "Why does the pod exit 137 when memory looks fine?",  # asked
])
def test_no_bare_status_is_read(sentence: str) -> None:
    assert "container.last_terminated.exit_code" not in stated_facts(sentence), stated_facts(sentence)


def test_system_oom_said_by_name() -> None:
    assert stated_facts(K8S_53669).get("kernel.system_oom_event") is True, stated_facts(K8S_53669)


@pytest.mark.parametrize("sentence", [
    "The node never logged a SystemOOM event during the test.",  # negated
    "Is this a SystemOOM or the container's own limit?",  # asked
])
def test_system_oom_not_read(sentence: str) -> None:
    assert "kernel.system_oom_event" not in stated_facts(sentence), stated_facts(sentence)
