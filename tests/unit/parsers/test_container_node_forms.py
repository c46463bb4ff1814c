"""Containers and nodes in the forms people paste them (issue 24, node7): a runtime that cannot exec a container's
command, an operator's log naming a pod's termination, a described pod's own reason Evicted, `get pods` rows in
CrashLoopBackOff, a node listed NotReady and then Ready, condition rows of several nodes.

Real pastes carry their thread's URL; rendered lines fill the templates the cited sources print (signals.yaml and
collectors/parsers/kubernetes/messages/k8s_messages.py name them)."""

from __future__ import annotations

import json

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.kubernetes import describe_node, node_table
from collectors.parsers.kubernetes.messages.k8s_messages import entrypoint_failed
from tests.unit.parsers.paste_facts import first_facts, joined_facts

# ---- the runtime cannot exec the container's process ---------------------------------------------------------

# Each runtime's wording, rendered with a sample command (the sources are listed above _ENTRYPOINT_FAILED).
RUNTIME_FORMS = [
    'OCI runtime create failed: container_linux.go:380: starting container process caused: exec: "app.sh": '
    "executable file not found in $PATH: unknown",
    'runc create failed: unable to start container process: exec: "app.sh": executable file not found in $PATH',
    'failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: '
    "unable to start container process: exec: \"/app/run\": stat /app/run: no such file or directory: unknown",
    "exec /usr/local/bin/run.sh: no such file or directory",
    "exec /usr/local/bin/run.sh: permission denied",
    "exec /usr/local/bin/run.sh: exec format error",
    "standard_init_linux.go:228: exec user process caused: no such file or directory",
    "executable file `app.sh` not found in $PATH: No such file or directory",
    "exec container process `/app/run`: No such file or directory",
    "exec container process `/app/run`: Permission denied",
    "exec container process (missing dynamic library?) `/app/run`: No such file or directory",
    "exec container process `/app/run`: Exec format error",
    "open executable: Permission denied",
    # https://github.com/opencontainers/runc/issues/1490 (title)
    'container_linux.go:259: starting container process caused "exec: \\"sleep\\": executable file not found in '
    '$PATH"',
    # https://github.com/opencontainers/runc/pull/591 (description)
    'exec: "/etc": permission denied',
]


@pytest.mark.parametrize("message", RUNTIME_FORMS)
def test_every_runtime_wording_of_an_entrypoint_that_cannot_run_is_read(message: str) -> None:
    assert entrypoint_failed(message)


@pytest.mark.parametrize("message", [
    "dial tcp 10.0.0.7:5432: connect: connection refused",
    "open /etc/app/config.yaml: no such file or directory",  # the program ran: a file it reads is missing
    "Error: secret \"db\" not found",
    "context deadline exceeded",
])
def test_other_failures_are_no_entrypoint(message: str) -> None:
    assert not entrypoint_failed(message)


