"""A pretty-printed JSON record (one member a line, as a log viewer or jq copies a structured log entry) is read as
the one line its program wrote (collectors/parsers/text/signals.py json_records): a proxy's message and the error
field members below it are read together; a joined record says nothing its members do not."""

from __future__ import annotations

import pytest

from collectors.parsers.text.signals import json_records
from tests.unit.parsers.paste_facts import joined_facts as _facts


def test_a_pretty_printed_record_is_joined_and_a_nested_object_ends_it() -> None:
    lines = ["{", '  "level": "error",', '  "msg": "error reverse proxying request; sockstat: x",',
             '  "error": "unexpected EOF",', '  "httpRequest": {', '    "status": 502', "  }", "}"]
    assert json_records(lines) == [
        (2, 4, '{"level": "error", "msg": "error reverse proxying request; sockstat: x", "error": "unexpected EOF"}')]


@pytest.mark.parametrize("text", [
    # The error field of another program's record beside no proxy message: nothing is read from the join.
    '{\n  "level": "error",\n  "msg": "failed to read config",\n  "error": "unexpected EOF"\n}\n',
    # A record whose members are each healthy.
    '{\n  "severity": "INFO",\n  "message": "Starting queue-proxy",\n  "commit": "d96dabb"\n}\n',
])
def test_a_joined_record_names_nothing_its_members_do_not_say(text: str) -> None:
    facts = _facts(text)
    assert "http.failure_kinds" not in facts and "evidence.symptoms" not in facts
