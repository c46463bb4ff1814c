"""Flight Recorder dumps from a real torch.distributed run (tests/fixtures/flight_recorder/make_dumps.py made
them with torch 2.13.0, gloo on CPU) give the same wave front as the logs; the loader refuses any class."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import flight_recorder, nccl_ranks
from collectors.parsers.registry import parse_artifact
from collectors.parsers.sink import FactSink
from collectors.paste import artifacts_from_text
from drills.recorded.incident import IncidentError, load_incident
from playbooks.pipeline import analyse

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


# ---- the flight-recorder artifact kind -------------------------------------------------------------------------


def files(scenario: str, suffix: str) -> list[tuple[str, bytes]]:
    """The run's dumps under the names PyTorch gives them on timeout (nccl_trace_rank_<r>)."""
    return [(f"nccl_trace_rank_{p.stem.split('_')[1]}", p.read_bytes())
            for p in sorted((FIXTURES / scenario).glob(f"rank_*{suffix}"))]


def dump_artifact(text: str, name: str = "flight-recorder") -> Artifact:
    return Artifact(id=name, kind=ArtifactKind.FLIGHT_RECORDER, source="file", content=text)


def test_the_json_form_gives_the_same_dumps_as_the_pickle() -> None:
    for scenario in ("straggler", "healthy"):
        for (_, pkl), (_, js) in zip(files(scenario, ".pkl"), files(scenario, ".json"), strict=True):
            a, b = flight_recorder.read(0, pkl), flight_recorder.from_plain(0, json.loads(js))
            assert a.progress == b.progress
            assert [(e.seq, e.op, e.sizes, e.retired) for e in a.entries] == [
                (e.seq, e.op, e.sizes, e.retired) for e in b.entries]


@pytest.mark.parametrize("suffix", [".pkl", ".json"])
def test_a_folder_of_dumps_names_the_straggler_each_rank_cited_on_its_line(suffix: str) -> None:
    text, refused = flight_recorder.bundle(files("straggler", suffix))
    assert refused == [] and len(text.splitlines()) == 6  # `{`, one line per rank, `}`
    result = parse_artifact(dump_artifact(text))
    facts = {f.name: f for f in result.facts}
    assert (facts["nccl.wait_seq"].value, facts["nccl.suspect_ranks"].value) == (7, [2])
    assert sorted(v for f in result.facts if f.name == "nccl.waiting_ranks" for v in f.value) == [0, 1, 3]
    assert facts["nccl.suspect_ranks"].citation.start == 4  # rank 2's own line
    assert facts["nccl.suspect_ranks"].excerpt.startswith('"nccl_trace_rank_2": {')
    assert result.problems == []


def test_a_healthy_folder_blames_no_rank() -> None:
    text, _ = flight_recorder.bundle(files("healthy", ".pkl"))
    facts = {f.name: f.value for f in parse_artifact(dump_artifact(text)).facts}
    assert facts == {"nccl.last_completed_seq": 6}


def test_pasted_dumps_are_detected_as_flight_recorder() -> None:
    text, _ = flight_recorder.bundle(files("straggler", ".json"))
    assert [a.kind for a in artifacts_from_text(text, "paste")] == [ArtifactKind.FLIGHT_RECORDER]
    one = (FIXTURES / "straggler" / "rank_2.json").read_text(encoding="utf-8")
    assert [a.kind for a in artifacts_from_text(one, "paste")] == [ArtifactKind.FLIGHT_RECORDER]


def test_one_pasted_dump_without_its_file_name_says_the_rank_is_unknown() -> None:
    one = (FIXTURES / "straggler" / "rank_2.json").read_text(encoding="utf-8")
    result = parse_artifact(Artifact(id="paste", kind=ArtifactKind.FLIGHT_RECORDER, source="paste", content=one))
    assert result.facts == [] or all(f.parser.startswith("signal:") for f in result.facts)
    assert any("rank unknown" in p for p in result.problems)


