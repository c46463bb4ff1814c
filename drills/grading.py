"""Deterministic grading of an interview answer: which expected points the answer asserts, and what it gets wrong.

A point is credited only when the answer claims it (drills.claims):
- one of the point's phrases (its `keywords` and `phrases` in the bank, matched over stems and synonyms)
  occurs in a sentence,
- that occurrence is not denied or dismissed ("I would not use X", "X does not matter", "instead of X"),
- and the sentence says something about it: a connective or verb and words of its own beyond the concepts it
  names, so a bare list of the right terms earns nothing.
Each point may list misconceptions; one asserted in the answer is a wrong claim: it cancels that point and
costs WRONG_CLAIM_COST. An answer that contradicts (dismisses, denies or gets wrong) at least as many points as it
asserts scores at most CONTRADICTION_CAP, with a note. The grade names the sentence that earned each point and the
sentence of each wrong claim. No model, no network, and no input makes it raise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from drills.claims import (
    NUMBER,
    Match,
    Sentence,
    claim_text,
    compile_phrase,
    denied,
    dismissed,
    dismissive,
    elaboration,
    find,
    has_relation,
    listed,
    question_words,
    split_sentences,
)
from drills.grading_text import MAX_ANSWER_CHARS, normalise, stem, words
from drills.meaning import Embed, Findings, Thresholds, compare
from drills.questions import ExpectedPoint, Misconception

__all__ = ["MAX_ANSWER_CHARS", "NUMBER", "Grade", "PointResult", "WrongClaim", "combine", "credit", "grade",
           "normalise", "stem", "verdict_for", "words"]

Verdict = Literal["strong", "partial", "weak", "empty"]

STRONG_AT = 80
PARTIAL_AT = 40
# A wrong claim costs about as much as a missed point on a four-point question: confidently wrong should not
# outscore honestly incomplete.
WRONG_CLAIM_COST = 20
LIST_NOTE = "a list of terms asserts nothing: terms named only in a list earned no point"
# An answer that contradicts (denies, dismisses or gets wrong) at least as many points as it asserts is a
# confidently wrong answer built from the right terms: whatever its other clauses earn, it scores no more than
# an answer that says little (the vague band). Measured on the tuning half: docs/interview.md.
CONTRADICTION_CAP = 20


class PointResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    point: str
    covered: bool
    matched: tuple[str, ...] = ()  # the phrase that matched, as its words
    # "rules" for this grader's claim detection; "meaning" when only the embedding comparison (drills.meaning)
    # found the claim; "keywords" only in grades stored by the older keyword grader; "model" when an optional
    # language model credited the point, and `quote` is then the answer's own words.
    by: Literal["rules", "meaning", "keywords", "model"] = "rules"
    quote: str = ""
    evidence: str = ""  # the sentence of the answer that earned the point
    dismissed: bool = False  # the answer named the concept only to deny or dismiss it

    @property
    def shown(self) -> str:
        """What the candidate said that earned the point."""
        if self.by == "model":
            return f"“{self.quote}” (credited by the model)"
        return f"“{self.evidence}”" if self.evidence else " ".join(self.matched)


class WrongClaim(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    point: str  # the expected point's id
    claim: str  # the misconception, as the bank words it
    evidence: str  # the sentence that made it


class Grade(BaseModel):
    model_config = ConfigDict(frozen=True)

    score: int
    verdict: Verdict
    points: tuple[PointResult, ...]
    word_count: int
    wrong_claims: tuple[WrongClaim, ...] = ()
    notes: tuple[str, ...] = ()  # why the grade is what it is, where the points alone do not say

    @property
    def covered(self) -> list[PointResult]:
        return [p for p in self.points if p.covered]

    @property
    def missed(self) -> list[PointResult]:
        return [p for p in self.points if not p.covered]

    def contradicted(self) -> set[str]:
        """Point ids the answer denied or got wrong: nothing may credit them afterwards."""
        return {p.id for p in self.points if p.dismissed} | {w.point for w in self.wrong_claims}

    def to_dict(self) -> dict[str, object]:
        """The `triagebot interview grade --format json` contract."""
        return {"score": self.score,
                "points": [{"id": p.id, "credited": p.covered,
                            "evidence": p.quote if p.by == "model" else p.evidence} for p in self.points],
                "wrong_claims": [{"id": w.id, "point": w.point, "claim": w.claim, "misconception": w.claim,
                                  "evidence": w.evidence} for w in self.wrong_claims],
                "notes": list(self.notes)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False)


def verdict_for(score: int, word_count: int) -> Verdict:
    if word_count == 0:
        return "empty"
    if score >= STRONG_AT:
        return "strong"
    return "partial" if score >= PARTIAL_AT else "weak"


def _grade(results: Sequence[PointResult], word_count: int, wrong: Sequence[WrongClaim] = (),
           notes: Sequence[str] = ()) -> Grade:
    total = len(results)
    base = round(100 * sum(r.covered for r in results) / total) if total else 0
    score = max(0, base - WRONG_CLAIM_COST * len(wrong))
    wrong_points = {w.point for w in wrong}
    against = [r.point for r in results if (r.dismissed or r.id in wrong_points) and not r.covered]
    if against and len(against) >= sum(r.covered for r in results) and score > CONTRADICTION_CAP:
        score = CONTRADICTION_CAP
        notes = [*notes, f"it says the opposite of what it names ({'; '.join(against)}), so it is capped at "
                         f"{CONTRADICTION_CAP}"]
    return Grade(score=score, verdict=verdict_for(score, word_count), points=tuple(results), word_count=word_count,
                 wrong_claims=tuple(wrong), notes=tuple(dict.fromkeys(notes)))


def _matches(phrases: Iterable[str], sentences: Sequence[Sentence]) -> list[tuple[str, Match]]:
    out: list[tuple[str, Match]] = []
    for phrase in phrases:
        compiled = compile_phrase(phrase)
        for i, sentence in enumerate(sentences):
            out.extend((phrase, m) for m in find(compiled, sentence, i))
    return out


def _asserted(misconception: Misconception, sentences: Sequence[Sentence]) -> str | None:
    """The clauses of the first sentence that assert every group of the misconception, none of them denied or
    merely listed."""
    # A misconception that is a dismissal itself ("Xid messages are harmless") is met by a clause that dismisses.
    waves = any(dismissive(phrase) for group in misconception.says for phrase in group)
    for sentence in sentences:
        ok = [[m for _, m in _matches(group, [sentence]) if not dismissed(m, sentence, not waves)
               and not listed(m, sentence)] for group in misconception.says]
        # All of it in one clause: "Volcano replaces the scheduler, whereas Kueue only admits jobs" does not say
        # that Kueue replaces the scheduler.
        for clause in sorted({sentence.clause[m.start] for m in ok[0]} if ok and ok[0] else set()):
            chosen = [next((m for m in group if sentence.clause[m.start] == clause), None) for group in ok]
            if all(m is not None for m in chosen):
                return _span_text([m for m in chosen if m is not None], sentence)
    return None


def _clause_of(match: Match, sentences: Sequence[Sentence]) -> tuple[int, int]:
    return match.sentence, sentences[match.sentence].clause[match.start]


def _span_text(matches: Sequence[Match], sentence: Sentence) -> str:
    first = min(sentence.clause[m.start] for m in matches)
    last = max(sentence.clause[m.end] for m in matches)
    lo = Match(0, min(m.start for m in matches if sentence.clause[m.start] == first),
               max(m.end for m in matches if sentence.clause[m.end] == last), ())
    return claim_text(lo, sentence)


class Meaning(BaseModel):
    """What grading by meaning needs: the embedding function, the fitted thresholds, and the question id that
    names the points in them."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    embed: Embed
    thresholds: Thresholds
    question: str


