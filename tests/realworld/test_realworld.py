"""Every real-world case (tests/realworld/<symptom>/<case>/), and the corpus's accuracy as a whole."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest
import yaml

from bot.cli.evaluate import analyse_text
from drills.realworld import Case, CaseResult, case_dirs, load_case, run_case

ROOT = Path(__file__).resolve().parent
KNOWN = yaml.safe_load((ROOT / "known-failures.yaml").read_text(encoding="utf-8")) or {}
CASES = case_dirs(ROOT)


def _id(folder: Path) -> str:
    return f"{folder.parent.name}/{folder.name}"


@functools.cache
def _result(folder: Path) -> CaseResult:
    """A case analysed once per process: its own test and the corpus's accuracy read the same result (analysing
    the 1,500-odd cases twice was most of this folder's time). The tests only read it."""
    return run_case(folder, analyse_text)


@pytest.mark.parametrize("folder", CASES, ids=_id)
def test_case(folder: Path, request: pytest.FixtureRequest) -> None:
    if _id(folder) in KNOWN:
        request.applymarker(pytest.mark.xfail(reason=KNOWN[_id(folder)], strict=True))
    result = _result(folder)
    assert result.passed, "; ".join(result.failures)


def test_known_failures_name_real_cases() -> None:
    assert set(KNOWN) <= {_id(f) for f in CASES}


def test_corpus_size_breadth_and_accuracy() -> None:
    cases: list[Case] = [load_case(f)[0] for f in CASES]
    symptoms = {f.parent.name for f in CASES}
    assert len(cases) >= 150
    assert sum(c.negative for c in cases) >= 20
    assert symptoms >= {"oom-killed", "pending", "latency", "nccl-hang", "gpu-xid", "crash-loop", "image-pull",
                        "evicted"}
    # What `triagebot eval tests/realworld` computes (bot.cli.evaluate.evaluate: run_case over case_dirs), from the
    # results the per-case tests already computed; evaluate itself runs in tests/integration/test_production_export.
    results = [_result(folder) for folder in CASES]
    # A first-sight batch joins the corpus with its failures listed as it scored them ("first sight: ..."): the
    # floor holds over the cases that have been worked on, and that backlog may only shrink.
    backlog = {key for key, why in KNOWN.items() if str(why).startswith("first sight:")}
    # batches e-n's leftovers and o, p as scored (64), less 41 fixed; q and r as scored (25), less 23 fixed (round 5);
    # s and t as scored (19), less 19 fixed in round 6 (16 left with the older ones); u and v as scored (28),
    # less 23 fixed in round 7 (21 left); w and x as scored after round 7 (21), less 16 fixed in round 8;
    # less 2 fixed by the symptom-words reader (issue 24); z and y as scored after round 8 (12 + 10), less 4 the
    # symptom-words reader and 9 round 9 fixed; aa and bb as scored after round 9 (10 + 7), less 15 fixed in
    # round 10; cc and dd as scored after round 10 (5 + 13), less those fixed in round 11 (launchers' catalog,
    # the distributed-init reader, GPU utilisation and serving rates, ...: 28 left); ee and ff as scored after
    # round 11 (11 + 13), less 7 whose labels asked what only their thread shows (corrected, see each case.yaml)
    # and those round 12 fixed (22 left); gg and hh as scored after round 12 (11 + 13), less 3 BuildKit/registry
    # refusals, a 1.x missing ConfigMap, an fsck-refused iSCSI mount and a two-restart exit 3 fixed in round 13
    # (h13b); less a k9s events box whose rows are now weighed by age (session 15); jj and ii as scored
    # (19 + 23), less 37 fixed in round 14 (f1-f5); kk and ll as scored after round 14 (20 + 14),
    # less those round 15 fixed (f6-f9); mm and nn as scored after round 16 (13 + 15), less 22 fixed in round 17
    # (g1-g3); oo and pp as scored after round 17 (15 + 15), less 19 fixed in round 18 (h1-h3); qq and rr
    # as scored after round 18 (12 + 22), less 31 fixed in round 19 (i1-i4); ss and tt as
    # scored after round 19 (16 + 16), less 9 fixed in round 20 (j1, j2); only ever shrinks
    assert len(backlog) <= 87
    worked = [r for r in results if f"{r.symptom}/{r.id}" not in backlog]
    passed = sum(r.passed for r in worked)
    assert passed / len(worked) >= 0.95, [f"{r.symptom}/{r.id}" for r in worked if not r.passed]


def test_every_case_cites_a_public_source_and_a_conclusion() -> None:
    for folder in CASES:
        case, text = load_case(folder)
        assert case.source.startswith("https://"), folder
        assert case.concluded.strip() and text.strip(), folder
