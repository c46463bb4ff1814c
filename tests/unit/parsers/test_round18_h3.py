"""Fix round 18 (issue 24, helper h3): classes of text that the first-sight cases of batches oo and pp showed
unread. Each is read from a line of ANOTHER public thread than the case (URL beside it), and a text of the same
shape that must not be read; composed texts say so."""

from __future__ import annotations

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.registry import parse_artifact
from tests.unit.parsers.paste_facts import first_facts as facts
from tests.unit.parsers.paste_facts import joined_facts as _joined

# ---- the external attacher's error without its VolumeAttachment (signals.yaml csi-attach-failed-rpc-status) ----

@pytest.mark.parametrize("text", [
    # https://github.com/longhorn/longhorn/issues/4441 (the title)
    "[BUG] failed to attach: rpc error: code = DeadlineExceeded desc = volume pvc- failed to attach to node",
    # composed: the same status said in a sentence, the message in inline code
    "The VolumeAttachment says `failed to attach: rpc error: code = Internal desc = no 0 initiator` and stays so.",
])
def test_the_attachers_error_with_the_drivers_grpc_status_is_an_attach_failure(text: str) -> None:
    read = facts(text)
    assert read.get("volume.mount_failed") is True, read
    assert "attach-failed" in read.get("volume.errors", []), read  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    "Error: failed to attach: container 3f2a is not running",  # docker attach (test_names_nothing.py)
    "(gdb) attach 4242\nptrace: failed to attach: Operation not permitted",  # composed: a debugger
    "failed to attach: rpc error",  # composed: no gRPC status, nothing says what failed
])
def test_failed_to_attach_without_a_grpc_status_is_no_volume(text: str) -> None:
    assert "volume.mount_failed" not in facts(text)


# ---- a setting said to be the cause (stated.yaml config-said-cause), also beside a signal in the same sentence ----

def _parsers(text: str) -> dict[str, str]:
    return {f.name: f.parser for f in parse_artifact(Artifact(id="p", kind=ArtifactKind.TEXT, content=text)).facts}


@pytest.mark.parametrize("text", [
    # https://github.com/codad5/google-task-desktop/pull/3 (description)
    "This is to resolve the crash on build due to a missing env variable in the rust part of the application",
    # composed: the variable named, said unset
    "The api pod restarts every minute because DATABASE_URL is not set in the Deployment.",
    # composed: a placeholder left in an assignment, in inline code
    "The worker crashes at start because `S3_BUCKET=BUCKET` (placeholder) was never substituted.",
])
def test_a_setting_said_wrong_as_the_cause_is_a_config_error(text: str) -> None:
    assert "config" in _joined(text).get("app.errors", []), _joined(text)  # type: ignore[operator]


@pytest.mark.parametrize("text", [
    # https://github.com/prasanthrangan/hyprdots/pull/596 (description): a variable named as the cause, not as wrong
    "It seems to be because of the GDK_BACKEND environment variable because it completely fixes the issue when "
    "removed.",
    "The pod is in CrashLoopBackOff because the database is down.",  # composed: another cause
    "We set it because FOO_BAR=1 is needed by the exporter.",  # composed: an assignment, no fault
    "The pod is not crashing because of a missing env var; the variable is there.",  # composed: denied
    "Is it crashing because of a wrong config?",  # composed: asked
])
def test_a_cause_that_is_no_wrong_setting_says_nothing(text: str) -> None:
    assert "config" not in (_joined(text).get("app.errors") or [])  # type: ignore[operator]


# A sentence a line signal read in part: the signal's message ("CrashLoopBackOff") is its own, a long command quoted
# further on is another program's, and the rest of the sentence is the writer's (collectors/parsers/text/stated.py
# _quoted, the signal's match located before a quote is held against it).
CRASHLOOP_WITH_CAUSE = (
    "The exporter is in CrashLoopBackOff (40 restarts) because `METRICS_PORT=PORT` (placeholder); "  # composed
    "it came back after `kubectl apply -f deploy/exporter/deployment.yaml` without the substitution.")


