"""Rendering next checks and claims for a subject, with escaping for PromQL and shells."""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment


class _Placeholder(jinja2.Undefined):
    """A missing variable renders as <name>, so a check stays readable when the subject is partial."""

    def __str__(self) -> str:
        return f"<{self._undefined_name}>"


def promql_label(value: object) -> str:
    """Escape a value for use inside a double-quoted PromQL label matcher."""
    text = str(value)
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def promql_regex(value: object) -> str:
    """Escape a value for a PromQL =~ matcher: regex metacharacters, then string quoting."""
    special = set(".^$*+?()[]{}|\\")
    return promql_label("".join("\\" + c if c in special else c for c in str(value)))


ENV = SandboxedEnvironment(undefined=_Placeholder, autoescape=False, keep_trailing_newline=False)
# Globals such as `namespace` would shadow our own variables of the same name.
ENV.globals.clear()
ENV.filters["promql"] = promql_label
ENV.filters["promql_re"] = promql_regex
ENV.filters["sh"] = lambda v: v if isinstance(v, jinja2.Undefined) else shlex.quote(str(v))


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    return ENV.from_string(source)


def render(source: str, variables: dict[str, Any]) -> str:
    known = {key: value for key, value in variables.items() if value is not None}
    return compile_template(source).render(**known).strip()
