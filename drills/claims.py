"""Claim detection in an interview answer: where a concept is asserted, dismissed, or merely listed.

An answer is split into sentences, and each sentence into clauses at commas, semicolons and contrast words
("but", "because", "whereas"). A concept is a phrase from the question bank; it matches when all of its
content words occur close together in one sentence, in any order, after stemming and synonym folding, so
"packing jobs tightly onto nodes" meets the phrase "pack job tight". A match is then judged:

- dismissed: a negator earlier in the same clause ("I would not use X", "instead of X") or a dismissal after
  it ("X does not matter here"). A negator that follows a purpose or condition word ("so that GPUs do not sit
  idle", "if it does not recover") states a goal, not a dismissal, and is ignored.
- reasoned: the sentence ties the concept to something: it has a connective or a verb, and enough words of
  its own beyond the concepts it names. A bare list of terms, with or without "I'd use", earns nothing.

Pure and deterministic: the same text always gives the same claims.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cache

from drills.grading_text import MAX_ANSWER_CHARS, fold, stem
from drills.lexicon import Lexicon, Phrase, lexicon

# A negator this far before a concept (in the same clause) still governs it: "I do not think we need X".
NEGATION_REACH = 8
DISMISSAL_REACH = 10
# "without" and "no" deny only the next word or two: "appended without committing is discarded".
SHORT_REACH = 2
# Extra words a phrase match may straddle: "packing jobs tightly" against "pack tight" allows "jobs".
PHRASE_SLACK = 3
# Gap allowed inside a negator or dismissal: "does not really matter" against "not matter".
CUE_GAP = 2
BOUNDARY = "|"
# A phrase word that matches any number in the answer, for points such as "quantified the result".
NUMBER = "<number>"
ANY_NUMBER = "#"

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n\s*\n|\n\s*(?=[-*•]|\d+[.)])|\n")
_TOKEN = re.compile(r"[^\W_]+|[,;:()\[\]\u2014\u2013]|\s-\s")
_CLAUSE_WORDS = frozenset({"but", "however", "although", "though", "whereas", "yet", "because", "since",
                           "while", "which", "wherea"})
# Where a sentence splits into clauses, on its original text so each clause can be shown as written. A comma,
# semicolon or colon is also where the items of a list meet; a contrast word or a bracket is not.
_CLAUSE_SPLIT = re.compile(r"\s*([,;:])\s*|\s*[()\[\]\u2014\u2013]\s*|\s+-\s+|"
                           r"\s*\b(?=(?:but|however|although|though|whereas|yet|because|since|while|which)\b)",
                           re.IGNORECASE)
_LIST_JOINS = frozenset({",", ";", ":"})
# A list item is a short fragment; three or more of them joined by commas, semicolons or a label's colon are a
# list of terms, which names things without asserting anything about them.
LIST_ITEM_WORDS = 4
LIST_MIN_ITEMS = 3


@dataclass(frozen=True)
class Sentence:
    text: str
    tokens: tuple[str, ...]  # stemmed, synonym-folded words; BOUNDARY between clauses
    clause: tuple[int, ...]  # clause number of each token
    clauses: tuple[str, ...] = ()  # each clause's text as the candidate wrote it
    listed: frozenset[int] = frozenset()  # clauses that are items of a list of terms

    def in_list(self, i: int) -> bool:
        return self.clause[i] in self.listed

    @property
    def is_list(self) -> bool:
        """Most of the sentence is list items: it names terms and asserts nothing."""
        return bool(self.tokens) and sum(self.in_list(i) for i in range(len(self.tokens))) * 2 > len(self.tokens)

    def clause_span(self, i: int) -> tuple[int, int]:
        c = self.clause[i]
        start = i
        while start > 0 and self.clause[start - 1] == c:
            start -= 1
        end = i
        while end + 1 < len(self.tokens) and self.clause[end + 1] == c:
            end += 1
        return start, end


@dataclass(frozen=True)
class Match:
    sentence: int
    start: int
    end: int
    positions: tuple[int, ...]


def _fold_synonyms(tokens: list[str], lex: Lexicon) -> list[str]:
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for size in range(min(lex.longest_variant, len(tokens) - i), 0, -1):
            target = lex.synonyms.get(tuple(tokens[i:i + size]))
            if target is not None and BOUNDARY not in tokens[i:i + size]:
                out.extend(target)
                i += size
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


def _tokens(text: str, lex: Lexicon) -> list[str]:
    raw = [BOUNDARY if not t.strip().isalnum() and not t.strip()[:1].isalnum() else stem(t.strip())
           for t in _TOKEN.findall(fold(text))]
    raw = [BOUNDARY if t in _CLAUSE_WORDS else t for t in raw]
    return _fold_synonyms(raw, lex)


def _clauses(text: str) -> list[tuple[str, str]]:
    """(the separator before it, the clause's text) for each clause of a sentence, empty ones dropped."""
    parts = _CLAUSE_SPLIT.split(text)
    out: list[tuple[str, str]] = []
    joint = ""
    # re.split with one capture group gives text, separator, text, ...; an uncaptured split gives None.
    for k, part in enumerate(parts):
        if k % 2:
            joint = part or ""
        elif part and part.strip():
            out.append((joint, part.strip()))
            joint = ""
    return out


def _listed(joints: Sequence[str], sizes: Sequence[int]) -> frozenset[int]:
    """Clauses that belong to a run of LIST_MIN_ITEMS or more short fragments joined by list punctuation."""
    listed: set[int] = set()
    run: list[int] = []
    for k, (joint, size) in enumerate(zip(joints, sizes, strict=True)):
        short = 0 < size <= LIST_ITEM_WORDS
        if short and run and joint in _LIST_JOINS:
            run.append(k)
            continue
        if len(run) >= LIST_MIN_ITEMS:
            listed.update(run)
        run = [k] if short else []
    if len(run) >= LIST_MIN_ITEMS:
        listed.update(run)
    return frozenset(listed)


def split_sentences(answer: str) -> list[Sentence]:
    lex = lexicon()
    out: list[Sentence] = []
    for chunk in _SENTENCE_END.split(answer[:MAX_ANSWER_CHARS]):
        text = chunk.strip().lstrip("-*• ").strip()
        if not text:
            continue
        tokens: list[str] = []
        clause_of: list[int] = []
        texts: list[str] = []
        joints: list[str] = []
        sizes: list[int] = []
        for joint, part in _clauses(text):
            # A clause may still hold a boundary (a dash inside a word run): its tokens stay one clause.
            mine = [t for t in _tokens(part, lex) if t != BOUNDARY]
            if not mine:
                continue
            n = len(texts)
            texts.append(part)
            joints.append(joint)
            sizes.append(sum(1 for t in mine if t not in lex.stopwords) or len(mine))
            tokens.extend(mine)
            clause_of.extend([n] * len(mine))
        if tokens:
            out.append(Sentence(text=text, tokens=tuple(tokens), clause=tuple(clause_of), clauses=tuple(texts),
                                listed=_listed(joints, sizes)))
    return out


@cache
def compile_phrase(phrase: str) -> Phrase:
    """A bank phrase as the content words a match needs; a trailing `*` on a word matches any ending, and
    `<number>` matches any word with a digit in it ("<number> percent" meets "cut spend by 45%")."""
    lex = lexicon()
    parts: list[str] = []
    for raw in phrase.split():
        if raw == NUMBER:
            parts.append(ANY_NUMBER)
            continue
        prefix = raw.endswith("*")
        ws = _tokens(raw.rstrip("*"), lex)
        ws = [w for w in ws if w != BOUNDARY]
        if prefix and ws:
            ws[-1] = ws[-1] + "*"
        parts.extend(ws)
    folded = _fold_synonyms(parts, lex)
    content = tuple(w for w in folded if w.rstrip("*") not in lex.stopwords)
    return content or tuple(folded)


def _hit(word: str, token: str) -> bool:
    if word == ANY_NUMBER:
        return any(c.isdigit() for c in token)
    return token.startswith(word[:-1]) if word.endswith("*") else token == word


def find(phrase: Phrase, sentence: Sentence, index: int) -> list[Match]:
    """Every place in `sentence` where all of `phrase`'s words occur within a short window, any order."""
    if not phrase:
        return []
    tokens = sentence.tokens
    window = len(phrase) + PHRASE_SLACK
    found: list[Match] = []
    for start, token in enumerate(tokens):
        if not any(_hit(w, token) for w in phrase):
            continue
        chosen: list[int] = []
        for w in phrase:
            pos = next((j for j in range(start, min(start + window, len(tokens)))
                        if _hit(w, tokens[j]) and j not in chosen), None)
            if pos is None:
                break
            chosen.append(pos)
        else:
            found.append(Match(index, start, max(chosen), tuple(sorted(chosen))))
    return found


def _cue_at(cue: Phrase, tokens: Sequence[str], lo: int, hi: int) -> list[int]:
    """Positions in tokens[lo:hi] where `cue` starts, its words in order with at most CUE_GAP between them."""
    hits: list[int] = []
    for i in range(lo, hi):
        if tokens[i] != cue[0]:
            continue
        pos = i
        for w in cue[1:]:
            nxt = next((j for j in range(pos + 1, min(pos + 2 + CUE_GAP, hi)) if tokens[j] == w), None)
            if nxt is None:
                break
            pos = nxt
        else:
            hits.append(i)
    return hits


def dismissed(match: Match, sentence: Sentence) -> bool:
    """The concept at `match` is denied or waved away within its own clause."""
    lex = lexicon()
    tokens = sentence.tokens
    c_start, c_end = sentence.clause_span(match.start)
    lo = max(c_start, match.start - NEGATION_REACH)
    # A negator inside the span counts too ("the scheduler does not split"), unless the phrase itself holds it.
    for cue in lex.negators:
        for at in _cue_at(cue, tokens, lo, match.end + 1):
            if at in match.positions or (cue in lex.short_negators and match.start - at > SHORT_REACH):
                continue
            if not any(_cue_at(p, tokens, c_start, at) for p in lex.purpose_markers):
                return True
    hi = min(c_end + 1, match.end + 1 + DISMISSAL_REACH)
    return any(_cue_at(cue, tokens, match.end + 1, hi) for cue in lex.dismissals)


def elaboration(sentence: Sentence, covered: Iterable[int], own: frozenset[str]) -> int:
    """Words of the sentence that are neither concept words, the question's own words, stopwords, filler nor
    items of a list."""
    lex = lexicon()
    skip = set(covered)
    # A causal connective is reasoning even though it is a short function word: "4x traffic, so GPUs saturate".
    return sum(1 for i, t in enumerate(sentence.tokens)
               if i not in skip and not sentence.in_list(i)
               and (t in lex.reasons or (t not in own and t not in lex.stopwords and t not in lex.fillers)))


def has_relation(sentence: Sentence) -> bool:
    """A connective or a verb outside the sentence's list items: something is said, not only named."""
    rel = lexicon().relations
    return any(t in rel and not sentence.in_list(i) for i, t in enumerate(sentence.tokens))


def listed(match: Match, sentence: Sentence) -> bool:
    """The concept sits in a list of terms: named, not asserted."""
    return any(sentence.in_list(i) for i in match.positions)


def claim_text(match: Match, sentence: Sentence) -> str:
    """The clause that asserts the concept at `match`: its own clause, joined up to the nearest clause with a
    verb or connective when its own has none ("on one node" -> "I found a bad cable, on one node")."""
    rel = lexicon().relations
    first, last = sentence.clause[match.start], sentence.clause[match.end]

    def predicated(c: int) -> bool:
        return any(t in rel for i, t in enumerate(sentence.tokens) if sentence.clause[i] == c)

    if not any(predicated(c) for c in range(first, last + 1)):
        before = next((c for c in range(first - 1, -1, -1) if predicated(c)), None)
        after = next((c for c in range(last + 1, len(sentence.clauses)) if predicated(c)), None)
        if before is not None and (after is None or first - before <= after - last):
            first = before
        elif after is not None:
            last = after
    return ", ".join(sentence.clauses[first:last + 1]) if sentence.clauses else sentence.text


def question_words(text: str) -> frozenset[str]:
    return frozenset(t for t in _tokens(text, lexicon()) if t != BOUNDARY)
