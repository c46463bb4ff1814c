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

from collectors.catalogs.symptom_words import CompiledWords, symptom_words
from collectors.lazy_regex import LazyPattern
from collectors.models import STATED_PREFIX, Artifact, Citation, Fact, ParseResult
from collectors.parsers.text.needles import lines_holding
from collectors.parsers.text.stated import asks, inside, merged_spans, negated, sentences, unquoted
from collectors.unwrap import MAX_LINE

_MAX_LINES = 500  # candidate lines read, per hint and in all: a paste says its symptom in a few lines
_FIGURE_REACH = 60  # a figure is the subject's when it follows the subject within this many characters
PARSER = f"{STATED_PREFIX}words-"
_BREAK = LazyPattern(r"[,;:]")  # where a clause ends: a figure before it belongs to that clause
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
        line = unquoted(lines[index][:MAX_LINE])
        hinted = [e for e in entries if e.spec.symptom not in found and any(h in candidates[index] for h in e.hints)]
        for entry in hinted:
            if any(_says(entry, sentence, settled) for sentence in sentences(line)):
                found.add(entry.spec.symptom)
                facts.append(Fact(name="evidence.symptoms", value=[entry.spec.symptom],
                                  citation=Citation(artifact=artifact.id, start=index + 1, end=index + 1),
                                  excerpt=line.strip()[:200], parser=f"{PARSER}{entry.spec.symptom}"))
        if len(found) == len(entries):
            break
    return ParseResult(facts=facts)


def _says(entry: CompiledWords, sentence: str, settled: Any) -> bool:
    """The sentence names the entry's subject and, not negated, one of its problems."""
    subjects = [m.span() for m in entry.subject.finditer(sentence)]
    if not subjects or asks(sentence.rstrip(_EMPHASIS)):
        return False
    if (settled is not None and settled.search(sentence)) or (entry.unless is not None and
                                                              entry.unless.search(sentence)):
        return False  # the trouble is over, or the sentence is about another resource's figure
    if entry.about is not None and entry.about.search(sentence) is None:
        return False  # a bare noun ("the utilization") in a sentence that names nothing it belongs to
    for match in entry.problem.finditer(sentence):
        if not negated(sentence[:match.start()]):
            return True
    if entry.figures is None:
        return False
    for match in entry.figures.finditer(sentence):
        if _near(sentence, match.span(), subjects) and not negated(sentence[:match.start()]):
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

