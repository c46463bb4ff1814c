"""Choosing an incident: by id, at random within a difficulty and a tag, and parsing `/drill start` words."""

from __future__ import annotations

import random

import pytest

from drills.errors import DrillError
from drills.recorded.incident import IncidentMeta
from drills.recorded.picker import all_tags, list_incidents, parse_start, pick


@pytest.fixture(scope="module")
def metas() -> list[IncidentMeta]:
    return list_incidents()


def test_lists_every_bundled_incident(metas: list[IncidentMeta]) -> None:
    assert len(metas) >= 25 and all(m.ground_truth is not None for m in metas)


def test_by_id(metas: list[IncidentMeta]) -> None:
    assert pick(metas, "oom-trainer-limit").id == "oom-trainer-limit"
    with pytest.raises(DrillError, match="no recorded incident 'nope'"):
        pick(metas, "nope")
    with pytest.raises(DrillError, match="is easy, not hard"):
        pick(metas, "oom-trainer-limit", "hard")
    with pytest.raises(DrillError, match="not tagged"):
        pick(metas, "oom-trainer-limit", tag="dns")


def test_random_respects_filters_and_is_repeatable(metas: list[IncidentMeta]) -> None:
    for _ in range(20):
        got = pick(metas, "random", "hard", "xid")
        assert got.difficulty == "hard" and "xid" in got.tags
    first = [pick(metas, None, rng=random.Random(7)).id for _ in range(3)]
    assert first == [pick(metas, None, rng=random.Random(7)).id for _ in range(3)]
    with pytest.raises(DrillError, match="no recorded incident matches hard tag 'nope'"):
        pick(metas, "random", "hard", "nope")
    with pytest.raises(DrillError, match="unknown difficulty"):
        pick(metas, None, "extreme")


def test_random_prefers_incidents_not_done_yet(metas: list[IncidentMeta]) -> None:
    easy = [m.id for m in metas if m.difficulty == "easy"]
    done = easy[:-1]
    for seed in range(10):
        assert pick(metas, None, "easy", rng=random.Random(seed), avoid=done).id == easy[-1]
    assert pick(metas, None, "easy", avoid=easy).id in easy  # all done: any of them again


def test_incidents_without_ground_truth_are_skipped(metas: list[IncidentMeta]) -> None:
    fresh = metas[0].model_copy(update={"ground_truth": None})
    with pytest.raises(DrillError, match="no ground_truth"):
        pick([fresh], fresh.id)
    with pytest.raises(DrillError, match="no recorded incident matches"):
        pick([fresh])


def test_slash_command_words(metas: list[IncidentMeta]) -> None:
    assert parse_start([], metas) == ("random", None, None)
    assert parse_start(["oom-trainer-limit"], metas) == ("oom-trainer-limit", None, None)
    assert parse_start(["hard", "NCCL-hang"], metas) == ("random", "hard", "nccl-hang")
    assert parse_start(["random", "easy"], metas) == ("random", "easy", None)
    with pytest.raises(DrillError, match="expected"):
        parse_start(["gpu", "xid"], metas)
    assert "xid" in all_tags(metas)
