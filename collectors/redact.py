"""The one redactor: secrets are masked before anything is stored, posted, logged or printed.

The shapes live in collectors/catalogs/secrets.yaml (with their sources and examples); this module applies
them. Redaction keeps every line in place, so citations into a redacted artifact still point at the right line.
Single-line shapes run over the whole text at once (one C-speed scan per shape, not one per line); the few
shapes that span lines (PEM blocks, env entries printed over several lines) are handled line by line here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache, cached_property
from pathlib import Path
from typing import Any

from collectors.models import Artifact
from collectors.yaml_safe import load_file

MASK = "<redacted>"
CATALOG = Path(__file__).parent / "catalogs" / "secrets.yaml"
HANDLERS = frozenset({"pem-block", "env-next-line", "flag-next-line"})


@dataclass(frozen=True)
class Shape:
    id: str
    what: str
    sources: tuple[str, ...]
    regex: str | None  # the pattern with the secret names filled in; compiled when a text first needs it
    handler: str | None
    examples: tuple[tuple[str, str], ...]  # (text, the secret in it)
    keep: tuple[str, ...]
    hints: tuple[str, ...] = ()  # lowercase; the pattern only runs on text containing one (empty: always runs)
    flags: int = 0

    @cached_property
    def pattern(self) -> re.Pattern[str] | None:
        """Compiled on first use: most texts hold few hints, and compiling every shape cost each CLI run tens of
        milliseconds (tests/unit/core/test_secret_catalog.py runs every shape on its examples)."""
        return re.compile(self.regex, self.flags) if self.regex is not None else None


@dataclass(frozen=True)
class Catalog:
    names: str  # the alternation of secret-ish names, for the multi-line rules
    shapes: tuple[Shape, ...]
    keep: tuple[str, ...]


def _compile(raw: dict[str, Any], names: str, name_hints: tuple[str, ...]) -> Shape:
    sid = str(raw["id"])
    pattern = raw.get("pattern")
    handler = raw.get("handler")
    if (pattern is None) == (handler is None):
        raise ValueError(f"{CATALOG}: shape {sid} needs exactly one of pattern and handler")
    if handler is not None and handler not in HANDLERS:
        raise ValueError(f"{CATALOG}: shape {sid}: unknown handler {handler!r}")
    flags = re.MULTILINE | (re.IGNORECASE if raw.get("ignore_case") else 0)
    if not raw.get("sources"):
        raise ValueError(f"{CATALOG}: shape {sid} has no sources")
    hints = raw.get("hints", ())
    return Shape(sid, str(raw.get("what", "")), tuple(raw["sources"]),
                 str(pattern).replace("{NAME}", names) if pattern is not None else None, handler,
                 tuple((str(e["text"]), str(e["secret"])) for e in raw.get("examples", ())),
                 tuple(str(k) for k in raw.get("keep", ())),
                 name_hints if hints == "names" else tuple(str(h).lower() for h in hints), flags)


@cache
def catalog() -> Catalog:
    """The secret shapes, read once."""
    raw = load_file(CATALOG)
    names = "".join(str(raw["names"]).split())  # folded YAML: the alternation is written over several lines
    name_hints = tuple(str(h).lower() for h in raw["name_hints"])
    return Catalog(names, tuple(_compile(s, names, name_hints) for s in raw["shapes"]), tuple(raw.get("keep", ())))


def _masker(match: re.Match[str]) -> str:
    if "secret" not in match.re.groupindex or match.start("secret") < 0:
        return MASK
    whole = match.group(0)
    start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
    return whole[:start] + MASK + whole[end:]


@cache
def _structural() -> dict[str, re.Pattern[str]]:
    names = catalog().names
    secret_name = r"[A-Za-z0-9_.\-]*" + names + r"[A-Za-z0-9_.\-]*"
    return {
        "key_begin": re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----"),
        "key_end": re.compile(r"-----END [A-Z ]*PRIVATE KEY-----"),
        # Kubernetes env printed over lines: a name line naming a secret, and a value line before or after it.
        "json_name": re.compile(r'(?i)^\s*\{?\s*"name"\s*:\s*"' + secret_name + r'"\s*,?\s*\}?\s*$'),
        "json_value": re.compile(r'^(\s*\{?\s*"value"\s*:\s*")((?:[^"\\]|\\.)*)(")'),
        "yaml_name": re.compile(r"(?i)^\s*-?\s*name\s*:\s*[\"']?" + secret_name + r"[\"']?\s*$"),
        "yaml_value": re.compile(r"^(\s*-?\s*value\s*:\s*)(\S.*)$"),
        # A pretty-printed argument list: a line holding only a flag naming a secret, its value on the next.
        "flag": re.compile(r'(?i)^\s*-?\s*"?--?[A-Za-z0-9_-]*' + names + r'[A-Za-z0-9_-]*"?\s*,?\s*$'),
        "arg_value": re.compile(r'^(\s*-?\s*"?)((?:[^"\\]|\\.)+?)("?\s*,?\s*)$'),
    }


def _mask_value(line: str) -> str:
    rules = _structural()
    line = rules["json_value"].sub(lambda m: m.group(1) + MASK + m.group(3), line)
    return rules["yaml_value"].sub(lambda m: m.group(1) + MASK, line)


def _pem_blocks(text: str) -> str:
    """The lines between a PEM private key's BEGIN and END, masked one for one."""
    if "PRIVATE KEY-----" not in text:
        return text
    rules = _structural()
    out: list[str] = []
    in_key = False
    for line in text.split("\n"):
        if in_key:
            in_key = rules["key_end"].search(line) is None
            out.append(MASK if in_key else line)
        else:
            in_key = "PRIVATE KEY-----" in line and rules["key_begin"].search(line) is not None \
                and rules["key_end"].search(line) is None
            out.append(line)
    return "\n".join(out)


