"""A process that exits at start-up on an unreachable dependency (collectors/catalogs/startup_exits.yaml): only the
record it exits after counts. Templates and real pastes are read in test_network_catalog.py; here, the
reading of the fatal record itself (the lines near the class that must not read as a fatal exit are in
test_names_nothing.py)."""

from __future__ import annotations

from tests.unit.parsers.paste_facts import joined_facts as _facts


def test_the_fatal_record_and_the_dial_are_both_read() -> None:
    # Argo's server at start-up (aki0000/k8s-myplayground#32, tests/realworld): the fatal record runs crash-loop;
    # the dial's own reading still names the target.
    got = _facts('time="2021-06-05T04:06:16.542Z" level=fatal msg="dial tcp 10.103.141.57:5432: connect: '
                 'connection refused"')
    assert got["startup.dependency_fatal"] is True
    assert got["client.targets"] == ["10.103.141.57:5432"]


def test_a_glibc_errno_text_with_a_capital_is_read() -> None:
    # strerror's "Read-only file system" (glibc string/_strerror.c), in a logrus fatal record.
    got = _facts('time="2023-05-02T08:00:00Z" level=fatal msg="open /data/db/LOCK: Read-only file system"')
    assert got["app.storage_fatal"] is True
