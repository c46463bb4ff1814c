"""Exit codes as Flyte and docker compose print them are read as `container.last_terminated.exit_code`, and name
no symptom: a 137 is a SIGKILL, which the OOM killer sends and so do others (playbooks/oom-killed.yaml).

Templates from flyteorg/flyteplugins pod_helper.go and docker/compose pkg/compose/printer.go (signals.yaml cites
both), rendered with sample values.
"""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts

RENDERED = [
    ("[a8f3k2-n0-0] terminated with exit code (137). Reason [Error]. Message: \n.", 137, "Error"),
    ("[trainer] terminated with exit code (137). Reason [OOMKilled]. Message: \n.", 137, "OOMKilled"),
    ("api-1 exited with code 137", 137, None),
    ("worker exited with code 1 (restarting)", 1, None),
]


@pytest.mark.parametrize(("line", "code", "reason"), RENDERED)
def test_the_exit_code_is_read_and_names_no_symptom_by_itself(line: str, code: int, reason: str | None) -> None:
    facts = joined_facts(line)
    assert facts.get("container.last_terminated.exit_code") == code, facts
    assert facts.get("container.last_terminated.reason") == reason, facts
    # Reason OOMKilled is the kubelet's own word for an OOM kill; a bare 137 or "Error" says no more than SIGKILL.
    assert facts.get("evidence.symptoms", []) == [], facts


def test_a_compose_status_needs_the_whole_line() -> None:
    # A sentence about a process is no compose status line: the code is left to the sentence reader.
    facts = joined_facts("The script said the child exited with code 137 yesterday and again today.")
    assert facts.get("evidence.symptoms", []) == []
