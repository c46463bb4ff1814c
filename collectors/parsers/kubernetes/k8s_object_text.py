"""Reading Kubernetes objects out of pasted JSON or YAML, and finding each key on its line.

Decoded JSON/YAML has no line numbers, so citations come from a forward text search for the key (and its
value) inside the object's stretch of text: exact for kubectl's pretty output, approximate otherwise.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from typing import Any

from collectors.k8s_values import as_dict, as_str
from collectors.lazy_regex import LazyPattern
from collectors.yaml_safe import safe_load

_STRUCTURED_START = LazyPattern(r"(?m)^(?:[{\[]|apiVersion:|kind:|items:|---)")
_DOC_SEPARATOR = LazyPattern(r"(?m)^(?:---|\.\.\.)(?:[ \t].*)?$")
_WS = LazyPattern(r"\s*")
# A line a person put where they cut lines out of the YAML ("[...]", "...", "…", "[snip]"), at any depth: no YAML
# parser takes the document across it, so a text that does not read whole is read as the pieces around each.
_ELISION = LazyPattern(r"(?m)^[ \t]*(?:\[[ \t]*(?:\.{3,}|…+|snip(?:ped)?)[ \t]*\]|\.{3,}|…+)[ \t]*$")
_AFTER_QUOTED_KEY = LazyPattern(r"""["'][ \t]*:[ \t]*""")
_AFTER_KEY = LazyPattern(r"""[ \t]*:(?:[ \t]+|(?=\n)|$)""")


@dataclass
class Doc:
    data: object
    start: int  # character offsets into the text
    end: int


def load_docs(text: str, problems: list[str]) -> list[Doc]:
    docs = _load_from(text, 0, problems)
    if not any(isinstance(d.data, dict | list) for d in docs):
        # A paste often starts with the command that produced it.
        m = _STRUCTURED_START.search(text)
        if m and m.start() > 0:
            problems.clear()
            docs = _load_from(text, m.start(), problems)
    if not any(isinstance(d.data, dict | list) for d in docs) and (member := _json_member(text)) is not None:
        problems.clear()
        docs = [member]
    return docs


# One member of a JSON object pasted without its braces (`"conditions": [ ... ],` cut from `kubectl get node -o
# json`): read as the object holding it.
_JSON_MEMBER = LazyPattern(r'\s*"[A-Za-z][\w.-]{0,60}"\s*:\s*[\[{]')


def _json_member(text: str) -> Doc | None:
    if _JSON_MEMBER.match(text) is None:
        return None
    body = text.strip().rstrip(",")
    try:
        data = json.loads("{" + body + "}")
    except (ValueError, RecursionError):
        # A member cut off mid-paste (`"containerStatuses": [ {...` ending at some field): read up to its last whole
        # field, as the object would hold it, with the brackets the cut left open closed.
        data = _up_to_last_whole_field("{" + body)
    return Doc(data, 0, len(text)) if isinstance(data, dict) else None


_CLOSER = {"{": "}", "[": "]"}
_MAX_REPAIR = 200_000  # characters: a cut fragment is a screenful, not a dump
_MAX_DEPTH = 64  # a pod's status nests a dozen deep; deeper is no object pasted by hand


def _up_to_last_whole_field(body: str) -> object | None:
    """The JSON value `body` opens, closed where it was cut, or at its last comma outside a string; None if
    unreadable. One pass keeps the open brackets; at each comma the text before it holds whole members only."""
    if len(body) > _MAX_REPAIR:
        return None
    stack: list[str] = []
    in_string = escaped = False
    cut: tuple[int, str] | None = None  # (comma position, the closers the brackets open there need)
    for pos, char in enumerate(body):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in _CLOSER:
            stack.append(_CLOSER[char])
            if len(stack) > _MAX_DEPTH:
                return None
        elif char in "]}":
            if not stack or stack.pop() != char:
                return None
        elif char == "," and stack:
            cut = (pos, "".join(reversed(stack)))
    # Cut after a whole value (a line ending `}`): closing what is open reads it all. Cut inside one: up to the
    # last comma.
    ends = [(len(body), "".join(reversed(stack)))] if not in_string else []
    for end, closers in ends + ([cut] if cut is not None else []):
        try:
            value: object = json.loads(body[:end] + closers)
        except (ValueError, RecursionError):
            continue
        return value
    return None


def _load_from(text: str, offset: int, problems: list[str]) -> list[Doc]:
    if text[offset:].lstrip()[:1] in ("{", "["):
        docs = _json_docs(text, offset, problems)
        if docs:
            return docs
        problems.clear()
    docs = _yaml_docs(text, offset, problems, elided=False)
    if any("unreadable" in p for p in problems) and _ELISION.search(text, offset):
        # Lines were cut out with "[...]": read the pieces around each mark. Only then, since a block scalar (a
        # ConfigMap's script) may hold such a line as its own text.
        problems.clear()
        docs = _yaml_docs(text, offset, problems, elided=True)
    return docs


