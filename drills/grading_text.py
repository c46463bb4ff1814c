"""Text normalisation shared by the grader and its lexicon: words, a light stemmer, contractions.

Both sides of every comparison (the phrases in the question bank and the candidate's answer) go through these
same functions, so they only have to be consistent, not linguistically right.
"""

from __future__ import annotations

import re
import unicodedata

# Long enough for any spoken-length answer; bounds the work a pasted novel can cause.
MAX_ANSWER_CHARS = 20_000

_WORD = re.compile(r"[^\W_]+")
# Symbols that carry meaning in answers ("cut cost 45%") become words before punctuation is dropped.
_SYMBOLS = {"%": " percent ", "$": " dollar "}
# Endings whose final consonant doubles before -ing/-ed ("running", "stopped") but that are whole on their own.
_KEEP_DOUBLE = ("ll", "ss", "zz", "ff")
# "don't" -> "do not", so a negation is one word the grader can see; "won't"/"can't" are irregular.
_CONTRACTIONS = ((re.compile(r"\bwon['\u2019]t\b"), "will not"), (re.compile(r"\bcan['\u2019]t\b"), "can not"),
                 (re.compile(r"\bcannot\b"), "can not"), (re.compile(r"n['\u2019]t\b"), " not"))


def stem(word: str) -> str:
    """Fold plural, -ing, -ed and a trailing -e so inflections of one word compare equal.

    Deliberately tiny: short words are left alone to avoid collisions ("bus", "dns", "k8s").
    """
    w = word
    if len(w) > 4 and w.endswith("ies"):
        w = w[:-3] + "y"
    elif len(w) > 4 and w.endswith(("sses", "shes", "ches", "xes", "zes")):
        w = w[:-2]
    elif len(w) > 3 and w.endswith("s") and (w.endswith("pus") or not w.endswith(("ss", "us", "is"))):
        w = w[:-1]  # "-pus" is the plural of an acronym (gpus, cpus), not a word like "status"
    if w.endswith("ing") and len(w) - 3 >= 3:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and not w.endswith("eed") and len(w) - 2 >= 3:
        w = _undouble(w[:-2])
    if len(w) > 3 and w.endswith("e") and w != "note":  # "notes" must not become the negator "not"
        w = w[:-1]
    return w


def _undouble(w: str) -> str:
    if len(w) >= 4 and w[-1] == w[-2] and w[-1] not in "aeiou" and not w.endswith(_KEEP_DOUBLE):
        return w[:-1]
    return w


def fold(text: str) -> str:
    """NFKC, case-folded, bounded, with meaningful symbols spelled out and contractions expanded."""
    folded = unicodedata.normalize("NFKC", text[:MAX_ANSWER_CHARS]).casefold()
    for symbol, word in _SYMBOLS.items():
        folded = folded.replace(symbol, word)
    for pattern, replacement in _CONTRACTIONS:
        folded = pattern.sub(replacement, folded)
    return folded


def words(text: str) -> list[str]:
    """Lower-cased words of `text`; punctuation, underscores and symbols separate words."""
    return _WORD.findall(fold(text))


def normalise(text: str) -> set[str]:
    return {stem(w) for w in words(text)}
