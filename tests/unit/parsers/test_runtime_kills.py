"""Kills by a runtime's own memory monitor (Ray, YARN) and exit code 137 as Spark and Argo print it (signals.yaml,
the "kills by a runtime's own memory monitor" block). Each template is rendered with sample values as the program
prints it; real pastes carry their URL; negatives name no kill. Their exit codes are read in test_exit_code_forms.py.
"""

from __future__ import annotations

import pytest

from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
from tests.unit.parsers.paste_facts import joined_facts

# ray-project/ray src/ray/raylet/node_manager.cc and python/ray/exceptions.py, rendered with sample values.
RAY_RENDERED = [
    "(raylet) node_manager.cc:3040: 3 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed "
    "due to other reasons at node (ID: 2c8262, IP: 10.0.0.5) over the last time period.",
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    "Task was killed due to the node running low on memory.",
    "2 worker(s) were killed due to the node running low on memory.",
    "A worker died or was killed while executing a task by an unexpected system error. exit_type = NODE_OUT_OF_MEMORY, "
    "exit_detail = (see above)",
]

# apache/spark YarnAllocator.scala, rendered with sample values (2.x and 3.x wordings).
YARN_RENDERED = [
    "ExecutorLostFailure (executor 3 exited caused by one of the running tasks) Reason: Container killed by YARN for "
    "exceeding memory limits. 9.1 GB of 9 GB physical memory used. Consider boosting "
    "spark.yarn.executor.memoryOverhead.",
    "Reason: Container killed by YARN for exceeding physical memory limits. 5.5 GB of 5.5 GB physical memory used.",
]

# Real pastes, cut at whole lines.
REAL_KILLS = [
    # https://github.com/real-stanford/flingbot/issues/11 (description)
    "ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.",
    # https://github.com/yahoo/TensorFlowOnSpark/issues/134 (comment by leewyang)
    "17/11/25 18:23:24 ERROR YarnClusterScheduler: Lost executor 9 on harrisburg.cs.colostate.edu: Container killed by "
    "YARN for exceeding memory limits. 7.2 GB of 4.2 GB virtual memory used. Consider boosting "
    "spark.yarn.executor.memoryOverhead.",
    # https://github.com/apache/spark/pull/20735 (description)
    "ExecutorLostFailure (executor 121 exited caused by one of the running tasks) Reason: Container killed by YARN for "
    "exceeding memory limits. 30.7 GB of 30 GB physical memory used. Consider boosting "
    "spark.yarn.executor.memoryOverhead.",
]


@pytest.mark.parametrize("text", RAY_RENDERED + YARN_RENDERED + REAL_KILLS)
def test_a_runtimes_memory_monitor_kill_is_read_with_its_symptom(text: str) -> None:
    facts = joined_facts(text)
    assert facts.get("app.memory_monitor_kill") is True, facts
    assert "oom-killed" in facts.get("evidence.symptoms", []), facts


@pytest.mark.parametrize("text", [
    # A JVM that could not grow its heap throws; nobody killed the process (synthetic, the JVM's own wording).
    'Exception in thread "main" java.lang.OutOfMemoryError: Java heap space',
    "java.lang.OutOfMemoryError: GC overhead limit exceeded",
    # Ray's summary with no worker killed, and Ray's advice without a kill (synthetic).
    "0 Workers (tasks / actors) killed due to memory pressure (OOM), 2 Workers crashed due to other reasons at node",
    "Refer to the documentation on how to address the out of memory issue: "
    "https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html.",
    # A question is no report.
    "Could the task have been killed for memory? Maybe OOM?",
])
def test_no_kill_is_read_where_no_monitor_killed_anything(text: str) -> None:
    facts = joined_facts(text)
    assert "app.memory_monitor_kill" not in facts, facts
    assert "oom-killed" not in facts.get("evidence.symptoms", []), facts



@pytest.mark.parametrize(("paste", "code"), [
    ("xgboost-2931-yarn-exit-status-137", 137),
    ("argo-workflows-12190-node-message-exit-code", 1),
    ("codalab-2348-docker-ps-exited-137", 137),
])
def test_real_exit_codes_in_yarns_and_argos_words_are_read(paste: str, code: int) -> None:
    assert joined_facts(PASTES[paste]).get("container.last_terminated.exit_code") == code


def test_a_real_yarn_memory_kill_is_a_memory_monitor_kill() -> None:
    facts = joined_facts(PASTES["tensorflowonspark-134-yarn-killed-exceeding-memory"])
    assert facts.get("app.memory_monitor_kill") is True, facts


# https://github.com/vllm-project/vllm/issues/1160 (description): the raylet's summary as syslog kept it (rsyslog's
# "#033" for the escape byte of its colours) and a viewer wrapped it at its width, mid-message.
RAY_WRAPPED = (
    "#033[2m#033[33m(raylet)#033[0m [DATE] (raylet) node_manager.cc:3007: 2 Workers (tasks /\n"
    " actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: "
    "abd406d415bd2b74a5\n"
    "e281968fd76aa200d56e4529fd1c1cd4373840, IP: 10.0.167.26) over the last time period. To see more information "
    "about th\n"
)


def test_a_wrapped_ray_summary_is_a_shown_memory_monitor_kill() -> None:
    facts = [f for a in artifacts_from_text(RAY_WRAPPED, "paste") for f in parse_artifact(a).facts]
    kills = [f for f in facts if f.name == "app.memory_monitor_kill"]
    assert kills and kills[0].value is True, facts
    # The raylet's own line, wrapped: shown, not said in a sentence.
    assert not kills[0].parser.startswith("stated:"), kills[0].parser


def test_a_sentence_after_a_program_line_stays_said() -> None:
    # Composed: a person's own sentence under a program's line is said, however it starts.
    text = ("(raylet) node_manager.cc:3007: the raylet printed its summary of the last time period here\n"
            "I think 2 Workers (tasks / actors) killed due to memory pressure (OOM) is the reason.\n")
    kills = [f for a in artifacts_from_text(text, "paste") for f in parse_artifact(a).facts
             if f.name == "app.memory_monitor_kill"]
    assert kills and all(f.parser.startswith("stated:") for f in kills), kills