def _json_docs(text: str, offset: int, problems: list[str]) -> list[Doc]:
    """One JSON value, or several back to back (`jq .items[]`, JSON lines)."""
    decoder = json.JSONDecoder()
    docs: list[Doc] = []
    pos = _skip_ws(text, offset)
    while pos < len(text):
        try:
            data, end = decoder.raw_decode(text, pos)
        except (ValueError, RecursionError) as err:
            problems.append(f"JSON unreadable from character {pos}: {err}")
            break
        docs.append(Doc(data, pos, end))
        pos = _skip_ws(text, end)
    return docs


def _skip_ws(text: str, pos: int) -> int:
    m = _WS.match(text, pos)
    return m.end() if m else pos


def _yaml_docs(text: str, offset: int, problems: list[str], elided: bool) -> list[Doc]:
    frames = _heredoc_frames(text, offset)
    if elided:
        frames += [m.start() for m in _ELISION.finditer(text, offset)]
    cuts = [offset] + [m.start() for m in _DOC_SEPARATOR.finditer(text, offset)] + frames + [len(text)]
    cuts = sorted(set(cuts + _object_starts(text, cuts)))
    docs: list[Doc] = []
    frame_set = set(frames)
    for start, end in itertools.pairwise(cuts):
        chunk = text[start:end]
        if chunk.startswith(("---", "...")) or start in frame_set:
            chunk = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        chunk, captioned = _without_caption(chunk)
        if captioned:
            problems.append(f"YAML read from character {start} up to lines that are not YAML (a caption or prose, "
                            "not read)")
        if not chunk.strip():
            continue
        try:
            data = safe_load(chunk)
        except Exception as err:  # YAMLError, or RecursionError on absurd nesting
            cut = _after_cut_top(chunk)
            if cut is not None:
                skipped, data = cut
                problems.append(f"YAML read from character {start + skipped}: the lines above it were the cut-off "
                                "end of a deeper block")
                docs.append(Doc(data, start + skipped, end))
                continue
            data = _before_prose(chunk, err)
            if data is None:
                problems.append(f"YAML unreadable at character {start}: {type(err).__name__}")
                continue
            problems.append(f"YAML read from character {start} up to a line that is not YAML (the rest is not read)")
        docs.append(Doc(data, start, end))
    return docs


# A line at the margin that is no mapping key, list item, comment or document marker: the file name or command
# a paste puts above the next manifest ("service.yml", "$ kubectl get svc web -o yaml", "Deployment:"), which
# ends the document before it. Keys are k8s-shaped (no spaces), so "Rendered policy egress:" is a caption too.
_CAPTION = LazyPattern(r"""^(?![ \t#-]|\.\.\.)(?!["']?[^\s:"']+["']?[ \t]*:(?:[ \t]|$)).*\S""")


def _without_caption(chunk: str) -> tuple[str, bool]:
    """The chunk without the caption lines (and blank lines) that close it, and whether there were any."""
    lines = chunk.split("\n")
    end = len(lines)
    while end > 0 and (not lines[end - 1].strip() or _CAPTION.match(lines[end - 1])):
        end -= 1
    # Only a trailing stretch after some YAML is a caption; a chunk of nothing but prose stays as it was (and is
    # reported unreadable, or read as a scalar and ignored).
    if end == 0 or not any(_CAPTION.match(line) for line in lines[end:]):
        return chunk, False
    return "\n".join(lines[:end]), True


def _before_prose(chunk: str, err: Exception) -> object | None:
    """The YAML before the line a parser error is on, when that much is a mapping or a list: a pasted document
    followed by the paste's own words ("i think i cannot schedule..."), which no YAML parser can take whole."""
    mark = getattr(err, "problem_mark", None)
    line = getattr(mark, "line", 0)
    if not isinstance(line, int) or line < 2:
        return None
    head = "\n".join(chunk.split("\n")[:line])
    try:
        data = safe_load(head)
    except Exception:  # still not YAML: nothing is read
        return None
    return data if isinstance(data, dict | list) and data else None


