"""Claim detection in an interview answer: where a concept is asserted, dismissed, or merely listed.

An answer is split into sentences, and each sentence into clauses at commas, semicolons and contrast words
("but", "because", "whereas"). A concept is a phrase from the question bank; it matches when all of its
content words occur close together in one sentence, in any order, after stemming and synonym folding, so
"packing jobs tightly onto nodes" meets the phrase "pack job tight". A match is then judged:

- dismissed: a negator earlier in the same clause ("I would not use X", "instead of X") or a dismissal after
  it ("X does not matter here"). A negator that follows a purpose or condition word ("so that GPUs do not sit
  idle", "if it does not recover") states a goal, not a dismissal, and is ignored; a plain "not" before a
  dismissal cancels it ("do not ignore X", "X is not overkill", "X is not just a warning" assert X).
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
# A negator this far after a concept, in its clause, denies the predicate the concept is the subject of.
PREDICATE_REACH = 4
_PREDICATE_NEGATORS = frozenset({"not", "never", "no"})
# Where the concept's own predicate ends: a coordinated or subordinate clause starts ("X, so two people cannot
# apply at once", "a server that cannot feed readers" keeps the concept asserted).
_SUBORDINATORS = frozenset({"so", "that", "to", "when", "if", "who", "where", "unless", "until", "after", "before",
                            "once"})
_COORDINATORS = _SUBORDINATORS | {"and", "or", "then"}
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
    spans: tuple[tuple[int, int], ...] = ()  # where each clause is in `text`

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


def _clauses(text: str) -> list[tuple[str, int, int]]:
    """(the separator before it, its start, its end in `text`) for each clause of a sentence, empty ones
    dropped."""
    out: list[tuple[str, int, int]] = []
    joint = ""
    pos = 0
    for sep in [*_CLAUSE_SPLIT.finditer(text), None]:
        end = sep.start() if sep is not None else len(text)
        if text[pos:end].strip():
            out.append((joint, pos, end))
            joint = ""
        if sep is None:
            break
        # A separator found inside an earlier clause's trailing space is part of the same gap.
        joint = sep.group(1) or joint
        pos = max(sep.end(), pos)
    return out


# Words that give a fragment the shape of a clause (a subject pronoun, an auxiliary, an article, a preposition):
# "the job hangs" is a clause, "restart policy" or "acknowledge page" is a noun phrase that happens to hold a verb.
_CLAUSE_SHAPE = frozenset({"i", "we", "you", "they", "it", "he", "she", "is", "are", "was", "were", "be", "been",
                           "has", "have", "had", "do", "doe", "did", "can", "could", "would", "should", "will",
                           "may", "might", "must", "the", "a", "an", "thi", "this", "that", "our", "their", "my",
                           "from", "through", "via", "into", "with"})


def _head(tokens: Sequence[str], size: int) -> bool:
    """The fragment is a clause that says something about a list: it has a clause's shape (a subject pronoun, an
    auxiliary, an article or a preposition) and either a verb that is not one that only introduces a list ("I'd
    use", "consider", "check") or more words than one list item."""
    lex = lexicon()
    if not any(t in _CLAUSE_SHAPE for t in tokens):
        return False
    return size > LIST_ITEM_WORDS or any(t in lex.verbs and t not in lex.fillers and t not in _CLAUSE_SHAPE
                                         for t in tokens)


def _listed(joints: Sequence[str], sizes: Sequence[int], heads: Sequence[bool]) -> frozenset[int]:
    """Clauses that are items of a bare list: a run of LIST_MIN_ITEMS or more short fragments joined by list
    punctuation, with no clause saying something about them. A run that follows a clause with a verb ("isolation
    comes from RBAC, network policies and service accounts"), or that holds such a clause, says something about
    its items; a run that only follows a label ("Key terms:") is bare."""
    listed: set[int] = set()

    def close(run: list[int]) -> None:
        if len(run) < LIST_MIN_ITEMS:
            return
        # Any clause before the run in the same sentence may carry it: "changes are in place: scaling pools,
        # adding a pool (for example a new type), changing replicas or images, expanding volumes".
        headed = any(heads[k] for k in range(run[-1] + 1))
        if not headed:
            listed.update(run)

    run: list[int] = []
    for k, (joint, size) in enumerate(zip(joints, sizes, strict=True)):
        short = 0 < size <= LIST_ITEM_WORDS
        if short and run and joint in _LIST_JOINS:
            run.append(k)
            continue
        close(run)
        run = [k] if short else []
    close(run)
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
        heads: list[bool] = []
        spans: list[tuple[int, int]] = []
        for joint, begin, end in _clauses(text):
            part = text[begin:end]
            # A clause may still hold a boundary (a dash inside a word run): its tokens stay one clause.
            mine = [t for t in _tokens(part, lex) if t != BOUNDARY]
            if not mine:
                continue
            n = len(texts)
            texts.append(part.strip())
            spans.append((begin, end))
            joints.append(joint)
            sizes.append(sum(1 for t in mine if t not in lex.stopwords) or len(mine))
            heads.append(_head(mine, sizes[-1]))
            tokens.extend(mine)
            clause_of.extend([n] * len(mine))
        if tokens:
            out.append(Sentence(text=text, tokens=tuple(tokens), clause=tuple(clause_of), clauses=tuple(texts),
                                spans=tuple(spans), listed=_listed(joints, sizes, heads)))
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


def cue_at(cue: Phrase, tokens: Sequence[str], lo: int, hi: int, gap: int = CUE_GAP) -> list[int]:
    """Positions in tokens[lo:hi] where `cue` starts, its words in order with at most `gap` between them."""
    hits: list[int] = []
    for i in range(lo, hi):
        if tokens[i] != cue[0]:
            continue
        pos = i
        for w in cue[1:]:
            nxt = next((j for j in range(pos + 1, min(pos + 2 + gap, hi)) if tokens[j] == w), None)
            if nxt is None:
                break
            pos = nxt
        else:
            hits.append(i)
    return hits


def dismissed(match: Match, sentence: Sentence, dismissals: bool = True) -> bool:
    """The concept at `match` is denied or waved away within its own clause, or is the subject of a denied
    predicate; either way this clause does not assert it. Without `dismissals`, only a negator denies it (for a
    misconception that is a dismissal itself: "Xid messages are harmless and can be ignored")."""
    return denied(match, sentence, dismissals) or negated(match, sentence)


def denied(match: Match, sentence: Sentence, dismissals: bool = True) -> bool:
    """The concept itself is denied or dismissed: "I would not use X", "no need for X", "X does not matter"."""
    lex = lexicon()
    tokens = sentence.tokens
    c_start, c_end = sentence.clause_span(match.start)
    lo = max(c_start, match.start - NEGATION_REACH)
    # A negator inside the span counts too ("the scheduler does not split"), unless the phrase itself holds it.
    for cue, at in live_cues(lex.negators, tokens, lo, match.end + 1, c_start):
        if at in match.positions or (cue in lex.short_negators and match.start - at > SHORT_REACH):
            continue
        return True
    hi = min(c_end + 1, match.end + 1 + DISMISSAL_REACH)
    # "Taints and affinity do not matter" dismisses both; "locking, so two people cannot apply at once" is a
    # consequence, not a dismissal.
    hi = next((j for j in range(match.end + 1, hi) if tokens[j] in _SUBORDINATORS), hi)
    return dismissals and bool(live_cues(lex.dismissals, tokens, match.end + 1, hi, c_start))


def live_cues(cues: Iterable[Phrase], tokens: Sequence[str], lo: int, hi: int, start: int = 0,
              widen: bool = True) -> list[tuple[Phrase, int]]:
    """(cue, position) of each negator or dismissal in tokens[lo:hi] that still negates: not part of a goal or
    condition begun at or after `start` ("so that GPUs do not sit idle"), and not itself negated. A plain
    not/never/no just before another negating cue cancels it and is cancelled by it: "do not ignore X", "never
    skip X", "X is not overkill" assert X, and so does a not that widens ("X is not just a warning") unless
    `widen` is off (then it still denies the dismissal it widens, for comparing with misconceptions)."""
    lex = lexicon()
    plain = [at for at in range(max(start, lo - CUE_GAP - 1), hi) if tokens[at] in _PREDICATE_NEGATORS]
    cancelled = {at for at in plain if widen and at + 1 < len(tokens) and tokens[at + 1] in lex.widening}
    out: list[tuple[Phrase, int]] = []
    for cue in cues:
        for at in cue_at(cue, tokens, lo, hi, 0 if cue in lex.tight else CUE_GAP):
            if any(cue_at(p, tokens, start, at) for p in lex.purpose_markers):
                continue
            if cue[0] not in _PREDICATE_NEGATORS and cue[0] != "nor":
                before = [b for b in plain if at - CUE_GAP - 1 <= b < at]
                if before:
                    cancelled.update(before)
                    continue
            out.append((cue, at))
    return [(cue, at) for cue, at in out if at not in cancelled]


def negated(match: Match, sentence: Sentence) -> bool:
    """The concept is the subject of a denied predicate: "preemption should never be used", "MTU problems
    cannot cause timeouts". Such a clause does not assert the point, but it may be a true negative statement
    ("a small batch cannot keep the GPU busy"), so it does not count against the point elsewhere.
    Only a plain "not"/"never"/"no" negates the predicate; "rather than X" after the concept negates X, a
    coordinated predicate ("keeps X and never runs on spot") is a claim of its own, and a goal or condition
    before the negator ("X so pods do not wait") is no denial."""
    lex = lexicon()
    tokens = sentence.tokens
    _, c_end = sentence.clause_span(match.start)
    near = min(c_end + 1, match.end + 1 + PREDICATE_REACH)
    near = next((j for j in range(match.end + 1, near) if tokens[j] in _COORDINATORS), near)
    # A plain negator that negates a dismissal asserts: "MIG is not overkill", "it is not just a warning".
    plain = tuple((w,) for w in _PREDICATE_NEGATORS)
    live = live_cues((*plain, *lex.dismissals), tokens, match.end + 1, c_end + 1, match.end + 1)
    return any(cue in plain and at < near for cue, at in live)


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
    if not sentence.spans:
        return sentence.text
    return sentence.text[sentence.spans[first][0]:sentence.spans[last][1]].strip()


def dismissive(phrase: str) -> bool:
    """The phrase waves something away itself ("harmless", "just warning"): a misconception worded so is met by
    a clause that dismisses, not refuted by it."""
    tokens = text_tokens(phrase)
    return bool(live_cues(lexicon().dismissals, tokens, 0, len(tokens)))


def text_tokens(text: str) -> list[str]:
    """A text's stemmed, synonym-folded words, clause boundaries dropped (as a bank sentence is read)."""
    return [t for t in _tokens(text, lexicon()) if t != BOUNDARY]


def question_words(text: str) -> frozenset[str]:
    return frozenset(t for t in _tokens(text, lexicon()) if t != BOUNDARY)
