"""The one redactor: secrets are masked before anything is stored, posted, logged or printed.

The shapes live in collectors/catalogs/secrets.yaml (with their sources and examples); this module applies
them. Redaction keeps every line in place, so citations into a redacted artifact still point at the right line.
Single-line shapes run over the whole text at once (one C-speed scan per shape, not one per line); the few
shapes that span lines (PEM blocks, env entries printed over several lines) are handled line by line here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from collectors.models import Artifact

MASK = "<redacted>"
CATALOG = Path(__file__).parent / "catalogs" / "secrets.yaml"
HANDLERS = frozenset({"pem-block", "env-next-line"})


@dataclass(frozen=True)
class Shape:
    id: str
    what: str
    sources: tuple[str, ...]
    pattern: re.Pattern[str] | None
    handler: str | None
    examples: tuple[tuple[str, str], ...]  # (text, the secret in it)
    keep: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    names: str  # the alternation of secret-ish names, for the multi-line rules
    shapes: tuple[Shape, ...]
    keep: tuple[str, ...]


def _compile(raw: dict[str, Any], names: str) -> Shape:
    sid = str(raw["id"])
    pattern = raw.get("pattern")
    handler = raw.get("handler")
    if (pattern is None) == (handler is None):
        raise ValueError(f"{CATALOG}: shape {sid} needs exactly one of pattern and handler")
    if handler is not None and handler not in HANDLERS:
        raise ValueError(f"{CATALOG}: shape {sid}: unknown handler {handler!r}")
    compiled = None
    if pattern is not None:
        flags = re.MULTILINE | (re.IGNORECASE if raw.get("ignore_case") else 0)
        compiled = re.compile(str(pattern).replace("{NAME}", names), flags)
    if not raw.get("sources"):
        raise ValueError(f"{CATALOG}: shape {sid} has no sources")
    return Shape(sid, str(raw.get("what", "")), tuple(raw["sources"]), compiled, handler,
                 tuple((str(e["text"]), str(e["secret"])) for e in raw.get("examples", ())),
                 tuple(str(k) for k in raw.get("keep", ())))


@cache
def catalog() -> Catalog:
    """The secret shapes, read once."""
    raw = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
    names = "".join(str(raw["names"]).split())  # folded YAML: the alternation is written over several lines
    return Catalog(names, tuple(_compile(s, names) for s in raw["shapes"]), tuple(raw.get("keep", ())))


def _masker(match: re.Match[str]) -> str:
    if "secret" not in match.re.groupindex or match.start("secret") < 0:
        return MASK
    whole = match.group(0)
    start, end = match.start("secret") - match.start(), match.end("secret") - match.start()
    return whole[:start] + MASK + whole[end:]


@cache
def _line_rules() -> tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...]:
    return tuple((s.pattern, _masker) for s in catalog().shapes if s.pattern is not None)


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
    }


def _mask_value(line: str) -> str:
    rules = _structural()
    line = rules["json_value"].sub(lambda m: m.group(1) + MASK + m.group(3), line)
    return rules["yaml_value"].sub(lambda m: m.group(1) + MASK, line)


def _multi_line(text: str) -> str:
    """PEM key bodies, and env values on the line before or after a line naming a secret."""
    if "PRIVATE KEY-----" not in text and "name" not in text.lower():
        return text
    rules = _structural()
    out: list[str] = []
    in_key = False
    previous_names_secret = False
    for line in text.split("\n"):
        if in_key:
            in_key = rules["key_end"].search(line) is None
            out.append(MASK if in_key else line)
            continue
        if rules["key_begin"].search(line):
            in_key = rules["key_end"].search(line) is None
            out.append(line)
            previous_names_secret = False
            continue
        if previous_names_secret:
            line = _mask_value(line)
        names_secret = bool(rules["json_name"].search(line) or rules["yaml_name"].search(line))
        if names_secret and out:
            out[-1] = _mask_value(out[-1])  # the value came first
        previous_names_secret = names_secret
        out.append(line)
    return "\n".join(out)


def redact_text(text: str) -> str:
    """The text with every catalogued secret shape masked, line for line."""
    if not text:
        return text
    text = _multi_line(text)
    for pattern, masker in _line_rules():
        text = pattern.sub(masker, text)
    return text


def redact(artifact: Artifact) -> Artifact:
    """The artifact with its content and command redacted."""
    if not artifact.content and not artifact.command:
        return artifact
    return artifact.model_copy(update={"content": redact_text(artifact.content),
                                       "command": redact_text(artifact.command)})


@cache
def _secret_key() -> re.Pattern[str]:
    return re.compile(r"(?i)^[A-Za-z0-9_.\-]*" + catalog().names + r"[A-Za-z0-9_.\-]*$")


def redact_json(value: Any) -> Any:
    """A JSON-like tree (an alert payload, an API object) with every string in it redacted, keys included.

    A string under a key that names a secret ({"db_password": "x"}) is masked whole: alone, "x" has no shape.
    """
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        out: dict[Any, Any] = {}
        for key, item in value.items():
            if isinstance(key, str) and isinstance(item, str) and item and _secret_key().match(key):
                out[key] = MASK
            else:
                out[redact_text(key) if isinstance(key, str) else key] = redact_json(item)
        return out
    if isinstance(value, list):
        return [redact_json(v) for v in value]
    return value
