"""The house plan, pinned: which package may import which, the pure evidence core, front ends apart, no cycles.

Read from the source with `ast`, lazy imports inside functions and TYPE_CHECKING blocks included: a cycle that
only closes at run time is still a cycle, and a type-only one still ties the two modules together.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PACKAGES = ("collectors", "playbooks", "drills", "bot")  # each may import only those before it
# I/O belongs to collectors.live (cluster, Prometheus), collectors.agent (node files), collectors.http and
# collectors.jsonlog (the servers' plumbing). The rest of collectors is the pure core.
EDGES = ("collectors.live", "collectors.agent", "collectors.http", "collectors.jsonlog")
IO_LIBRARIES = ("socket", "subprocess", "httpx", "requests", "urllib.request", "kubernetes", "sqlalchemy",
                "starlette", "uvicorn", "prometheus_api_client", "slack_sdk", "slack_bolt", "asyncio")
# Modules that assemble the front ends into one process; they alone may import several.
COMPOSITION = {"bot.server", "bot.serve"}


def _front_end(module: str) -> str | None:
    for front_end in ("cli", "slack", "webhook"):
        if module == f"bot.{front_end}" or module.startswith(f"bot.{front_end}."):
            return front_end
    return None


def _modules() -> dict[str, Path]:
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "incidents" in path.parts:
                continue
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


MODULES = _modules()


def _imports(module: str, path: Path) -> set[str]:
    """Every name imported anywhere in the module (absolute), whether a project module or a library."""
    names: set[str] = set()
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
    return names


IMPORTS = {name: _imports(name, path) for name, path in MODULES.items()}
GRAPH = {name: {i for i in found if i in MODULES and i != name} for name, found in IMPORTS.items()}


def _cycles() -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for root in sorted(GRAPH):  # iterative Tarjan: no recursion limit to hit on a deep graph
        if root in index:
            continue
        work = [(root, iter(sorted(GRAPH[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        component.append(top)
                        if top == node:
                            break
                    if len(component) > 1:
                        out.append(sorted(component))
            elif child not in index:
                index[child] = low[child] = counter
                counter += 1
                stack.append(child)
                on_stack.add(child)
                work.append((child, iter(sorted(GRAPH[child]))))
            elif child in on_stack:
                low[node] = min(low[node], index[child])
    return out


def test_the_graph_is_read() -> None:
    assert len(MODULES) > 100
    assert "collectors.query_facts" in GRAPH["playbooks.pipeline"]
    assert "collectors.parsers.registry" in GRAPH["collectors.query_facts"]


def test_no_import_cycles() -> None:
    assert _cycles() == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    saved = dict(GRAPH)
    try:
        GRAPH["collectors.models"] = {*GRAPH["collectors.models"], "collectors.paste"}
        assert any("collectors.models" in c for c in _cycles())
    finally:
        GRAPH.clear()
        GRAPH.update(saved)


def test_layers_point_one_way() -> None:
    rank = {p: i for i, p in enumerate(PACKAGES)}
    upward = [(m, d) for m, deps in GRAPH.items() for d in deps if rank[d.split(".")[0]] > rank[m.split(".")[0]]]
    assert upward == []


def test_the_evidence_core_is_pure() -> None:
    core = [m for m in GRAPH if m.startswith("collectors") and not m.startswith(EDGES)]
    assert "collectors.parsers.text.signals" in core and "collectors.paste" in core
    reaching_edges = [(m, d) for m in core for d in GRAPH[m] if d.startswith(EDGES)]
    doing_io = [(m, lib) for m in core for lib in IMPORTS[m]
                if any(lib == io or lib.startswith(io + ".") for io in IO_LIBRARIES)]
    assert reaching_edges == [] and doing_io == []


def test_front_ends_never_import_each_other() -> None:
    crossing = [(m, d) for m, deps in GRAPH.items() if m not in COMPOSITION and _front_end(m)
                for d in deps if _front_end(d) and _front_end(d) != _front_end(m)]
    assert {_front_end(m) for m in GRAPH} >= {"cli", "slack", "webhook"}
    assert crossing == []


def test_live_sources_and_parsers_do_not_borrow_from_each_other() -> None:
    # Both read API objects; what they share (collectors.k8s_values) is neutral ground.
    borrowed = [(m, d) for m, deps in GRAPH.items() if m.startswith("collectors.live")
                for d in deps if d.startswith("collectors.parsers")]
    lent = [(m, d) for m, deps in GRAPH.items() if m.startswith("collectors.parsers")
            for d in deps if d.startswith("collectors.live")]
    assert borrowed == [] and lent == []
