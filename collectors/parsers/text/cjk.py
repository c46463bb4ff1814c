# ruff: noqa: RUF002  (the full-width forms these languages type are named as they are written)
"""Sentences in Chinese, Japanese and Korean: which language a sentence is in, where its sentences and clauses end,
and whether it denies, hedges or asks about what it names (the marks: collectors/catalogs/cjk_marks.yaml).

These languages write no spaces between words, end sentences with 。！？ and no space after them, and type full-width
digits and punctuation (１０％，). Chinese puts its negation before the predicate (并不低), Japanese after its stem
(低くない), Korean after the stem or as a word before the verb (낮지 않다, 안 된다).
"""

from __future__ import annotations

from collectors.catalogs.symptom_words import CompiledMarks, Language, cjk_marks
from collectors.lazy_regex import LazyPattern

# The full-width forms of ASCII (U+FF01-FF5E) and the ideographic space, as their ASCII forms: one character for one,
# so that a span found in the converted text is the same span in the line.
_HALF = {code: code - 0xFEE0 for code in range(0xFF01, 0xFF5F)} | {0x3000: 0x20}
_HANGUL = LazyPattern(r"[\uac00-\ud7a3\u1100-\u11ff\u3130-\u318f]")
_KANA = LazyPattern(r"[\u3040-\u30ff]")
_CJK = LazyPattern(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3]")
# A sentence ends at 。 or at ! or ? (full-width ones converted) with or without a space after it.
_END = LazyPattern(r"(?<=[。!?])\s*")
# A ja/ko negation or hedge hangs on the stem it denies: "低くない", "発生していません", "낮지 않습니다".
_AFTER_REACH = 12

__all__ = ["asked", "clauses", "denied", "denied_in", "half_width", "language", "split"]


def half_width(text: str) -> str:
    return text.translate(_HALF)


def language(sentence: str) -> Language | None:
    """The sentence's language by its script: Hangul is Korean, kana Japanese, ideographs alone Chinese; none for a
    sentence with fewer than two such characters (an English one)."""
    if len(_CJK.findall(sentence)) < 2:
        return None
    if _HANGUL.search(sentence):
        return "ko"
    return "ja" if _KANA.search(sentence) else "zh"


def split(sentence: str) -> list[str]:
    """A sentence that holds CJK, cut at 。, ! and ? as those languages end sentences (no space after them)."""
    return [part for part in _END.split(sentence) if part.strip()] if language(sentence) else [sentence]


def clauses(lang: Language, sentence: str) -> list[str]:
    """The sentence's clauses: cut at commas, 、 and the conjunctions that turn it ("但是", "けど", "지만")."""
    marks = cjk_marks()[lang]
    out: list[str] = []
    start = 0
    for found in marks.breaks.finditer(sentence):
        out.append(sentence[start:found.start()])
        start = found.end()
    out.append(sentence[start:])
    return out


def _plain(marks: CompiledMarks, text: str) -> str:
    """The text with the words that hold a negation mark and deny nothing blanked out, each by as many characters."""
    for word in marks.spec.not_negation:
        text = text.replace(word, "_" * len(word))
    return text


def denied(lang: Language, clause: str, start: int, end: int) -> bool:
    """The words at clause[start:end] are denied or hedged in their clause: a mark before them (zh 不, 没, 可能; ko 안,
    못), or, in Japanese and Korean, after them (ja ない, ません, かもしれない; ko 않, 없, 수도 있다)."""
    marks = cjk_marks()[lang]
    if marks.before is not None and marks.before.search(_plain(marks, clause[:start])):
        return True
    if marks.after is None or (marks.spec.only is not None and marks.spec.only in clause):
        return False  # "10%しか出ない", "10%밖에 되지 않는다": only so much, no denial
    return marks.after.search(_plain(marks, clause[end:end + _AFTER_REACH])) is not None


def asked(lang: Language, sentence: str, parts: list[str], index: int) -> bool:
    """The clause parts[index] is asked about: the sentence is a question (a question mark, or a question's ending
    such as 吗, か, 까) and the clause is its last ("GPU利用率很低吗？"); a report followed by a question in a later
    clause ("GPU利用率很低，怎么办？") is still a report."""
    marks = cjk_marks()[lang]
    text = sentence.rstrip(" \t*_~`'\")。.")
    if not (text.endswith("?") or marks.question.search(text)):
        return False
    return index == len(parts) - 1 or (marks.asking is not None and marks.asking.search(parts[index]) is not None)


_SENTENCE_END = LazyPattern(r"[。!?]")


def denied_in(lang: Language, sentence: str, start: int, end: int) -> bool:
    """The words at sentence[start:end] are denied or hedged in their clause, for a reader that cuts sentences the
    English way (the stated reader): the clause is found here, at this language's breaks and sentence ends."""
    text = half_width(sentence)
    marks = cjk_marks()[lang]
    cuts = [m.span() for m in marks.breaks.finditer(text)] + [m.span() for m in _SENTENCE_END.finditer(text)]
    begin = max((b for a, b in cuts if b <= start), default=0)
    stop = min((a for a, b in cuts if a >= end), default=len(text))
    return denied(lang, text[begin:stop], start - begin, end - begin)
