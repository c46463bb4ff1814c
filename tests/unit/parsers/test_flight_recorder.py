"""Flight Recorder dumps from a real torch.distributed run (tests/fixtures/flight_recorder/make_dumps.py made
them with torch 2.13.0, gloo on CPU) give the same wave front as the logs; the loader refuses any class."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from collectors.parsers import flight_recorder, nccl_ranks

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "flight_recorder"


def dumps(scenario: str) -> list[flight_recorder.Dump]:
    return [flight_recorder.read(int(p.stem.split("_")[1]), p.read_bytes())
            for p in sorted((FIXTURES / scenario).glob("rank_*.pkl"))]


def test_the_straggler_is_the_rank_whose_dump_stops_short() -> None:
    front = nccl_ranks.wavefront(flight_recorder.table(dumps("straggler")))
    assert front is not None
    assert front.wait_seq == 7
    assert [r.rank for r in front.ranks(nccl_ranks.WAITING)] == [0, 1, 3]
    assert [(r.rank, r.enqueued, r.completed, r.state) for r in front.ranks(*nccl_ranks.SUSPECT_STATES)] == [
        (2, 6, 6, "never-enqueued")]
    assert front.op == "gloo:all_reduce"


def test_a_healthy_run_has_no_wave_front() -> None:
    assert nccl_ranks.wavefront(flight_recorder.table(dumps("healthy"))) is None


def test_entries_carry_op_sequence_sizes_and_state() -> None:
    rank0 = dumps("straggler")[0]
    last = rank0.entries[-1]
    assert (last.group, last.seq, last.op, last.sizes, last.retired) == ("0", 7, "gloo:all_reduce", [[256]], False)


class _Evil:
    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (print, ("pwned",))


@pytest.mark.parametrize("payload", [
    pickle.dumps(_Evil()),
    pickle.dumps({"entries": [], "x": Path("/etc")}),
    b"cos\nsystem\n(S'echo pwned'\ntR.",  # protocol 0: os.system via GLOBAL
])
def test_a_pickle_naming_any_class_is_refused_without_running_it(payload: bytes,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(flight_recorder.RefusedDump, match="refused"):
        flight_recorder.load(payload)
    assert "pwned" not in capsys.readouterr().out


@pytest.mark.parametrize("payload", [b"", b"not a pickle", pickle.dumps([1, 2]), pickle.dumps({"entries": 3})])
def test_other_bytes_are_refused_with_a_reason(payload: bytes) -> None:
    with pytest.raises(flight_recorder.RefusedDump):
        flight_recorder.load(payload)
