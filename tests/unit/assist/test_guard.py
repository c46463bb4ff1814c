"""The checks every generated text passes before it is shown."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.assist.guard import catalog_ids, check_generated, check_names, check_statuses, named_ids

REPORT = {"limit-too-low": {"confirmed"}, "node-oom": {"ruled-out"}, "memory-leak": {"unknown"},
          "capacity": {"likely"}}


@pytest.mark.parametrize(("text", "problem"), [
    ("`limit-too-low` is confirmed; `node-oom` is ruled out.", None),
    ("The container hit its limit-too-low case. Nothing else.", None),
    ("Check `kubectl describe pod`; `capacity` is likely.", None),
    # A hypothesis of another playbook, in backticks or written out.
    ("Maybe `gpu-fallen-off-bus` too.", "names gpu-fallen-off-bus"),
    ("It could be gpu-fallen-off-bus.", "names gpu-fallen-off-bus"),
    # A one-word id only counts in backticks: "dns" in prose is just a word.
    ("No sign of dns trouble.", None),
    ("Also `dns`.", "names dns"),
    # Status contradictions, sentence by sentence.
    ("`node-oom` is confirmed.", "calls node-oom confirmed but the report says ruled-out"),
    ("`limit-too-low` was ruled out by the events.", "calls limit-too-low ruled-out"),
    ("`limit-too-low` is confirmed while `node-oom` is ruled out.", None),
    ("`memory-leak` is likely.", "calls memory-leak likely but the report says unknown"),
    ("We do not know yet about `memory-leak`.", None),
    ("", "empty"),
    ("   \n", "empty"),
    ("x" * 5000, "longer than"),
])
def test_check_generated(text: str, problem: str | None) -> None:
    found = check_generated(text, REPORT, max_chars=3000)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_catalog_holds_every_playbook_hypothesis() -> None:
    ids = catalog_ids()
    assert {"limit-too-low", "gpu-fallen-off-bus", "insufficient-gpu", "conntrack-exhaustion"} <= ids
    assert "not-a-hypothesis" not in ids


def test_named_ids_ignores_unknown_backticked_words() -> None:
    assert named_ids("run `nvidia-smi` and `dmesg -T`", catalog_ids()) == set()
    assert named_ids("`shm-too-small` and shm-too-small-ish", catalog_ids()) == {"shm-too-small"}


def test_one_id_in_two_playbooks_accepts_either_status() -> None:
    statuses = {"disk-pressure": {"ruled-out", "likely"}}
    assert check_statuses("`disk-pressure` is likely.", statuses) is None
    assert check_statuses("`disk-pressure` is ruled out.", statuses) is None
    assert check_statuses("`disk-pressure` is confirmed.", statuses) is not None


def test_allowed_set_is_respected() -> None:
    assert check_names("`node-oom`", {"node-oom"}) is None
    assert check_names("`node-oom`", set()) is not None


@given(st.text(max_size=400))
def test_guard_never_raises(text: str) -> None:
    result = check_generated(text, REPORT, max_chars=3000)
    assert result is None or isinstance(result, str)
