"""The passages /ask searches: playbook hypotheses and summaries, the Xid catalog, the question bank, the docs.

Every passage carries a stable id, the place a person finds it (`cite`, a repository path with an anchor) and
the seed citations the item itself carries. Building the corpus reads a few dozen small files and runs nothing:
playbook claims and checks are Jinja templates, shown here with their variables as `<name>` placeholders.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field

import bot
from bot.config import ConfigError
from collectors.catalogs.xid import XidEntry, load_catalog
from drills.questions import QUESTIONS_DIR, Question, load_bank
from playbooks.loader import PLAYBOOK_DIR, playbook_files
from playbooks.model import Hypothesis, Playbook

PassageKind = Literal["playbook", "xid", "question", "doc"]
KINDS: tuple[PassageKind, ...] = ("playbook", "xid", "question", "doc")

# Docs that are not prose worth answering from: measured numbers change with every run.
SKIPPED_DOCS = frozenset({"benchmarks.md"})
# A section longer than this is cut at paragraph boundaries, so one passage stays readable in a chat answer and
# fits the embedding model's window (about 512 tokens).
MAX_PASSAGE_CHARS = 1_500
XID_CITE = "collectors/catalogs/xid.yaml"

_JINJA_VALUE = re.compile(r"\{\{\s*([A-Za-z_][\w.]*)?[^{}]*\}\}")
_JINJA_OTHER = re.compile(r"\{%.*?%\}|\{#.*?#\}", re.S)
_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_SLUG_DROP = re.compile(r"[^\w\- ]")
_CEL_STRING = re.compile(r'"([^"\\]{2,60})"')


class Passage(BaseModel):
    """One searchable piece of knowledge and where it lives."""

    model_config = ConfigDict(frozen=True)

    id: str = Field(description="stable id, e.g. playbook:oom-killed#limit-too-low, xid:79, doc:slack.md#triage")
    kind: PassageKind
    title: str
    text: str
    cite: str = Field(description="where a person finds it: a repository path and an anchor")
    sources: list[str] = Field(default_factory=list, description="the seed citations the item carries")


class Corpus(BaseModel):
    """Every passage, plus what was left out and why (e.g. no docs folder in this installation)."""

    model_config = ConfigDict(frozen=True)

    passages: tuple[Passage, ...]
    docs_dir: str | None = None
    notes: tuple[str, ...] = ()

    def counts(self) -> dict[str, int]:
        found = Counter(p.kind for p in self.passages)
        return {kind: found.get(kind, 0) for kind in KINDS}


def neutral(template: str) -> str:
    """A Jinja template as readable text: `{{ pod|sh }}` becomes `<pod>`; tags and comments disappear."""
    text = _JINJA_VALUE.sub(lambda m: f"<{m.group(1) or 'value'}>", template)
    return " ".join(_JINJA_OTHER.sub(" ", text).split())


def bundled_docs_dir() -> Path | None:
    """The docs shipped beside the packages (the repository's docs/, copied into the image), if present."""
    folder = Path(bot.__file__).resolve().parents[1] / "docs"
    return folder if folder.is_dir() else None


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"


def _bullets(label: str, items: Iterable[str]) -> str:
    lines = [f"- {item}" for item in items if item.strip()]
    return f"{label}:\n" + "\n".join(lines) if lines else ""


def _join(*parts: str) -> str:
    return "\n".join(p for p in parts if p.strip())


def _evidence(h: Hypothesis) -> str:
    """The facts a hypothesis is decided on and the values its predicates look for (e.g. "OOMKilled")."""
    literals = dict.fromkeys(v for source in (h.confirm, h.likely) if source for v in _CEL_STRING.findall(source))
    text = f"Evidence read: {', '.join(h.cite)}." if h.cite else ""
    if literals:
        text += f" Values looked for: {', '.join(literals)}."
    return text.strip()


def _hypothesis_passage(book: Playbook, cite_file: str, h: Hypothesis, parent: Hypothesis | None) -> Passage:
    return Passage(
        id=f"playbook:{book.id}#{h.id}", kind="playbook",
        title=f"{book.title}: {h.id.replace('-', ' ')}",
        text=_join(neutral(h.claim),
                   f"(Explored when {parent.id} holds.)" if parent is not None else "",
                   f"Falsified by: {neutral(h.falsified_by)}",
                   _evidence(h),
                   _bullets("Next checks", (neutral(c) for c in h.next_checks)),
                   _bullets("Mitigations", (neutral(m) for m in h.mitigations))),
        cite=f"{cite_file}#{h.id}", sources=list(h.source))


def playbook_passages(directory: Path = PLAYBOOK_DIR) -> list[Passage]:
    """Each playbook's summary and every hypothesis in it, children included."""
    out: list[Passage] = []
    for path in playbook_files(directory):
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        book = Playbook.model_validate(raw)
        cite_file = f"playbooks/{path.name}"
        tree = book.walk()
        # Top-level causes with their claims, children by id only (each has its own passage): a big tree still
        # fits one passage.
        overview = _bullets("Hypotheses", (f"{h.id}: {_clip(neutral(h.claim), 110)}{_under(h)}"
                                           for h, parent in tree if parent is None))
        out.append(Passage(id=f"playbook:{book.id}", kind="playbook", title=f"{book.title} (playbook {book.id})",
                           text=_join(" ".join(book.summary.split()), overview), cite=f"{cite_file}#summary"))
        out.extend(_hypothesis_passage(book, cite_file, h, parent) for h, parent in tree)
    return out


def _under(h: Hypothesis) -> str:
    """Its refinements, theirs nested in turn ("slow-model-load (under it: load-saturation)")."""
    return f" (under it: {', '.join(c.id + _under(c) for c in h.children)})" if h.children else ""


def _xid_passage(entry: XidEntry) -> Passage:
    notes = []
    if entry.secondary:
        notes.append("Usually an after-effect of another error: look for the Xid logged before it.")
    if entry.uncertain:
        notes.append("The public description is thin or varies by GPU generation: verify before relying on it.")
    return Passage(
        id=f"xid:{entry.code}", kind="xid", title=f"Xid {entry.code}: {entry.name}",
        text=_join(f"NVIDIA Xid {entry.code} ({entry.name}), severity {entry.severity}.",
                   f"Meaning: {' '.join(entry.meaning.split())}",
                   f"Likely cause: {' '.join(entry.likely_cause.split())}",
                   f"Action: {' '.join(entry.action.split())}", *notes),
        cite=f"{XID_CITE}#{entry.code}", sources=list(entry.sources))


def xid_passages() -> list[Passage]:
    return [_xid_passage(entry) for _, entry in sorted(load_catalog().items())]


def _question_passage(q: Question, file: Path) -> Passage:
    return Passage(
        id=f"question:{q.id}", kind="question", title=f"Interview question ({q.topic}): {' '.join(q.question.split())}",
        text=_join(_bullets("A good answer covers", (p.point for p in q.expected_points)),
                   f"Model answer: {' '.join(q.model_answer.split())}",
                   f"Related playbook: {q.related_playbook}" if q.related_playbook else ""),
        cite=f"drills/questions/{file.name}#{q.id}", sources=list(q.source))


def question_passages(directory: Path = QUESTIONS_DIR) -> list[Passage]:
    bank = load_bank(directory)
    return [_question_passage(q, bank.files[qid]) for qid, q in sorted(bank.questions.items())]


def slug(heading: str) -> str:
    """The anchor a markdown renderer (GitHub's rules) gives a heading."""
    return _SLUG_DROP.sub("", heading.strip().lower()).replace(" ", "-")


def _sections(text: str) -> list[tuple[list[str], list[str]]]:
    """(heading path, body lines) per heading; `#` lines inside fenced code are not headings."""
    out: list[tuple[list[str], list[str]]] = []
    path: list[tuple[int, str]] = []
    body: list[str] = []
    fenced = False

    def flush() -> None:
        if path or any(line.strip() for line in body):
            out.append(([h for _, h in path], list(body)))

    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        heading = None if fenced else _HEADING.match(line)
        if heading is None:
            body.append(line)
            continue
        flush()
        level = len(heading.group(1))
        path = [(lv, h) for lv, h in path if lv < level] + [(level, heading.group(2).strip())]
        body = []
    flush()
    return out


def _pieces(lines: list[str], limit: int = MAX_PASSAGE_CHARS) -> list[str]:
    """Body text cut at blank lines outside code fences, each piece at most about `limit` characters."""
    blocks: list[str] = []
    current: list[str] = []
    fenced = False
    for line in lines:
        if _FENCE.match(line):
            fenced = not fenced
        if not line.strip() and not fenced:
            if current:
                blocks.append("\n".join(current))
            current = []
        else:
            current.append(line)
    if current:
        blocks.append("\n".join(current))
    # A single block longer than twice the limit (a long table or code sample) is cut at line boundaries.
    small: list[str] = []
    for block in blocks:
        if len(block) <= 2 * limit:
            small.append(block)
            continue
        chunk: list[str] = []
        for line in block.splitlines():
            if chunk and sum(len(c) + 1 for c in chunk) + len(line) > limit:
                small.append("\n".join(chunk))
                chunk = []
            chunk.append(line[: 2 * limit])
        if chunk:
            small.append("\n".join(chunk))
    pieces: list[str] = []
    for block in small:
        # Join small neighbours; a stub (a one-line lead-in) joins whatever follows it, within twice the limit.
        joined = len(pieces[-1]) + len(block) + 2 if pieces else 0
        if pieces and (joined <= limit or (len(pieces[-1]) < limit // 4 and joined <= 2 * limit)):
            pieces[-1] += "\n\n" + block
        else:
            pieces.append(block)
    return pieces


# A reference table's row starts with the term it defines: `| `cpu.throttled_ratio` | float | ...`.
_DEFINED = re.compile(r"^\|\s*`([^`|]{1,80})`\s*\|", re.M)


def _titled(title: str, piece: str) -> str:
    """A piece of a reference table is titled by the terms its rows define as well as by its section: a long table
    is cut into pieces, and a question about one term ("what does the fact X mean") must find the piece that
    defines it, however many rows the section holds."""
    terms = _DEFINED.findall(piece)
    return f"{title} ({', '.join(terms)})" if terms else title


def doc_passages(directory: Path) -> list[Passage]:
    """Every markdown file in `directory` (not its subfolders), one passage per section or part of one."""
    out: list[Passage] = []
    label = directory.name or "docs"
    for path in sorted(directory.glob("*.md")):
        if path.name in SKIPPED_DOCS or not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        used: Counter[str] = Counter()
        for headings, body in _sections(text):
            anchor = slug(headings[-1]) if headings else ""
            if anchor:
                n = used[anchor]
                used[anchor] += 1
                anchor = f"{anchor}-{n}" if n else anchor
            title = " > ".join(headings) if headings else path.name
            for part, piece in enumerate(_pieces(body), start=1):
                suffix = f"/{part}" if part > 1 else ""
                where = f"{path.name}#{anchor}" if anchor else path.name
                out.append(Passage(id=f"doc:{where}{suffix}", kind="doc", title=_titled(title, piece), text=piece,
                                   cite=f"{label}/{where}"))
    return out


def build_corpus(docs_dir: Path | None = None, *, include_docs: bool = True) -> Corpus:
    """All passages. `docs_dir` None means the bundled docs; a folder named explicitly must exist."""
    notes: list[str] = []
    passages = [*playbook_passages(), *xid_passages(), *question_passages()]
    folder: Path | None = None
    if include_docs:
        if docs_dir is not None:
            if not docs_dir.is_dir():
                raise ConfigError(f"setting docs_dir (TRIAGEBOT_DOCS_DIR): {docs_dir} is not a folder")
            folder = docs_dir
        else:
            folder = bundled_docs_dir()
            if folder is None:
                notes.append("no docs folder in this installation: docs are not searched")
    if folder is not None:
        docs = doc_passages(folder)
        if not docs:
            notes.append(f"{folder}: no markdown files")
        passages += docs
    ids = Counter(p.id for p in passages)
    dupes = sorted(i for i, n in ids.items() if n > 1)
    if dupes:  # ids are how tests and answers refer to passages: a clash is a bug worth stopping for
        raise ValueError(f"passage ids repeat: {', '.join(dupes[:5])}")
    return Corpus(passages=tuple(passages), docs_dir=str(folder) if folder else None, notes=tuple(notes))


class Hit(BaseModel):
    """A passage and how well it matched (BM25 score, or cosine similarity for embeddings)."""

    model_config = ConfigDict(frozen=True)

    passage: Passage
    score: float