def _after_cut_top(chunk: str) -> tuple[int, dict[str, Any]] | None:
    """A YAML piece whose top was cut inside a nested block (`kubectl get pod -o yaml` pasted from the middle of
    `status.conditions`): its first lines sit deeper than the keys that follow, which no parser takes whole. Read
    from the first line at the shallowest indentation, dedented, when that is a mapping of more than one key;
    returns the character offset it starts at and the mapping."""
    lines = chunk.split("\n")
    indents = [len(line) - len(line.lstrip(" ")) for line in lines
               if line.strip() and not line.lstrip().startswith("#")]
    if not indents or indents[0] == min(indents):
        return None  # the top is not deeper than the rest: some other fault, left to _before_prose
    margin = min(indents)
    first = next(i for i, line in enumerate(lines)
                 if line.strip() and len(line) - len(line.lstrip(" ")) == margin)
    rest = lines[first:]
    try:
        data = safe_load("\n".join(line[margin:] for line in rest))
    except Exception:  # still not YAML: left to _before_prose
        return None
    if not isinstance(data, dict) or len(data) < 2:
        return None
    return sum(len(line) + 1 for line in lines[:first]), data


def _object_starts(text: str, cuts: list[int]) -> list[int]:
    """Where a second object begins inside one document: files pasted one after another without `---` (a Pod's
    YAML, then a Service's) repeat `apiVersion:` at the margin, which would otherwise keep only the last."""
    starts: list[int] = []
    for start, end in itertools.pairwise(cuts):
        found = [m.start() for m in _TOP_API_VERSION.finditer(text, start, end)]
        starts += found[1:]
    return starts


_TOP_API_VERSION = LazyPattern(r"(?m)^apiVersion:")
# `kubectl apply -f- <<EOF` ... `EOF`: a manifest pasted as the shell here-document that fed it. The command line
# and the closing word are no YAML; each here-document is a document of its own.
_HEREDOC = LazyPattern(r"(?m)^[^\n]*<<-?[ \t]*['\"]?([A-Za-z_]\w*)['\"]?[ \t]*$")


def _heredoc_frames(text: str, offset: int) -> list[int]:
    """Offsets of the lines that open and close each here-document after `offset`."""
    frames: list[int] = []
    pos = offset
    while (m := _HEREDOC.search(text, pos)) is not None:
        frames.append(m.start())
        close = re.compile(rf"(?m)^[ \t]*{re.escape(m.group(1))}[ \t]*$").search(text, m.end())
        if close is None:
            break
        frames.append(close.start())
        pos = close.end()
    return frames


# ---- finding lines -----------------------------------------------------------------------------------


class ObjectText:
    """The artifact text with forward key searches and cheap offset -> line conversion."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._pos = 0
        self._line = 1

    def line_at(self, pos: int) -> int:
        # Lookups mostly move forward, so counting from the previous answer keeps this linear overall.
        if pos >= self._pos:
            self._line += self.text.count("\n", self._pos, pos)
        else:
            self._line -= self.text.count("\n", pos, self._pos)
        self._pos = pos
        return self._line

    def find(self, key: str, value: str | None, start: int, end: int) -> int | None:
        """Offset of the first `key:` (with that value, if given) in text[start:end]."""
        text = self.text
        pos = start
        # str.find is far cheaper than a regex scan; only the few literal hits are checked in full.
        while (hit := text.find(key, pos, end)) >= 0:
            pos = hit + len(key)
            after = self._key_end(hit, len(key))
            if after is not None and (value is None or self._value_at(after, value)):
                return hit
        return None

    def _key_end(self, hit: int, length: int) -> int | None:
        """Where the value starts if text[hit:] is a whole mapping key, else None."""
        text = self.text
        quoted = hit > 0 and text[hit - 1] in "\"'"
        if not self._opens_key(hit - 1 if quoted else hit):
            return None
        m = (_AFTER_QUOTED_KEY if quoted else _AFTER_KEY).match(text, hit + length)
        return m.end() if m else None

    def _opens_key(self, pos: int) -> bool:
        """A key starts its line (after indent or a YAML `- `) or follows `{` or `,` in flow JSON."""
        text = self.text
        k = pos - 1
        while k >= 0 and text[k] in " \t":
            k -= 1
        if k < 0 or text[k] in "\n{,":
            return True
        if text[k] != "-" or k + 1 == pos:
            return False
        k -= 1
        while k >= 0 and text[k] in " \t":
            k -= 1
        return k < 0 or text[k] == "\n"

    def _value_at(self, pos: int, value: str) -> bool:
        window = self.text[pos:pos + len(value) * 2 + 8]
        escaped = json.dumps(value)[1:-1]
        for candidate in {value, escaped}:
            for quote in ('"', "'"):
                if window.startswith(quote + candidate + quote):
                    return True
            if window.startswith(candidate):
                after = window[len(candidate):len(candidate) + 1]
                if not after or after in " \t\r\n,}]#":
                    return True
        return False


Step = str | tuple[str, object]


@dataclass
class Item:
    data: dict[str, Any]
    kind: str
    start: int
    end: int


class Loc:
    """Line lookups confined to one object's stretch of text."""

    def __init__(self, text: ObjectText, item: Item) -> None:
        self.text = text
        self.item = item
        self._memo: dict[tuple[str, str | None, int], int | None] = {}

    def at(self, *path: Step) -> int:
        """Line of the last step, each step searched after the previous one; falls back to the last hit.

        kubectl sorts keys, so a sibling can come before the key that identifies its object (`image`
        before `name` in a container): a step not found after the latest hit is retried after earlier ones.
        """
        return self.text.line_at(self._offset(path))

    def within(self, *path: Step) -> Loc:
        """Lookups confined to the part of the object from `path` on: one pod template among several."""
        start = self._offset(path)
        return Loc(self.text, Item(self.item.data, self.item.kind, start, max(start, self.item.end)))

    def _offset(self, path: tuple[Step, ...]) -> int:
        anchors = [self.item.start]
        for i, step in enumerate(path):
            key, value = (step, None) if isinstance(step, str) else (step[0], as_str(step[1]) or None)
            found = self._search(key, value, anchors)
            if found is None and value is not None and i == len(path) - 1:
                found = self._search(key, None, anchors)
            if found is not None:
                anchors.append(found)
        return anchors[-1]

    def _search(self, key: str, value: str | None, anchors: list[int]) -> int | None:
        for anchor in reversed(anchors):
            memo = (key, value, anchor)
            if memo not in self._memo:  # paths share prefixes (spec, containers, env ...)
                self._memo[memo] = self.text.find(key, value, anchor, self.item.end)
            if (found := self._memo[memo]) is not None:
                return found
        return None

    def item_line(self) -> int:
        return self.text.line_at(self.item.start)