def grade(answer: str, points: Sequence[ExpectedPoint], asked: str = "", meaning: Meaning | None = None) -> Grade:
    """Which expected points `answer` asserts (with the clause that showed it), its wrong claims, a 0-100 score.

    `asked` is the question's text: its own words do not count as the candidate's reasoning. With `meaning`, the
    answer's asserted clauses are also compared with each point's claims and misconceptions (drills.meaning): a
    point is credited when the rules or the meaning find it asserted, and neither found it denied nor wrong."""
    text = answer if isinstance(answer, str) else ""
    word_count = len(words(text))
    sentences = split_sentences(text)
    own = question_words(asked) if asked else frozenset()
    raw = {p.id: _matches(p.concepts, sentences) for p in points}
    # A concept named as an item of a list of terms is not claimed: it neither earns nor is denied.
    found = {pid: [(ph, m) for ph, m in hits if not listed(m, sentences[m.sentence])] for pid, hits in raw.items()}
    notes = [LIST_NOTE] if any(len(raw[pid]) > len(found[pid]) for pid in raw) else []
    # Per sentence: which points it names (undismissed) and which words those names cover.
    named: dict[int, set[str]] = {}
    covered: dict[int, set[int]] = {}
    keywords = {p.id: set(p.keywords) for p in points}
    for pid, hits in found.items():
        for phrase, m in hits:
            covered.setdefault(m.sentence, set())
            # Only the bank's terms are "just naming"; a paraphrase phrase already says something.
            if phrase in keywords[pid]:
                covered[m.sentence].update(m.positions)
            if not dismissed(m, sentences[m.sentence]):
                named.setdefault(m.sentence, set()).add(pid)
    reasoned = {i for i, pids in named.items()
                if has_relation(sentences[i]) and elaboration(sentences[i], covered[i], own) >= len(pids)}
    wrong: list[WrongClaim] = []
    for p in points:
        for mc in p.misconceptions:
            where = _asserted(mc, sentences)
            if where is not None:
                wrong.append(WrongClaim(id=mc.id, point=p.id, claim=mc.claim, evidence=where))
    found_by_meaning = Findings({}, (), frozenset())
    if meaning is not None:
        found_by_meaning = compare(sentences, [(f"{meaning.question}/{p.id}", p) for p in points], meaning.embed,
                                   meaning.thresholds)
        claimed = {w.id for w in wrong}
        by_id = {m.id: m for p in points for m in p.misconceptions}
        wrong += [WrongClaim(id=m.misconception, point=m.point, claim=by_id[m.misconception].claim,
                             evidence=m.evidence) for m in found_by_meaning.mistakes if m.misconception not in claimed]
    wrong_points = {w.point for w in wrong}
    results: list[PointResult] = []
    for p in points:
        hits = found[p.id]
        good = [(phrase, m) for phrase, m in hits
                if m.sentence in reasoned and not dismissed(m, sentences[m.sentence])]
        # Polarity by sentence: a point the answer denies at least as often as it asserts is not asserted
        # ("no need for a pilot ... the pilot would only slow us down" earns nothing).
        backing = {_clause_of(m, sentences) for _, m in good}
        # A clause where one phrase of the point holds the negator itself ("not GPU memory") backs the point
        # even though a shorter phrase inside it looks denied.
        against = {_clause_of(m, sentences) for _, m in hits if denied(m, sentences[m.sentence])} - backing
        refuted = bool(against) and len(against) >= len(backing)
        by_meaning = found_by_meaning.credits.get(p.id)
        if backing and not refuted and p.id not in wrong_points:
            good = [(phrase, m) for phrase, m in good if _clause_of(m, sentences) in backing]
            phrase, m = min(good, key=lambda h: (h[1].sentence, h[1].start))
            results.append(PointResult(id=p.id, point=p.point, covered=True, matched=tuple(words(phrase)),
                                       evidence=claim_text(m, sentences[m.sentence])))
        elif by_meaning is not None and not refuted and p.id not in wrong_points | found_by_meaning.denied:
            results.append(PointResult(id=p.id, point=p.point, covered=True, by="meaning",
                                       evidence=by_meaning.evidence))
        else:
            results.append(PointResult(id=p.id, point=p.point, covered=False,
                                       dismissed=refuted or p.id in found_by_meaning.denied))
    return _grade(results, word_count, wrong, notes)


