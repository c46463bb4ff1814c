"""Load YAML while remembering the line of every key, so errors can say file:line."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from collectors.parsed_cache import remembered
from collectors.yaml_safe import loader as yaml_loader

if TYPE_CHECKING:
    import yaml

Path_ = tuple[str | int, ...]


class LineMap:
    """Maps a path of keys and indexes (as pydantic reports it) to a 1-based line."""

    def __init__(self, lines: dict[Path_, int] | None = None) -> None:
        self._lines: dict[Path_, int] = lines if lines is not None else {}

    def record(self, path: Path_, line: int) -> None:
        self._lines.setdefault(path, line)

    def line(self, path: Path_) -> int:
        """The line of the deepest recorded prefix of path (1 if nothing matches)."""
        for end in range(len(path), -1, -1):
            found = self._lines.get(tuple(path[:end]))
            if found is not None:
                return found
        return 1


def load_with_lines(text: str) -> tuple[Any, LineMap]:
    """Parse one YAML document; raises yaml.YAMLError with a mark on bad syntax. A text parsed before comes from
    the user's cache (collectors/parsed_cache.py): playbooks are parsed at every start."""
    data, lines = remembered("yaml-with-lines", text, _parse)
    return data, LineMap(lines)


def _parse(text: str) -> tuple[Any, dict[Path_, int]]:
    loader = yaml_loader()(text)
    try:  # one parse: the node tree gives the lines, and the same tree is turned into data
        node = loader.get_single_node()
        lines = LineMap()
        if node is not None:
            _walk(node, (), lines)
        return (None if node is None else loader.construct_document(node)), lines._lines
    finally:
        loader.dispose()


def _walk(node: yaml.Node, path: Path_, lines: LineMap) -> None:
    import yaml  # loaded already: the text is being parsed

    lines.record(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark.line)
            lines.record((*path, key), key_node.start_mark.line + 1)
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)