# ---- objects -----------------------------------------------------------------------------------------


def items_of(text: ObjectText, docs: list[Doc]) -> list[Item]:
    items: list[Item] = []
    for doc in docs:
        data = doc.data
        default_kind, members, cursor = "", [data], doc.start
        if isinstance(data, list):
            members = data
        elif isinstance(data, dict) and isinstance(data.get("items"), list):
            list_kind = as_str(data.get("kind"))
            default_kind = list_kind[:-4] if list_kind.endswith("List") and list_kind != "List" else ""
            members = data["items"]
            cursor = text.find("items", None, doc.start, doc.end) or doc.start
            if not members and list_kind:
                items.append(Item({"kind": list_kind, "items": []}, list_kind, doc.start, doc.end))
        whole = len(members) == 1 and members[0] is data
        spans = None if whole else _json_spans(text.text, cursor, doc.end, len(members))
        if spans is not None:
            items += [Item(m, as_str(m.get("kind")) or default_kind, a, b)
                      for m, (a, b) in zip(members, spans, strict=True) if isinstance(m, dict)]
            continue
        objects = [(m, as_str(m.get("kind")) or default_kind) for m in members if isinstance(m, dict)]
        items.extend(_place(text, objects, cursor, doc, whole))
    return items


def _json_spans(text: str, cursor: int, end: int, count: int) -> list[tuple[int, int]] | None:
    """Exact extents of the members of a JSON array starting at or after cursor, by decoding each one.

    None when the text there is not that JSON array (YAML, or an array that does not match).
    """
    pos = text.find("[", cursor, end)
    if pos < 0 or text[cursor:pos].strip(" \t\r\n\"items:") != "":
        return None
    decoder = json.JSONDecoder()
    spans: list[tuple[int, int]] = []
    pos = _skip_ws(text, pos + 1)
    try:
        while len(spans) < count:
            _, stop = decoder.raw_decode(text, pos)
            spans.append((pos, stop))
            pos = _skip_ws(text, stop)
            if text.startswith(",", pos):
                pos = _skip_ws(text, pos + 1)
    except (ValueError, RecursionError):
        return None
    return spans


def _place(text: ObjectText, objects: list[tuple[dict[str, Any], str]], cursor: int, doc: Doc,
           whole: bool) -> list[Item]:
    """Each object's start: its own `kind:` line (or its name), searched forward in document order."""
    if whole:
        return [Item(objects[0][0], objects[0][1], doc.start, doc.end)] if objects else []
    starts: list[int] = []
    for data, kind in objects:
        name = as_str(as_dict(data.get("metadata")).get("name"))
        found = (text.find("kind", kind, cursor, doc.end) if "kind" in data else None) or (
            text.find("name", name, cursor, doc.end) if name else None)
        start = found if found is not None else cursor
        starts.append(start)
        cursor = start + 1
    ends = [*starts[1:], doc.end]
    return [Item(data, kind, s, max(e, s)) for (data, kind), s, e in zip(objects, starts, ends, strict=False)]