def combine(grades: Iterable[Grade]) -> Grade:
    """Union of several grades of the same question (main answer plus follow-ups): a point is covered if any
    answer covered it (the first that did supplies the evidence); wrong claims add up, once each."""
    merged: dict[str, PointResult] = {}
    wrong: dict[str, WrongClaim] = {}
    notes: list[str] = []
    word_count = 0
    for g in grades:
        word_count += g.word_count
        notes.extend(g.notes)
        for p in g.points:
            if p.id not in merged or (p.covered and not merged[p.id].covered):
                merged[p.id] = p
        for w in g.wrong_claims:
            wrong.setdefault(w.id, w)
    wrong_points = {w.point for w in wrong.values()}
    points = [p.model_copy(update={"covered": False}) if p.id in wrong_points else p for p in merged.values()]
    return _grade(points, word_count, list(wrong.values()), notes)


def credit(result: Grade, quotes: Mapping[str, str]) -> Grade:
    """`result` with the missed points in `quotes` (id -> the answer's words that cover it) credited by a model.

    The model only adds, and only where the grader found no contradiction: a point the answer dismissed or got
    wrong stays missed whatever the model says. Unknown ids are ignored."""
    blocked = result.contradicted()
    points = [p.model_copy(update={"covered": True, "by": "model", "quote": quotes[p.id]})
              if not p.covered and p.id in quotes and p.id not in blocked else p for p in result.points]
    return _grade(points, result.word_count, result.wrong_claims, result.notes)
