"""Exit codes as Flyte, docker compose, Spark, Argo and `docker ps` print them are read as
`container.last_terminated.exit_code`, and name no symptom: a 137 is a SIGKILL, which the OOM killer sends and so do
others (playbooks/oom-killed.yaml).

Templates from flyteorg/flyteplugins pod_helper.go, docker/compose pkg/compose/printer.go and moby
container/state.go, and Spark's and Argo's words (signals.yaml cites each), rendered with sample values.
"""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts

RENDERED = [
    ("[a8f3k2-n0-0] terminated with exit code (137). Reason [Error]. Message: \n.", 137, "Error"),
    ("[trainer] terminated with exit code (137). Reason [OOMKilled]. Message: \n.", 137, "OOMKilled"),
    ("api-1 exited with code 137", 137, None),
    ("worker exited with code 1 (restarting)", 1, None),
    # Spark's and Argo's words (signals.yaml, the "kills by a runtime's own memory monitor" block), sample values.
    ("The executor with id 7 exited with exit code 137.", 137, None),
    ("Container marked as failed: container_1_0001_01_000002 on host: worker-3. Exit status: 137. Diagnostics: "
     "Container killed on request. Exit code is 137", 137, None),
    ("failed with message: Error (exit code 137)", 137, "Error"),
    ("train-step-3: OOMKilled (exit code 137)", 137, "OOMKilled"),
    ("The executor with id 2 exited with exit code 1.", 1, None),
    # moby container/state.go State.String, as `docker ps -a` prints it (sample values).
    ("3f2a9c1d0b7e   web:1.2   \"nginx\"   2 days ago   Exited (143) About a minute ago   web_1", 143, None),
    ("3f2a9c1d0b7e   web:1.2   \"nginx\"   2 days ago   Exited (0) 3 hours ago   web_1", 0, None),
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
