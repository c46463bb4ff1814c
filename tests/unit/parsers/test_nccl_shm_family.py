"""NCCL's shared-memory segment that cannot be made (fix round f7): its WARN lines, also cut before their
"NCCL WARN" prefix (collectors/parsers/gpu/nccl.py), and "No space left on device" said of shared memory in a
sentence about a distributed run (stated.yaml nccl-shm-no-space). A DataLoader's full /dev/shm, a negated and an
asked sentence are not NCCL's."""

from __future__ import annotations

import pytest

from collectors.parsers.registry import parse_artifact
from collectors.paste import artifacts_from_text
from tests.unit.parsers.paste_facts import stated_facts

# https://github.com/hiyouga/EasyR1/issues/228 (description, first line)
EASYR1 = "(Runner pid=868697) Error while creating shared memory segment /dev/shm/nccl-UmqSM9 (size 7340384)\n"

# https://github.com/AI-Hypercomputer/xpk/pull/965 (description, first line)
XPK = ("During a TorchTitan run, the 'No space left on device' error occured because of a missing shared memory "
       "mount\n")

# Composed: NCCL's WARN format strings rendered with a segment name of its mkstemp template and the host:pid:tid
# prefix NCCL prints; src/include/shm.h (2.4-2.11), src/misc/shmutils.cc (2.12-2.2x), src/transport/net.cc.
TEMPLATES = [
    ("node-0:120:310 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-a1B2c3 (size 9637888)", "create-failed"),
    ("node-0:120:310 [0] misc/shmutils.cc:72 NCCL WARN Error: failed to create shared memory file "
     "/dev/shm/nccl-a1B2c3, error No space left on device (28)", "no-space"),
    ("node-0:120:310 [0] transport/net.cc:610 NCCL WARN Error: could not create shared memory in /dev/shm",
     "create-failed"),
    ("node-0:120:310 [0] misc/shmutils.cc:80 NCCL WARN Error: failed to extend /dev/shm/nccl-a1B2c3 to 9637892 bytes, "
     "error: No space left on device (28)", "no-space"),
]


def _facts(text: str) -> dict[str, object]:
    return {fact.name: fact.value for artifact in artifacts_from_text(text, "paste.txt")
            for fact in parse_artifact(artifact).facts}


def test_a_segment_error_cut_before_its_prefix_is_nccls() -> None:
    assert _facts(EASYR1).get("nccl.shm_errors") == ["create-failed"]


@pytest.mark.parametrize(("line", "kind"), TEMPLATES)
def test_every_wording_of_the_family_is_read(line: str, kind: str) -> None:
    assert kind in (_facts(line + "\n").get("nccl.shm_errors") or []), _facts(line + "\n")


def test_no_space_said_of_shared_memory_in_a_distributed_run() -> None:
    assert stated_facts(XPK).get("nccl.shm_errors") == ["no-space"], stated_facts(XPK)


@pytest.mark.parametrize("sentence", [
    # a DataLoader's /dev/shm: no distributed run named (oom-killed's shm-too-small reads it)
    "The DataLoader workers crash with No space left on device because /dev/shm is only 64MB.",
    "During a TorchTitan run, we did not get the No space left on device error from shared memory.",  # negated
    "Could a TorchTitan run fail with No space left on device when shared memory is small?",  # asked
    "During a TorchTitan run, the checkpoint write failed with No space left on device on the PVC.",  # a disk
])
def test_no_nccl_shm_error_is_read(sentence: str) -> None:
    assert "nccl.shm_errors" not in stated_facts(sentence), stated_facts(sentence)
