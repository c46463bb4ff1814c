"""Symptoms said in words: the reader of last resort for lines no catalog claims.

A line gives a symptom when one sentence of it names what the symptom is about (a subject: a ClusterIP, a p99, a
GPU's utilisation, an NCCL collective) and what is wrong with it (a problem: refused, slow, idle, hangs), both from
one entry of collectors/catalogs/symptom_words.yaml; the problem must not be negated, hedged or asked about (the
stated reader's rules), and the sentence must not say the trouble is over. It reads program lines as well as prose
("... dial unix /run/containerd/containerd.sock: connect: no such file or directory"), but only lines no other
reader read. The symptom is weak: its parser is `stated:words-<symptom>`, so a hypothesis resting on it is likely at
most and it rules nothing out.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from collectors.catalogs.symptom_words import CompiledWords, Language, Words, symptom_words
from collectors.lazy_regex import LazyPattern
from collectors.models import STATED_PREFIX, Artifact, Citation, Fact, ParseResult
from collectors.parsers.text import cjk
from collectors.parsers.text.needles import lines_holding
from collectors.parsers.text.stated import asks, inside, merged_spans, negated, sentences, unquoted
from collectors.unwrap import MAX_LINE

_MAX_LINES = 500  # candidate lines read, per hint and in all: a paste says its symptom in a few lines
_FIGURE_REACH = 60  # a figure is the subject's when it follows the subject within this many characters
PARSER = f"{STATED_PREFIX}words-"
_BREAK = LazyPattern(r"[,;:、]")  # where a clause ends: a figure before it belongs to that clause
_CJK_REACH = 30  # in a CJK clause, a problem is the subject's when it follows the subject within this many characters
_EMPHASIS = " \t*_~`'\")"  # markdown around a question ("**Why does ...?**") still leaves it a question

__all__ = ["PARSER", "read_words"]


def read_words(artifact: Artifact, read: Iterable[tuple[int, int]] = ()) -> ParseResult:
    """`evidence.symptoms` from the lines of the artifact outside `read` (1-based spans other readers read)."""
    entries, settled = symptom_words()
    text = artifact.content
    owners: dict[str, list[CompiledWords]] = {}
    for entry in entries:
        for hint in entry.hints:
            owners.setdefault(hint, []).append(entry)
    candidates = lines_holding(text, owners, per_needle=_MAX_LINES)
    if not candidates:
        return ParseResult()
    claimed = merged_spans(read)
    lines = text.split("\n")
    facts: list[Fact] = []
    found: set[str] = set()
    examined = 0
    for index in sorted(candidates):
        if inside(claimed, index + 1) or index >= len(lines):
            continue
        examined += 1
        if examined > _MAX_LINES:
            break  # a log that names a subject on every line says its symptom early or not in words
        line = cjk.half_width(unquoted(lines[index][:MAX_LINE]))
        said = [part for sentence in sentences(line) for part in cjk.split(sentence)]
        hinted = [e for e in entries if e.spec.symptom not in found and any(h in candidates[index] for h in e.hints)]
        for entry in hinted:
            if entry.spec.symptom in found:
                continue  # two entries of one symptom (a GPU's utilisation by name and by its bare noun)
            if any(_says(entry, sentence, settled) for sentence in said):
                found.add(entry.spec.symptom)
                facts.append(Fact(name="evidence.symptoms", value=[entry.spec.symptom],
                                  citation=Citation(artifact=artifact.id, start=index + 1, end=index + 1),
                                  excerpt=line.strip()[:200], parser=f"{PARSER}{entry.spec.symptom}"))
        if len(found) == len(entries):
            break
    return ParseResult(facts=facts)


def _says(entry: CompiledWords, sentence: str, settled: Any) -> bool:
    """The sentence names the entry's subject and, not negated, one of its problems."""
    lang = cjk.language(sentence)
    words = entry.words(lang)
    subjects = [m.span() for m in words.subject.finditer(sentence)]
    if not subjects or (lang is None and asks(sentence.rstrip(_EMPHASIS))):
        return False
    if settled is not None and settled.search(sentence):
        return False  # the trouble is over
    if words.about is not None and words.about.search(sentence) is None:
        return False  # a bare noun ("the utilization") in a sentence that names nothing it belongs to
    if lang is not None:
        return _says_cjk(words, sentence, lang)
    if words.unless is not None and words.unless.search(sentence):
        return False  # the sentence is about another resource's figure
    for match in words.problem.finditer(sentence):
        if not negated(sentence[:match.start()]):
            return True
    if words.figures is None:
        return False
    for match in words.figures.finditer(sentence):
        if _near(sentence, match.span(), subjects) and not negated(sentence[:match.start()]):
            return True
    return False


def _says_cjk(words: Words, sentence: str, lang: Language) -> bool:
    """A sentence in Chinese, Japanese or Korean: a clause of it names the subject and, placed as the subject's and
    neither denied nor asked about in that language's way, a problem or a figure. Without spaces between words the
    sentence is read clause by clause: "高并发下延迟正常" names a latency and a "high", but not of each other."""
    parts = cjk.clauses(lang, sentence)
    for index, clause in enumerate(parts):
        subjects = [m.span() for m in words.subject.finditer(clause)]
        if not subjects or cjk.asked(lang, sentence, parts, index):
            continue
        if words.unless is not None and words.unless.search(clause):
            continue  # another resource's figure: its clause ("CPU占用率基本90%, 但是GPU占用率只有2%" reads the second)
        for match in words.problem.finditer(clause):
            if _placed(match.span(), subjects) and not _denied(lang, clause, match.span()):
                return True
        for match in words.figures.finditer(clause) if words.figures is not None else ():
            if _near(clause, match.span(), subjects) and not _denied(lang, clause, match.span()):
                return True
    return False


def _denied(lang: Language, clause: str, span: tuple[int, int]) -> bool:
    """Denied in the clause's language, or by an English word kept in it ("GPU 利用率 not low")."""
    return cjk.denied(lang, clause, *span) or negated(clause[:span[0]])


def _placed(problem: tuple[int, int], subjects: list[tuple[int, int]]) -> bool:
    """The problem is the subject's in a clause without spaces: it follows the subject closely ("延迟很高"), or stands
    right before it as its modifier ("高延迟", "높은 지연 시간"); a problem of one character ("延迟高", "利用率低") only
    touching it, as one character is too often part of another word ("高并发下延迟正常")."""
    start, end = problem
    for s_start, s_end in subjects:
        if start < s_end and s_start < end:
            return True  # one inside the other ("gpu is idle")
        if end - start == 1:
            if start == s_end or end == s_start:
                return True
            continue
        if s_end <= start <= s_end + _CJK_REACH or 0 <= s_start - end <= 1:
            return True
    return False


def _near(sentence: str, figure: tuple[int, int], subjects: list[tuple[int, int]]) -> bool:
    """The figure is the subject's: it follows the subject closely ("GPU-Util hovers at 23 %"), or comes just before
    it in the same clause ("logged `503 UH` errors for that upstream"), not in the clause before ("with 8 % dropout,
    GPU util is 95 %")."""
    for start, end in subjects:
        if start <= figure[0] <= end + _FIGURE_REACH:
            return True
        if figure[1] <= start and start - figure[1] <= _FIGURE_REACH and not _BREAK.search(sentence, figure[1], start):
            return True
    return False

