"""The CEL library without its REPL.

The `cel` package imports its interactive command line (typer, prompt_toolkit, rich, pygments: about 150
modules and a tenth of a second) from its __init__. triagebot only compiles and evaluates, so an empty module
stands in for that command line before the package loads."""

from __future__ import annotations

import sys
import types

sys.modules.setdefault("cel.cli", types.ModuleType("cel.cli"))

import cel  # noqa: E402  (must follow the stand-in above)

Context = cel.Context
compile_expression = cel.compile