def test_a_bundle_refuses_what_is_no_dump_and_runs_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    text, refused = flight_recorder.bundle([("nccl_trace_rank_0", pickle.dumps(_Evil())),
                                            ("nccl_trace_rank_1", b'{"x": 1}'),
                                            ("nccl_trace_rank_2", b"\xff\xfe")])
    assert text == ""
    assert [r.split(":")[0] for r in refused] == ["nccl_trace_rank_0", "nccl_trace_rank_1", "nccl_trace_rank_2"]
    assert "refused" in refused[0] and "pwned" not in capsys.readouterr().out


def test_dumps_dropped_into_a_recorded_incident_are_read_together(tmp_path: Path) -> None:
    folder = tmp_path / "fr-hang"
    (folder / "artifacts").mkdir(parents=True)
    (folder / "incident.yaml").write_text(
        "id: fr-hang\ntitle: composed from the Flight Recorder fixtures\npage: job hung\n"
        "target: {namespace: ml, service: job/train}\ncaptured_at: 2026-03-10T09:00:00Z\ndifficulty: easy\n",
        encoding="utf-8")
    for name, data in files("straggler", ".pkl"):
        (folder / "artifacts" / name).write_bytes(data)
    incident = load_incident(folder)
    assert [(a.id, a.kind) for a in incident.artifacts] == [("flight-recorder", ArtifactKind.FLIGHT_RECORDER)]
    report = analyse(incident.artifacts)
    assert report.facts["nccl.suspect_ranks"] == [2] and report.facts["nccl.wait_seq"] == 7


def test_a_dropped_pickle_that_names_a_class_fails_the_incident_with_a_reason(tmp_path: Path) -> None:
    folder = tmp_path / "evil"
    (folder / "artifacts").mkdir(parents=True)
    (folder / "incident.yaml").write_text(
        "id: evil\ntitle: t\npage: p\ntarget: {namespace: ml}\ncaptured_at: 2026-03-10T09:00:00Z\n"
        "difficulty: easy\n", encoding="utf-8")
    (folder / "artifacts" / "nccl_trace_rank_0").write_bytes(pickle.dumps(_Evil()))
    with pytest.raises(IncidentError, match="nccl_trace_rank_0: refused"):
        load_incident(folder)


def _plain(enqueued: int, completed: int, op: str = "nccl:all_reduce", sizes: list[list[int]] | None = None,
           ) -> dict[str, object]:
    """A minimal dump in the shape torch writes (pg_status, entries), for the cases no real run produced."""
    entry = {"collective_seq_id": completed + 1, "process_group": ["0", "default_pg"], "profiling_name": op,
             "input_sizes": sizes or [[1024]], "state": "scheduled", "retired": False}
    return {"pg_status": {"0": {"last_enqueued_collective": enqueued, "last_completed_collective": completed}},
            "entries": [entry] if enqueued > completed else []}


def _wave_facts(raw: dict[int, dict[str, object]]) -> dict[str, object]:
    table = flight_recorder.table([flight_recorder.from_plain(rank, dump) for rank, dump in raw.items()],
                                  lines={rank: rank + 1 for rank in raw})
    sink = FactSink(Artifact(id="fr", kind=ArtifactKind.FLIGHT_RECORDER, content="\n" * len(raw)))
    nccl_ranks.emit(sink, table)
    return {f.name: f.value for f in sink.done().facts}


def test_ranks_waiting_with_different_sizes_differ() -> None:
    facts = _wave_facts({0: _plain(8, 7, sizes=[[1024]]), 1: _plain(8, 7, sizes=[[2048]]),
                         2: _plain(8, 7, sizes=[[1024]])})
    assert facts["nccl.collectives_differ"] is True


def test_ranks_waiting_on_the_same_collective_do_not_differ() -> None:
    facts = _wave_facts({0: _plain(8, 7), 1: _plain(8, 7), 2: _plain(8, 7)})
    assert facts["nccl.collectives_differ"] is False


def test_a_rank_that_enqueued_nothing_is_the_straggler() -> None:
    # Sequence numbers start at 1; -1 is torch's "none yet" for both counters.
    facts = _wave_facts({0: _plain(1, -1), 1: _plain(1, -1), 2: _plain(-1, -1)})
    assert facts["nccl.suspect_ranks"] == [2]
