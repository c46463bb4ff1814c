"""The background processes' CPU policy (bot/runner/cpu.py) where the kernel refuses SCHED_IDLE or SCHED_BATCH:
the nice values the bot used before remain, so a request still goes before a triage."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from bot.runner import cpu


def _refused(*_args: object) -> None:
    raise OSError(22, "Invalid argument")


def _recorder(niced: list[int]) -> object:
    def nice(n: int) -> int:
        niced.append(n)
        return n
    return nice


@pytest.mark.parametrize(("policy", "said", "nice"), [
    pytest.param(cpu.background, "nice 10", 10, id="without-sched-idle-a-worker-drops-by-nice-10"),
    pytest.param(cpu.behind_requests, "nice 5", 5, id="without-sched-batch-the-ingester-drops-by-nice-5"),
])
def test_a_refused_policy_falls_back_to_nice(monkeypatch: pytest.MonkeyPatch, policy: Callable[[], str], said: str,
                                             nice: int) -> None:
    niced: list[int] = []
    monkeypatch.setattr(os, "sched_setscheduler", _refused)
    monkeypatch.setattr(os, "nice", _recorder(niced))
    assert policy() == said
    assert niced == [nice]


def test_with_both_policies_the_calls_name_them(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[int, int]] = []
    monkeypatch.setattr(os, "sched_setscheduler", lambda pid, policy, _param: calls.append((pid, policy)))
    monkeypatch.setattr(os, "nice", lambda n: n)
    assert cpu.background() == "SCHED_IDLE"
    assert cpu.behind_requests() == "SCHED_BATCH, nice 5"
    assert calls == [(0, os.SCHED_IDLE), (0, os.SCHED_BATCH)]
