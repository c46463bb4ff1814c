"""A process that exits at start-up on an unreachable dependency (collectors/catalogs/startup_exits.yaml): only the
record it exits after counts. Templates and real pastes are read in test_network_catalog.py; here, the
reading of the fatal record itself (the lines near the class that must not read as a fatal exit are in
test_names_nothing.py)."""

from __future__ import annotations

from tests.unit.parsers.paste_facts import FIRST_SIGHT_PASTES as PASTES
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


def test_katib_s_start_up_ping_loop_is_the_exit_it_ends_in() -> None:
    # kubeflow/kubeflow#5468 (tests/realworld): katib-db-manager's ping failures, logged every 5 s with klog.Errorf
    # only inside the start-up loop that gives up after 60 s with klog.Fatalf("Failed to open db connection")
    # (kubeflow/katib pkg/db/v1beta1/common/connection.go, v0.6 to v0.19). Fix round f9.
    got = _facts("E1218 10:39:50.481923       1 mysql.go:62] Ping to Katib db failed: dial tcp 10.233.28.55:3306: "
                 "connect: connection refused")
    assert got["startup.dependency_fatal"] is True
    assert got["client.targets"] == ["10.233.28.55:3306"]


def test_katib_s_ping_loop_read_at_every_version_s_file() -> None:
    # The loop lived in interface.go (v0.6-v0.8), mysql.go (v0.9-v0.14) and connection.go (v0.15-): a refused, a
    # timed-out and an unresolved dial are all the start-up wait (real pastes, first_sight_pastes.yaml).
    for pid in ("katib-696-interface-go-ping-io-timeout", "katib-2425-connection-go-ping-lookup-timeout"):
        assert _facts(PASTES[pid])["startup.dependency_fatal"] is True, pid


def test_katib_s_ping_refused_by_the_server_itself_is_no_unreachable_dependency() -> None:
    # kubeflow/katib#1415: MySQL answered "Host ... is not allowed to connect" (its grant tables), and the fatal
    # timeout after it says nothing of which kind of failure it waited on.
    assert "startup.dependency_fatal" not in _facts(PASTES["katib-1415-ping-host-not-allowed-then-fatal"])
