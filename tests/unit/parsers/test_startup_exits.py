"""A process that exits at start-up on an unreachable dependency (collectors/catalogs/startup_exits.yaml): only the
record it exits after counts. Templates and real pastes are read in test_network_catalog.py; here, the lines near
the class that must not read as a fatal exit."""

from __future__ import annotations

import pytest

from tests.unit.parsers.paste_facts import joined_facts as _facts

NOT_FATAL = [
    # The same dial at level=error: a client retrying, the process lives on.
    'time="2021-06-05T04:06:16.542Z" level=error msg="dial tcp 10.103.141.57:5432: connect: connection refused"',
    # klog's E line (an error), not its F line (fatal).
    "E1218 10:39:50.481923       1 mysql.go:62] Ping to Katib db failed: dial tcp 10.233.28.55:3306: connect: "
    "connection refused",
    # A PostgreSQL server's FATAL is a session it refused, not a process ending.
    "FATAL:  password authentication failed for user \"postgres\"",
    # The node's daemons dial unix sockets: their fatal records are the node's, not a container's.
    'time="2023-01-10T10:00:00Z" level=fatal msg="failed to start daemon: dial unix /run/containerd/containerd.sock: '
    'connect: connection refused"',
    "F0110 10:00:00.000000    1234 server.go:269] failed to run Kubelet: unable to determine runtime API version: "
    "rpc error: code = Unavailable desc = connection error: desc = \"transport: Error while dialing dial unix "
    "/var/run/containerd/containerd.sock: connect: connection refused\"",
    # A fatal record about something else (a config file) is no dependency.
    'time="2021-06-05T04:06:16.542Z" level=fatal msg="open /etc/app/config.yaml: no such file or directory"',
    # A panic that was recovered and logged.
    "recovered from panic: dial tcp 10.0.0.5:6379: connect: connection refused",
]


@pytest.mark.parametrize("line", NOT_FATAL)
def test_a_line_near_the_class_is_no_fatal_dependency(line: str) -> None:
    assert "startup.dependency_fatal" not in _facts(line)


def test_the_fatal_record_and_the_dial_are_both_read() -> None:
    # Argo's server at start-up (aki0000/k8s-myplayground#32, tests/realworld): the fatal record runs crash-loop;
    # the dial's own reading still names the target.
    got = _facts('time="2021-06-05T04:06:16.542Z" level=fatal msg="dial tcp 10.103.141.57:5432: connect: '
                 'connection refused"')
    assert got["startup.dependency_fatal"] is True
    assert got["client.targets"] == ["10.103.141.57:5432"]


NOT_STORAGE_FATAL = [
    # A write that failed at level=error: the process logs it and goes on (VictoriaMetrics's own retry path).
    "2022-06-17T14:35:03.622Z\terror\tVictoriaMetrics/lib/storage/storage.go:625\tcannot write: "
    "no space left on device",
    # A warning about free space is no exit.
    'time="2022-06-17T14:35:03Z" level=warning msg="write /data/wal: no space left on device"',
    # The node's container runtime on a full root disk: the node's disk, not the container's volume.
    'time="2023-01-10T10:00:00Z" level=fatal msg="Error starting daemon: mkdir /var/lib/docker/overlay2: no space '
    'left on device"',
    # A fatal record about something else is no storage failure.
    'time="2021-06-05T04:06:16.542Z" level=fatal msg="open /etc/app/config.yaml: no such file or directory"',
    # A panic that was recovered and logged.
    "recovered from panic: write /data/index.bin: input/output error",
]


@pytest.mark.parametrize("line", NOT_STORAGE_FATAL)
def test_a_line_near_the_class_is_no_storage_fatal(line: str) -> None:
    assert "app.storage_fatal" not in _facts(line)


def test_a_glibc_errno_text_with_a_capital_is_read() -> None:
    # strerror's "Read-only file system" (glibc string/_strerror.c), in a logrus fatal record.
    got = _facts('time="2023-05-02T08:00:00Z" level=fatal msg="open /data/db/LOCK: Read-only file system"')
    assert got["app.storage_fatal"] is True