def _neighbours(text: str) -> str:
    """Env values on the line before or after a line naming a secret, and a secret flag's value on the line
    after the flag (pretty-printed JSON and YAML put them on lines of their own)."""
    rules = _structural()
    out: list[str] = []
    previous_names_secret = previous_is_flag = False
    for line in text.split("\n"):
        if previous_names_secret:
            line = _mask_value(line)
        if previous_is_flag and not line.lstrip().lstrip("-").lstrip().startswith(("-", '"-')):
            line = rules["arg_value"].sub(lambda m: m.group(1) + MASK + m.group(3), line)
        previous_is_flag = "-" in line and len(line) < 256 and bool(rules["flag"].search(line))
        names_secret = "ame" in line and len(line) < 512 and bool(
            rules["json_name"].search(line) or rules["yaml_name"].search(line))
        if names_secret and out:
            out[-1] = _mask_value(out[-1])  # the value came first
        previous_names_secret = names_secret
        out.append(line)
    return "\n".join(out)


@cache
def _hinted() -> tuple[Shape, ...]:
    return tuple(s for s in catalog().shapes if s.regex is not None and s.hints)


@cache
def _unhinted() -> tuple[re.Pattern[str], ...]:
    return tuple(s.pattern for s in catalog().shapes if s.pattern is not None and not s.hints)  # every text


@cache
def _all_hints() -> tuple[str, ...]:
    """Every hint, minus those containing a shorter one ("api-key" holds "key"): each costs a scan of the text."""
    every = {h for shape in _hinted() for h in shape.hints}
    return tuple(sorted(h for h in every if not any(g != h and g in h for g in every)))


def _redact_block(block: str) -> str:
    """Every hinted shape (and the neighbour rules) on a few lines that hold at least one hint."""
    block = _neighbours(block)
    lowered = block.lower()
    for shape in _hinted():
        if any(h in lowered for h in shape.hints) and shape.pattern is not None:
            block = shape.pattern.sub(_masker, block)
    return block


def _hinted_blocks(text: str, lowered: str) -> list[tuple[int, int]]:
    """(start, end) of runs of lines holding a hint, each widened by a line on both sides (the neighbour rules
    look one line away), merged where they touch. str.find runs at C speed; a regex tried at every position of
    a 200,000-line paste, once per shape, does not."""
    found: list[tuple[int, int]] = []
    for hint in _all_hints():
        at = lowered.find(hint)
        while at != -1:
            start = text.rfind("\n", 0, text.rfind("\n", 0, at)) + 1  # the line before the hit's line
            end = text.find("\n", at)
            end = len(text) if end == -1 else text.find("\n", end + 1)  # through the line after
            end = len(text) if end == -1 else end
            found.append((start, end))
            at = lowered.find(hint, end)
    found.sort()
    merged: list[tuple[int, int]] = []
    for start, end in found:
        if merged and start <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def redact_text(text: str) -> str:
    """The text with every catalogued secret shape masked, line for line."""
    if not text:
        return text
    text = _pem_blocks(text)
    lowered = text.lower()
    if len(lowered) != len(text):  # a few characters lower to two: offsets would not line up, so no shortcut
        text = _redact_block(text)
    else:
        # Shapes never cross a line break, so running them on the hinted lines equals running them everywhere.
        pieces: list[str] = []
        last = 0
        for start, end in _hinted_blocks(text, lowered):
            pieces += [text[last:start], _redact_block(text[start:end])]
            last = end
        pieces.append(text[last:])
        text = "".join(pieces)
    for pattern in _unhinted():
        text = pattern.sub(_masker, text)
    return text


def redact(artifact: Artifact) -> Artifact:
    """The artifact with its content and command redacted."""
    if not artifact.content and not artifact.command:
        return artifact
    return replace(artifact, content=redact_text(artifact.content), command=redact_text(artifact.command))


@cache
def _secret_key() -> re.Pattern[str]:
    return re.compile(r"(?i)^[A-Za-z0-9_.\-]*" + catalog().names + r"[A-Za-z0-9_.\-]*$")


# A tree repeats its short strings (every dict's keys, statuses, kinds): each is redacted once per tree. A report of
# one line holds 1,800 strings, 360 of them different.
_SHORT = 256


def redact_json(value: Any) -> Any:
    """A JSON-like tree (an alert payload, an API object) with every string in it redacted, keys included.

    A string under a key that names a secret ({"db_password": "x"}) is masked whole: alone, "x" has no shape.
    """
    return _redact_tree(value, {})


def _redact_string(text: str, done: dict[str, str]) -> str:
    if len(text) > _SHORT:
        return redact_text(text)
    out = done.get(text)
    if out is None:
        out = done[text] = redact_text(text)
    return out


def _redact_tree(value: Any, done: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _redact_string(value, done)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and _secret_key().match(key):
                out[key] = MASK
            else:
                out[_redact_string(key, done) if isinstance(key, str) else key] = _redact_tree(item, done)
        return out
    if isinstance(value, list):
        return [_redact_tree(v, done) for v in value]
    return value
