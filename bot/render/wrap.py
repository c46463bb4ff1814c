"""Wrapping that never splits what a reader copies.

A line breaks only at a space, and never inside a `code span` or a short quoted value; a token longer than the
width (a path, a URL, an id) goes out whole on its own line for the terminal to fold, so a copy of it is one
piece. rich's own wrapping folds such tokens mid-word, which is why the terminal renderer wraps here instead.
"""

from __future__ import annotations

from rich.text import Text

from collectors.lazy_regex import LazyPattern

# What must stay on one line: a `code span`, a quoted value of up to 60 characters, a playbook and its hypothesis
# joined by the report's separator (SEP, U+203A), or a run of non-spaces.
_TOKEN = LazyPattern(r"`[^`\n]+`|\"[^\"\n]{1,60}\"|'[^'\n]{1,60}'|“[^”\n]{1,60}”|[\w.-]+ \u203a [\w.-]+,?|\S+")


def breaks(text: str, width: int) -> list[int]:
    """The offsets where `text` starts a new line so that no line passes `width` unless one token does."""
    out: list[int] = []
    line_start = 0
    for m in _TOKEN.finditer(text):
        start, end = m.span()
        if end - line_start > width and start > line_start:
            out.append(start)
            line_start = start
    return out


def wrap_text(text: Text, width: int) -> list[Text]:
    """`text` cut into lines at spaces (styles kept), each line without the spaces it was broken at."""
    out: list[Text] = []
    for paragraph in text.split("\n", allow_blank=True) if "\n" in text.plain else [text]:
        offsets = breaks(paragraph.plain, max(width, 1))
        for piece in paragraph.divide(offsets) if offsets else [paragraph]:
            piece.rstrip()
            out.append(piece)
    return out


def wrap_plain(text: str, width: int) -> list[str]:
    return [line.plain for line in wrap_text(Text(text), width)]
