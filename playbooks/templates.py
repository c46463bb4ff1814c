"""Rendering next checks and claims for a subject, with escaping for PromQL and shells."""

from __future__ import annotations

import shlex
from functools import lru_cache
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment

from collectors.parsed_cache import remembered


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


def check_template(source: str) -> None:
    """Raise jinja2.TemplateSyntaxError if the text is not a valid template. Parsing only: loading a playbook
    checks every text, and compiling them all would cost each CLI run far more than rendering the few it shows."""
    tree = ENV.parse(source)
    # Unknown filters and tests are only found when compiling; look for them in the parse tree instead.
    for node in tree.find_all((jinja2.nodes.Filter, jinja2.nodes.Test)):
        known = ENV.filters if isinstance(node, jinja2.nodes.Filter) else ENV.tests
        if node.name not in known:
            kind = "filter" if isinstance(node, jinja2.nodes.Filter) else "test"
            raise jinja2.TemplateSyntaxError(f"no {kind} named {node.name!r}", node.lineno)


# What the code Jinja generates for a text depends on, besides the text: its version and the environment's syntax
# options (filters are looked up when rendering).
_CODE_KIND = "jinja:" + repr((jinja2.__version__, type(ENV).__name__, ENV.autoescape, ENV.keep_trailing_newline,
                              ENV.trim_blocks, ENV.lstrip_blocks, ENV.newline_sequence, ENV.optimized))


@lru_cache(maxsize=4096)
def compile_template(source: str) -> jinja2.Template:
    """The template; the Python code Jinja generates from its text is remembered in the user's cache (as Jinja's
    own bytecode cache does for file templates): generating it is most of what showing a check costs a CLI run."""
    code = remembered(_CODE_KIND, source, ENV.compile)
    return ENV.template_class.from_code(ENV, code, ENV.make_globals(None), None)


def render(source: str, variables: dict[str, Any]) -> str:
    if "{" not in source:  # plain text: Jinja has nothing to do, and compiling it costs a CLI run its start-up
        return source.strip()
    known = {key: value for key, value in variables.items() if value is not None}
    return compile_template(source).render(**known).strip()
