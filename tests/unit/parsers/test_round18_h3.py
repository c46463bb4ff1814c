"""Fix round 18 (issue 24, helper h3): classes of text that the first-sight cases of batches oo and pp showed
unread. Each is read from a line of ANOTHER public thread than the case (URL beside it), and a text of the same
shape that must not be read; composed texts say so."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import first_facts as facts


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

def _joined(text: str) -> dict[str, object]:
    from tests.unit.parsers.paste_facts import joined_facts
    return joined_facts(text)


def _parsers(text: str) -> dict[str, str]:
    from collectors.models import Artifact, ArtifactKind
    from collectors.parsers.registry import parse_artifact
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
