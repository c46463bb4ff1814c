"""Grading by meaning: each asserted clause of an answer against each expected point's claims and misconceptions,
compared as sentence embeddings (issue 26, point 2).

Embeddings place "X does not matter" next to "X matters", so they never decide polarity: the clause reader
(drills.claims) does. Only a clause that asserts something is compared: not an item of a list of terms, not a
question, not a fragment without a verb. Each clause and each reference sentence gets a polarity (does it hold a
negator or a dismissal outside a purpose or condition?); a clause meets a reference only at the same polarity, and a
clause close to a claim at the opposite polarity is its negation, which counts against the point. A point is
credited when a clause is at least its threshold close to one of its claims and is not nearer to one of its
misconceptions; a misconception is asserted when a clause is at least its threshold close to it and nearer to it
than to every claim of the question. A point with neither claims nor a current fitted threshold is not compared.
Meaning proposes, words confirm: embeddings say "about the same thing", so a claim is met only by a clause that
shares a content word with it or its point, and a misconception only by a clause carrying one of the words that
tell it apart from the question's claims (distinguishing), or, lacking such words, by its polarity alone.

Pure: the embedding function is passed in (drills.embedder has the model), and the thresholds are data
(drills/meaning_thresholds.yaml, fitted by scripts/calibrate_meaning.py on tuning-half questions only).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from collectors.yaml_safe import safe_load
from drills.claims import Sentence, live_cues, split_sentences, text_tokens
from drills.lexicon import lexicon
from drills.questions import ExpectedPoint

THRESHOLDS_PATH = Path(__file__).parent / "meaning_thresholds.yaml"
# Before any calibration: cosine similarities of multilingual-e5-small between a paraphrase and its reference sit
# around 0.88-0.93 and unrelated sentences of the same field around 0.80-0.85 (measured on the bank's points).
DEFAULT_CLAIM = 0.9
DEFAULT_MISCONCEPTION = 0.92

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Vectors = npt.NDArray[np.float32]
else:
    # numpy (a tenth of a second) loads when a grade first compares by meaning, not with every importer of the
    # grader (the Slack bot's start); at run time the type is only named, in the Meaning model's `embed` field.
    Vectors = Any
# (texts, whether they are the bank's references, worth keeping) -> one L2-normalised row per text, in order.
Embed = Callable[[Sequence[str], bool], Vectors]

MAX_SENTENCE_CLAUSES = 3
_PREDICATE_NEGATORS = frozenset({"not", "never", "no", "nor", "cannot"})


@dataclass(frozen=True)
class Unit:
    """A clause of the answer that asserts something, as the candidate wrote it (or a short sentence whole)."""

    sentence: int
    clause: int  # -1 for a whole sentence
    text: str
    negative: bool
    words: frozenset[str] = frozenset()
    # Negative by a negator alone, not counting dismissals: a misconception may be worded as a dismissal ("Xid
    # messages are just warnings"), and a clause that says the same is meeting it, not denying it.
    denies: bool = False  # its content words, stemmed and synonym-folded as the lexicon reads them


@dataclass(frozen=True)
class Threshold:
    claim: float
    misconception: float


# Cosines never reach it: the point is not compared by meaning.
OFF = Threshold(2.0, 2.0)


@dataclass(frozen=True)
class Thresholds:
    default: Threshold = Threshold(DEFAULT_CLAIM, DEFAULT_MISCONCEPTION)
    # point key (question id/point id) -> (hash of its references, threshold); a stale hash falls back to default.
    points: dict[str, tuple[str, Threshold]] = field(default_factory=dict)

    def of(self, key: str, point: ExpectedPoint) -> Threshold:
        """The point's fitted thresholds; the default for a point with claims but no current fit; OFF for a point
        with neither. Its `point` wording alone is a summary for the reader, not something a candidate writes:
        graded as if unfitted, the tuning half gained nothing by it (docs/interview.md)."""
        fitted = self.points.get(key)
        if fitted is not None and fitted[0] == reference_hash(point):
            return fitted[1]
        return self.default if point.claims else OFF


@dataclass(frozen=True)
class Credit:
    point: str
    evidence: str
    similarity: float


@dataclass(frozen=True)
class Mistake:
    point: str
    misconception: str  # its id
    evidence: str
    similarity: float


@dataclass(frozen=True)
class Findings:
    credits: dict[str, Credit]
    mistakes: tuple[Mistake, ...]
    denied: frozenset[str]  # points some clause negates more often than clauses assert them


def reference_hash(point: ExpectedPoint) -> str:
    """What a fitted threshold was fitted on: a changed claim or misconception makes it stale."""
    text = "\0".join([*point.references, "\1", *(m.claim for m in point.misconceptions)])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _negative(tokens: Sequence[str], dismissals: bool = True) -> bool:
    """The text holds a negator (or, with `dismissals`, a dismissal) that is not part of a goal or condition ("so
    that it does not"), nor itself negated ("do not ignore it", "it is not just a warning"), read as drills.claims
    reads a concept's clause."""
    lex = lexicon()
    cues = (*lex.negators, *(lex.dismissals if dismissals else ()), *((w,) for w in _PREDICATE_NEGATORS))
    return bool(live_cues(cues, tokens, 0, len(tokens), widen=dismissals))


@cache
def polarity(text: str, dismissals: bool = True) -> bool:
    """True when a reference sentence is negative, read as the answer's clauses are read."""
    return _negative(text_tokens(text), dismissals)


@cache
def content_words(text: str) -> frozenset[str]:
    """A reference sentence's content words: stemmed and synonym-folded by the lexicon; stopwords, fillers and
    function words dropped."""
    lex = lexicon()
    skip = lex.stopwords | lex.fillers | lex.function_words
    return frozenset(t for t in text_tokens(text) if t not in skip)


def said_by(points: Sequence[ExpectedPoint]) -> frozenset[str]:
    """The content words of the points' wording and claims: what right answers to the question say."""
    return frozenset().union(*(content_words(r) for p in points for r in (p.point, *p.references)))


def distinguishing(point: ExpectedPoint, others: Sequence[ExpectedPoint] = ()) -> tuple[frozenset[str], ...]:
    """Per misconception, the content words that tell it apart from what is right: its own words that neither the
    point's wording and claims nor those of the question's other points use ("45", "cpu", "never", "only"). A
    misconception that borrows another point's words ("restarts the container" for readiness, when liveness is
    what restarts it) needs a word of its own."""
    said = said_by([point, *others])
    return tuple(content_words(m.claim) - said for m in point.misconceptions)


def units(sentences: Sequence[Sentence]) -> list[Unit]:
    """The clauses worth comparing: they say something (a verb or connective), are not list items or questions."""
    lex = lexicon()
    rel = lex.relations
    out: list[Unit] = []
    for i, s in enumerate(sentences):
        if s.text.rstrip().endswith("?") or s.is_list:
            continue
        before = len(out)
        for c, text in enumerate(s.clauses):
            if c in s.listed:
                continue
            tokens = [t for k, t in enumerate(s.tokens) if s.clause[k] == c]
            words = [t for t in tokens if t not in lex.stopwords]
            if not any(t in rel for t in tokens) or len(words) < 2:
                continue  # a bare run of terms asserts nothing
            out.append(Unit(i, c, text, _negative(tokens), frozenset(words), _negative(tokens, False)))
        # A clause can lean on its neighbour ("when a pod asks for half a GPU, the scheduler splits the card"):
        # a sentence of two or three clauses, none a list item, is compared whole as well.
        if 2 <= len(s.clauses) <= MAX_SENTENCE_CLAUSES and not s.listed and len(out) > before:
            out.append(Unit(i, -1, s.text, _negative(s.tokens),
                            frozenset(t for t in s.tokens if t not in lex.stopwords), _negative(s.tokens, False)))
    return out


@dataclass(frozen=True)
class Scores:
    """One point against each unit of an answer: its nearest claim of the same polarity, its nearest claim of the
    other polarity (the unit negates it), its nearest misconception of the same polarity and that one's id."""

    claim: Vectors
    opposite: Vectors
    misconception: Vectors
    which: tuple[str, ...]
    near: Vectors | None = None  # its nearest claim of the same polarity, whatever words the unit uses


def _best(sims: Vectors, mask: Sequence[bool]) -> Vectors:
    import numpy as np

    rows = sims.shape[0]
    if not any(mask):
        return np.full(rows, -1.0, dtype=np.float32)
    return np.asarray(sims[:, [j for j, m in enumerate(mask) if m]].max(axis=1), dtype=np.float32)


def score(found: Sequence[Unit], points: Sequence[ExpectedPoint], embed: Embed) -> list[Scores]:
    """Similarities of every unit to every point's references (cosines of L2-normalised vectors)."""
    import numpy as np

    if not found:
        return [Scores(*(np.zeros(0, dtype=np.float32),) * 3, ()) for _ in points]
    refs = [r for p in points for r in (*p.references, *(m.claim for m in p.misconceptions))]
    clause_vecs = embed([u.text for u in found], False)
    ref_vecs = embed(refs, True) if refs else np.zeros((0, clause_vecs.shape[1]), dtype=np.float32)
    sims = np.asarray(clause_vecs @ ref_vecs.T, dtype=np.float32)
    out: list[Scores] = []
    at = 0
    for p in points:
        n_claims, n_mis = len(p.references), len(p.misconceptions)
        claims, wrong = sims[:, at:at + n_claims], sims[:, at + n_claims:at + n_claims + n_mis]
        at += n_claims + n_mis
        claim_neg = [polarity(r) for r in p.references]
        mis_neg = [polarity(m.claim) for m in p.misconceptions]
        mis_denies = [polarity(m.claim, False) for m in p.misconceptions]
        # Meaning proposes, words confirm: a claim is met only by a clause that shares a content word (or a
        # lexicon synonym, folded alike) with it or with the point's wording; a misconception only by a clause
        # that carries one of the words that tell it apart from the point's claims. Without such words a
        # misconception differs from the point by polarity alone, and the polarity gate below decides.
        own = content_words(p.point)
        claim_words = [content_words(r) | own for r in p.references]
        apart = distinguishing(p, points)
        best_claim = np.full(len(found), -1.0, dtype=np.float32)
        near_claim = np.full(len(found), -1.0, dtype=np.float32)
        opposite = np.full(len(found), -1.0, dtype=np.float32)
        best_mis = np.full(len(found), -1.0, dtype=np.float32)
        which: list[str] = []
        for k, u in enumerate(found):
            shares = [bool(w & u.words) for w in claim_words]
            best_claim[k] = _best(claims[k:k + 1], [n == u.negative and w for n, w in zip(claim_neg, shares,
                                                                                           strict=True)])[0]
            near_claim[k] = _best(claims[k:k + 1], [n == u.negative for n in claim_neg])[0]
            opposite[k] = _best(claims[k:k + 1], [n != u.negative and w for n, w in zip(claim_neg, shares,
                                                                                         strict=True)])[0]
            # A misconception worded as a dismissal ("Xid messages are just warnings") is met by a clause that
            # dismisses alike; a negated dismissal ("it is not just a warning") meets neither.
            same = [j for j in range(n_mis) if mis_denies[j] == u.denies and (mis_neg[j] == u.negative or not u.denies)
                    and (bool(apart[j] & u.words) or (not apart[j] and mis_neg[j] != all(claim_neg)))]
            j = max(same, key=lambda j: wrong[k, j], default=None)
            best_mis[k] = wrong[k, j] if j is not None else -1.0
            which.append(p.misconceptions[j].id if j is not None else "")
        out.append(Scores(best_claim, opposite, best_mis, tuple(which), near_claim))
    return out


def decide(found: Sequence[Unit], points: Sequence[ExpectedPoint], scores: Sequence[Scores],
           limits: Sequence[Threshold]) -> Findings:
    """A misconception is asserted by a unit at least its threshold close to it and nearer to it than to every
    claim of the question (a clause nearer to a right claim is taken as that claim); such a unit credits nothing.
    Any other unit credits the one point whose claim it clears by the widest margin (so one clause never earns two
    points). A point is denied when as many of its units negate a claim as assert one."""
    mistakes: list[Mistake] = []
    backing: dict[str, list[Credit]] = {}
    against: dict[str, int] = {}
    for k, u in enumerate(found):
        # The competition with the claims is by meaning alone: a clause nearer to a right claim is that claim.
        nearest_claim = max((float((s.near if s.near is not None else s.claim)[k]) for s in scores), default=-1.0)
        wrong = [(float(s.misconception[k]), p.id, s.which[k]) for p, s, t in zip(points, scores, limits, strict=True)
                 if s.misconception[k] >= t.misconception and s.misconception[k] > nearest_claim]
        if wrong:
            sim, pid, mid = max(wrong)
            mistakes.append(Mistake(pid, mid, u.text, sim))
            continue
        margins = [(float(s.claim[k] - t.claim), p.id, float(s.claim[k]))
                   for p, s, t in zip(points, scores, limits, strict=True)
                   if s.claim[k] >= t.claim and s.claim[k] > s.misconception[k]]
        if margins:
            _, pid, sim = max(margins)
            backing.setdefault(pid, []).append(Credit(pid, u.text, sim))
        for p, s, t in zip(points, scores, limits, strict=True):
            if s.opposite[k] >= t.claim and s.opposite[k] > s.claim[k]:
                against[p.id] = against.get(p.id, 0) + 1  # the clause says the opposite of a claim
    denied = frozenset(pid for pid, n in against.items() if n >= len(backing.get(pid, ())))
    credits = {pid: cs[0] for pid, cs in backing.items() if pid not in denied}
    nearest: dict[str, Mistake] = {}  # each misconception once, shown with the clause nearest to it
    for m in mistakes:
        if m.misconception not in nearest or m.similarity > nearest[m.misconception].similarity:
            nearest[m.misconception] = m
    return Findings(credits, tuple(nearest.values()), denied)


def compare(answer: str | Sequence[Sentence], points: Sequence[tuple[str, ExpectedPoint]], embed: Embed,
            thresholds: Thresholds) -> Findings:
    """Which points the answer's clauses assert by meaning, and which misconceptions. `points` are (key, point),
    the key naming the point in the thresholds (question id/point id)."""
    compared = [(p, limit) for key, p in points if (limit := thresholds.of(key, p)) != OFF]
    sentences = split_sentences(answer) if isinstance(answer, str) else answer
    found = units(sentences) if compared else []
    if not found:  # nothing to compare: no model call at all
        return Findings({}, (), frozenset())
    plain = [p for p, _ in compared]
    return decide(found, plain, score(found, plain, embed), [limit for _, limit in compared])


@cache
def load_thresholds(path: Path = THRESHOLDS_PATH) -> Thresholds:
    """The fitted thresholds; the built-in defaults when the file is missing or unreadable."""
    try:
        raw = safe_load(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Thresholds()
    if not isinstance(raw, dict):
        return Thresholds()
    d = raw.get("default") or {}
    default = Threshold(float(d.get("claim", DEFAULT_CLAIM)), float(d.get("misconception", DEFAULT_MISCONCEPTION)))
    points: dict[str, tuple[str, Threshold]] = {}
    for key, entry in (raw.get("points") or {}).items():
        if isinstance(entry, dict):
            points[str(key)] = (str(entry.get("hash", "")),
                                Threshold(float(entry.get("claim", default.claim)),
                                          float(entry.get("misconception", default.misconception))))
    return Thresholds(default, points)
