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
