"""Load YAML while remembering the line of every key, so errors can say file:line."""

from __future__ import annotations

from typing import Any

import yaml

from collectors.yaml_safe import LOADER

Path_ = tuple[str | int, ...]
_LOADER = LOADER


class LineMap:
    """Maps a path of keys and indexes (as pydantic reports it) to a 1-based line."""

    def __init__(self) -> None:
        self._lines: dict[Path_, int] = {}

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
    """Parse one YAML document; raises yaml.YAMLError with a mark on bad syntax."""
    loader = _LOADER(text)
    try:  # one parse: the node tree gives the lines, and the same tree is turned into data
        node = loader.get_single_node()
        lines = LineMap()
        if node is None:
            return None, lines
        _walk(node, (), lines)
        return loader.construct_document(node), lines
    finally:
        loader.dispose()


def _walk(node: yaml.Node, path: Path_, lines: LineMap) -> None:
    lines.record(path, node.start_mark.line + 1)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark.line)
            lines.record((*path, key), key_node.start_mark.line + 1)
            _walk(value_node, (*path, key), lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, (*path, index), lines)