def test_the_rest_of_a_sentence_a_signal_read_in_part_is_read_for_its_cause() -> None:
    read = _joined(CRASHLOOP_WITH_CAUSE)
    assert read.get("container.waiting.reason") == "CrashLoopBackOff"
    assert "config" in read.get("app.errors", []), read  # type: ignore[operator]
    assert _parsers(CRASHLOOP_WITH_CAUSE)["container.restart_backoff"].startswith("stated:")


def test_a_signal_inside_a_long_quote_stays_shown() -> None:
    # composed: the kubelet's words quoted whole in a sentence are the program's, observed, as before round 18
    text = "The event says `Back-off restarting failed container; pod is in CrashLoopBackOff state now` again."
    assert not _parsers(text)["container.restart_backoff"].startswith("stated:")


# ---- CFS throttling said to come while the usage is a fraction of the allocation (cpu-throttled-below-allocation) --

@pytest.mark.parametrize("text", [
    # https://github.com/k3s-io/k3s/issues/5085 (description, "Actual behavior")
    "The CPU is being throttled when the CPU usage is 50% from the target limit, especially when the target limit is "
    "<= 1000 milis.",
    # https://github.com/k3s-io/k3s/issues/5085 (description, "Describe the bug")
    "The pods are throttled even when the limits aren't reached.",
    # composed after replicatedhq/kots#1445 (whose own sentence opens on "if you see", a condition)
    "The cpu utilisation is under requests but still CPU is throttling.",
])
def test_throttling_said_below_the_allocation_is_the_cfs_quota(text: str) -> None:
    assert facts(text).get("cpu.limit_slowed") is True, facts(text)


@pytest.mark.parametrize("text", [
    # https://github.com/vmware/pinniped/issues/2161 (description): throttled, no usage set against the limit
    "This does not appear to affect the performance of the container itself since it is just on a sleep loop, but "
    "this is triggering our monitoring for critical platform workloads throttling.",
    # composed after an interview note on DynamoDB: a table's capacity, not a CPU's
    "Your DynamoDB table is getting throttled even though you use far less than the provisioned capacity overall.",
    "The container is not throttled; it uses far less than its limit.",  # composed: denied
    "CPU usage is well below the limit and there is no throttling at all.",  # composed: denied
    "We got throttled by the GitHub API although we used far less than the rate limit.",  # composed: an API
])
def test_throttling_of_another_kind_or_denied_says_nothing(text: str) -> None:
    assert "cpu.limit_slowed" not in facts(text)


# ---- a restart said to be due to the liveness probe (stated.yaml liveness-kill-said, round 18 alternative) ----------

@pytest.mark.parametrize("text", [
    # https://github.com/kubewall/kubewall/issues/51 (description)
    "The pod is in the restart loop after few minutes due to failing in liveliness probe .",
    "Our api pod crashed due to a liveness probe failure twice tonight.",  # composed
    "The container restarted after failing its liveness check three times.",  # composed
])
def test_a_restart_said_due_to_the_liveness_probe_is_a_liveness_kill(text: str) -> None:
    assert _joined(text).get("container.liveness_killed") is True, _joined(text)


@pytest.mark.parametrize("text", [
    # https://github.com/kubernetes/kubernetes/issues/68110 (description): the restart wanted, not seen
    "I expect the container to get restarted immediately.",
    "The pod restarted after the liveness probe was changed to /healthz.",  # composed: a change, no failure
    "The pod crashed due to OOM, not because of the liveness probe.",  # composed: another cause, the probe denied
    "If the pod restarts due to a liveness probe failure, the alert fires.",  # composed: a condition
])
def test_a_restart_not_said_due_to_the_liveness_probe_is_no_liveness_kill(text: str) -> None:
    assert "container.liveness_killed" not in _joined(text)