def _pod_status(message: str, reason: str = "StartError", code: int = 128) -> str:
    terminated = {"exitCode": code, "reason": reason, "message": message}
    status = {"containerStatuses": [{"name": "app", "restartCount": 2, "lastState": {"terminated": terminated},
                                     "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "app-0"}, "status": status}, indent=2)


@pytest.mark.parametrize("message", RUNTIME_FORMS[:3])
def test_a_terminated_state_whose_message_says_the_command_cannot_run_is_an_entrypoint_error(message: str) -> None:
    facts = first_facts(_pod_status(message))
    assert facts.get("app.errors") == ["entrypoint"], facts
    assert facts.get("container.last_terminated.reason") == "StartError"


def test_a_terminated_state_of_a_program_that_ran_names_no_entrypoint() -> None:
    facts = first_facts(_pod_status("panic: runtime error: index out of range", "Error", 2))
    assert facts.get("container.last_terminated.exit_code") == 2
    assert "app.errors" not in facts


# ---- Airflow's KubernetesExecutor naming a failed pod's container -------------------------------------------

def _airflow(reason: str, message: str, code: str) -> str:
    """apache/airflow cncf-kubernetes kubernetes_executor.py _change_state's warning, rendered."""
    return (f"Task example.extract.1 failed in pod airflow/example-extract-x1. Pod phase: Failed, reason: None, "
            f"message: None, container_type: main, container_name: base, container_state: terminated, "
            f"container_reason: {reason}, container_message: {message}, exit_code: {code}")


@pytest.mark.parametrize(("line", "reason", "code"), [
    (_airflow("OOMKilled", "None", "137"), "OOMKilled", 137),
    (_airflow("Error", "Container failed with exit code 1, see log", "1"), "Error", 1),
    (_airflow("None", "None", "143"), None, 143),
])
def test_the_executor_s_termination_is_read(line: str, reason: str | None, code: int) -> None:
    facts = joined_facts(line)
    assert facts.get("container.last_terminated.exit_code") == code, facts
    assert facts.get("container.last_terminated.reason") == reason, facts


def test_no_exit_code_is_read_from_a_none() -> None:
    facts = joined_facts(_airflow("None", "None", "None"))
    assert "container.last_terminated.exit_code" not in facts


# ---- a described pod's own reason Evicted ---------------------------------------------------------------------

EVICTED_DESCRIBED = [
    # https://github.com/GoogleCloudPlatform/cloud-code-samples/issues/302 (comment by tstromberg, 2020-04-24)
    ("Status:         Failed\n"
     "Reason:         Evicted\n"
     "Message:        The node was low on resource: ephemeral-storage. Container backend was using 96Ki, which "
     "exceeds its request of 0.\n", "ephemeral-storage"),
    # https://github.com/derailed/k9s/issues/174 (comment by brunohms, 2019-04-26), the status lines
    ("Status:             Failed\n"
     "Reason:             Evicted\n"
     "Message:            The node was low on resource: memory. Container proprietary-crawler was using 9402820Ki, "
     "which exceeds its request of 7G. \n", "memory"),
]


@pytest.mark.parametrize(("text", "resource"), EVICTED_DESCRIBED)
def test_a_described_pod_s_reason_evicted_is_read(text: str, resource: str) -> None:
    facts = joined_facts(text)
    assert facts.get("pod.status.reason") == "Evicted", facts
    assert facts.get("eviction.resource") == resource
    assert "evicted" in facts.get("evidence.symptoms", [])  # type: ignore[operator]


def test_a_container_s_indented_reason_is_not_the_pod_s() -> None:
    # https://github.com/projectcalico/calico/issues/6715 (description), a container's State lines
    text = ("    State:          Terminated\n"
            "      Reason:       Completed\n"
            "      Exit Code:    0\n")
    facts = joined_facts(text)
    assert "pod.status.reason" not in facts
    assert facts.get("evidence.symptoms", []) == []


# ---- get pods rows in CrashLoopBackOff -------------------------------------------------------------------------

# https://github.com/kubernetes/kubernetes/issues/63873 (description)
K8S_63873 = """[root@k8s-node1 ~]# kubectl get pod -n kube-system
NAME                                       READY     STATUS              RESTARTS   AGE
calico-etcd-spwts                          1/1       Running             0          1h
calico-kube-controllers-685755779f-8qvg9   1/1       Running             0          1h
calico-node-ls4nf                          1/2       CrashLoopBackOff    12         44m
calico-node-t9r8z                          2/2       Running             1          1h
"""


def test_a_crash_loop_row_says_the_kubelet_backs_off() -> None:
    facts = first_facts(K8S_63873)
    assert facts.get("container.restart_backoff") is True, facts
    assert facts.get("container.waiting.reason") == "CrashLoopBackOff"
    assert facts.get("container.restart_count") == 12


def test_running_rows_say_no_back_off() -> None:
    facts = first_facts("\n".join(K8S_63873.splitlines()[:4]) + "\n")
    assert "container.restart_backoff" not in facts, facts


# ---- a node listed again: its later row is its state ------------------------------------------------------------

def _nodes(*rows: tuple[str, str, str]) -> str:
    """`kubectl get nodes` tables (printNode's NAME STATUS ROLES AGE VERSION), one per row, run one after another."""
    out = ""
    for name, status, age in rows:
        out += ("$ kubectl get nodes\nNAME     STATUS     ROLES           AGE   VERSION\n"
                f"{name:<8} {status:<10} control-plane   {age:<5} v1.30.2\n\n")
    return out


def _node_facts(text: str) -> list[tuple[str, object, str | None]]:
    result = node_table.parse(Artifact(id="a", kind=ArtifactKind.NODE_TABLE, content=text))
    return [(f.name, f.value, f.subject) for f in result.facts]


def test_not_ready_then_ready_is_a_node_that_came_up() -> None:
    facts = _node_facts(_nodes(("node-a", "NotReady", "0s"), ("node-a", "Ready", "15s")))
    assert ("node.conditions", ["NotReady"], "node/node-a") not in facts
    assert ("node.conditions", [], "node/node-a") in facts


def test_ready_then_not_ready_is_a_node_that_went_down() -> None:
    facts = _node_facts(_nodes(("node-a", "Ready", "3d"), ("node-a", "NotReady", "3d")))
    assert ("node.conditions", ["NotReady"], "node/node-a") in facts


def test_another_node_s_ready_row_does_not_hide_a_not_ready_one() -> None:
    facts = _node_facts(_nodes(("node-a", "NotReady", "3d"), ("node-b", "Ready", "3d")))
    assert ("node.conditions", ["NotReady"], "node/node-a") in facts


# ---- condition rows of several nodes ----------------------------------------------------------------------------

def _condition_rows(memory: str = "False", reason: str = "KubeletHasSufficientMemory") -> str:
    """A conditions table's rows as kubectl describe prints them, with the kubelet's reasons (pkg/kubelet/nodestatus
    setters.go), the header cut."""
    t = "Wed, 20 Mar 2019 09:07:37 +0000   Thu, 21 Feb 2019 22:20:25 +0000"
    return (f"  MemoryPressure   {memory:<5}   {t}   {reason}   kubelet has sufficient memory available\n"
            f"  DiskPressure     False   {t}   KubeletHasNoDiskPressure     kubelet has no disk pressure\n"
            f"  PIDPressure      False   {t}   KubeletHasSufficientPID      kubelet has sufficient PID available\n")


def _described_conditions(text: str) -> object:
    result = describe_node.parse(Artifact(id="a", kind=ArtifactKind.DESCRIBE_NODE, content=text))
    return next((f.value for f in result.facts if f.name == "node.conditions"), None)


def test_one_node_s_healthy_rows_say_no_condition_is_abnormal() -> None:
    assert _described_conditions(_condition_rows()) == []


def test_several_nodes_healthy_rows_claim_nothing() -> None:
    assert _described_conditions(_condition_rows() + "\n" + _condition_rows()) is None


def test_an_abnormal_row_among_several_nodes_is_still_read() -> None:
    text = _condition_rows() + "\n" + _condition_rows("True", "KubeletHasInsufficientMemory")
    assert _described_conditions(text) == ["MemoryPressure"]


# https://github.com/vllm-project/vllm/issues/30076 (description): crun's structured log line, an amd64 image on arm64
VLLM_30076 = ('{"msg":"exec container process `/opt/venv/bin/vllm`: Exec format error","level":"error",'
              '"time":"2025-12-04T15:15:35.826445Z"}\n')


def test_crun_s_exec_failure_in_a_paste_is_an_entrypoint_error() -> None:
    facts = joined_facts(VLLM_30076)
    assert facts.get("app.errors") == ["entrypoint"], facts
    assert "crash-loop" in facts.get("evidence.symptoms", [])  # type: ignore[operator]
