"""NCCL debug output and PyTorch distributed errors -> nccl.*, dist.* and gpu.visible_count facts."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind
from collectors.parsers.gpu import nccl
from tests.unit.parsers.cited_fixtures import Row, row_set

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "nccl"



def read(text: str, command: str = "") -> set[Row]:
    result = nccl.parse(Artifact(id="n1", kind=ArtifactKind.NCCL_LOG, content=text, command=command))
    assert result.problems == []
    return row_set(result)


# A healthy init; test_container_log.py reads the same log as a training pod's.
HEALTHY_INIT: set[Row] = {
    ("nccl.interfaces", ("eth0",), 1, 1),
    ("nccl.version", "2.21.5", 4, 4),
    ("nccl.ib_hca", "mlx5", 5, 5),
    ("nccl.interfaces", ("mlx5_0",), 6, 6),
    ("nccl.interfaces", ("mlx5_1",), 6, 6),
    ("nccl.transports", ("IB",), 8, 8),
    ("nccl.init_complete", True, 24, 24),
}

FIXTURE_CASES: list[tuple[str, set[Row]]] = [
    ("healthy_init.log", HEALTHY_INIT),
    ("wrong_ifname.log", {
        ("nccl.socket_ifname", "eth0", 1, 1),
        ("nccl.interfaces", ("eth0",), 2, 2),
        ("nccl.version", "2.21.5", 5, 5),
        ("nccl.ib_device_missing", True, 6, 6),
        ("nccl.transports", ("Socket",), 10, 10),
        ("nccl.errors", ("no-route",), 12, 12),
        ("nccl.errors", ("timeout",), 15, 15),
        ("nccl.result_codes", ("system-error",), 13, 13),  # `misc/socket.cc:565 -> 2`: ncclSystemError
        ("nccl.init_complete", False, 5, 5),  # init started (version line) and never completed
    }),
    ("ib_retry_exceeded.log", {
        ("nccl.interfaces", ("ib0",), 1, 1),
        ("nccl.ib_hca", "mlx5_0,mlx5_1,mlx5_2,mlx5_3", 2, 2),
        ("nccl.interfaces", ("mlx5_0",), 3, 3),
        ("nccl.interfaces", ("mlx5_1",), 3, 3),
        ("nccl.interfaces", ("mlx5_2",), 3, 3),
        ("nccl.interfaces", ("mlx5_3",), 3, 3),
        ("nccl.transports", ("IB",), 4, 4),
        ("nccl.init_complete", True, 5, 5),
        ("nccl.ib_errors", ("transport-retry-exceeded",), 7, 7),
        ("nccl.result_codes", ("remote-error",), 8, 8),  # `transport/net.cc:1298 -> 6`: ncclRemoteError
        ("nccl.ib_errors", ("work-request-flushed",), 11, 11),
        ("nccl.ib_errors", ("port-error",), 12, 12),
        ("nccl.version", "2.21.5", 13, 13),  # from the PyTorch error: not an init line
    }),
    ("watchdog_timeout.log", {
        ("nccl.watchdog_timeout", True, 3, 3),
        ("nccl.timeout_op", "ALLREDUCE", 3, 3),
        # One rank's view of the wave front: it waits on 4521 after completing 4520 (mid-run, not init).
        ("nccl.last_completed_seq", 4520, 4, 4),
        ("nccl.wait_seq", 4521, 5, 5),
        ("nccl.waiting_ranks", (3,), 5, 5),
        ("nccl.watchdog_abort", True, 6, 6),  # "Some NCCL operations have failed or timed out"
    }),
    ("duplicate_gpu.log", {
        ("gpu.visible_count", 1, 1, 2),
        ("nccl.interfaces", ("eth0",), 4, 4),
        ("nccl.version", "2.21.5", 5, 5),
        ("nccl.duplicate_gpu", True, 7, 7),
        ("nccl.result_codes", ("invalid-usage",), 8, 8),  # `init.cc:871 -> 5`: ncclInvalidUsage
        ("nccl.init_complete", False, 5, 5),
    }),
    ("store_barrier.log", {
        ("nccl.waiting_for_join", True, 2, 2),
        ("dist.world_sizes", (4,), 3, 3),
        ("dist.joined_count", 3, 6, 6),  # the latest report wins
    }),
]


@pytest.mark.parametrize(("name", "expected"), FIXTURE_CASES, ids=[c[0] for c in FIXTURE_CASES])
def test_fixture_logs(name: str, expected: set[Row]) -> None:
    assert read((FIXTURES / name).read_text(encoding="utf-8")) == expected


LINE_CASES: list[tuple[str, set[tuple[str, object]]]] = [
    # IB work completions: new and old NCCL wording, named and unknown statuses
    ("h:1:2 [0] NCCL WARN NET/IB : Got completion with error 12, opcode 0, len 0, vendor err 129",
     {("nccl.ib_errors", ("transport-retry-exceeded",))}),
    ("h:1:2 [0] NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5012> with status=13 opcode=1 len=0 vendor err 0",
     {("nccl.ib_errors", ("rnr-retry-exceeded",))}),
    ("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5012> with error 4, opcode 0",
     {("nccl.ib_errors", ("local-protection",))}),
    ("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5012> with status=10 opcode=0",
     {("nccl.ib_errors", ("remote-access",))}),
    ("h:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.2<5012> with status=99 opcode=0",
     {("nccl.ib_errors", ("status-99",))}),
    ("h:1:2 [0] NCCL WARN NET/IB : Got async event : GID table change", set()),
    # bootstrap and socket errors
    ("h:1:2 [0] NCCL WARN socketStartConnect: Connect to 10.0.0.2<45678> failed : Connection refused",
     {("nccl.errors", ("connection-refused",))}),
    ("h:1:2 [0] NCCL WARN Net : Connect to 10.0.0.2<45678> failed : Network is unreachable",
     {("nccl.errors", ("no-route",))}),
    ("h:1:2 [0] NCCL WARN socketStartConnect: Connect to 172.18.0.2<44801> failed : Software caused connection "
     "abort", {("nccl.errors", ("connection-aborted",))}),
    ("h:1:2 [0] NCCL WARN Bootstrap : no socket interface found", {("nccl.errors", ("no-interface",))}),
    # awslabs/awsome-distributed-ai#192: a peer advertised its loopback address (fixed with NCCL_SOCKET_IFNAME).
    ("10: socketStartConnect: Connect to 127.0.0.1<45069> failed : Software caused connection abort",
     {("nccl.errors", ("connection-aborted",)), ("nccl.errors", ("loopback-peer",))}),
    ("[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family "
     "not supported by protocol).", {("nccl.errors", ("address-family",))}),
    ("[W socket.cpp:697] [c10d] The IPv6 network addresses of (master-0, 29500) cannot be retrieved (gai error: -2 "
     "- Name or service not known).", {("nccl.errors", ("unresolvable",))}),
    ("[W socket.cpp:697] [c10d] The IPv4 network addresses of (master-0, 29500) cannot be retrieved (gai error: "
     "-3 - Temporary failure in name resolution).", {("nccl.errors", ("unresolvable",))}),
    ("[E socket.cpp:957] [c10d] The client socket has timed out after 900s while trying to connect to "
     "(master-0, 29500).", {("nccl.errors", ("timeout",))}),
    ("torch.distributed.DistNetworkError: Connection reset by peer", {("nccl.errors", ("connection-reset",))}),
    # the same words from an unrelated HTTP client are not NCCL's problem
    ("requests.exceptions.ConnectionError: HTTPConnectionPool(host='wandb', port=80): Connection refused", set()),
    # urllib3's NewConnectionError (urllib3/connection.py) for a service named like a store is the app's own call
    ("urllib3.exceptions.NewConnectionError: <urllib3.connection.HTTPConnection object at 0x7f3a2c1d9e50>: Failed to "
     "establish a new connection: [Errno -2] Name or service not known (host='feature-store')", set()),
    ("RuntimeError: TCPStore connect failed: Connection refused", {("nccl.errors", ("connection-refused",))}),
    ("$ kubectl logs trainer-0 | grep 'Connection refused'", set()),
    # settings and transports
    ("NCCL_SOCKET_IFNAME=net1", {("nccl.socket_ifname", "net1")}),
    ("export NCCL_IB_HCA=mlx5_0:1", {("nccl.ib_hca", "mlx5_0:1")}),
    ("h:1:2 [0] NCCL INFO NCCL_SOCKET_IFNAME set to ^docker0,lo", {("nccl.socket_ifname", "^docker0,lo")}),
    ("h:1:2 [0] NCCL INFO Using network IBext_v8", {("nccl.transports", ("IB",))}),
    ("h:1:2 [0] NCCL INFO Using network AWS Libfabric", {("nccl.transports", ("AWS Libfabric",))}),
    ("h:1:2 [0] NCCL INFO Channel 00/0 : 1[1] -> 2[0] [send] via NET/Socket/0",
     {("nccl.transports", ("Socket",))}),
    ("h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.244.1.5<0> [1]net1:192.168.1.5<0>",
     {("nccl.interfaces", ("eth0",)), ("nccl.interfaces", ("net1",))}),
    ("h:1:2 [0] NCCL INFO Bootstrap: Using eth0:fe80::1%eth0<0>", {("nccl.interfaces", ("eth0",))}),
    # collectives, joins, GPUs, shared memory
    ("RuntimeError: Detected mismatch between collectives on ranks. Rank 0 is running collective: "
     "CollectiveFingerPrint(SequenceNumber=23, OpType=ALLREDUCE), but Rank 1 is running collective: "
     "CollectiveFingerPrint(SequenceNumber=23, OpType=BROADCAST).", {("nccl.collective_mismatch", True)}),
    ("RuntimeError: Timed out initializing process group in store based barrier on rank: 2, for key: "
     "store_based_barrier_key:1 (world_size=4, worker_count=3, timeout=0:30:00)",
     {("nccl.waiting_for_join", True), ("dist.world_sizes", (4,)), ("dist.joined_count", 3)}),
    ("torch.distributed.elastic.rendezvous.api.RendezvousTimeoutError", {("nccl.waiting_for_join", True)}),
    ("torch.cuda.device_count() = 8", {("gpu.visible_count", 8)}),
    ("RuntimeError: No CUDA GPUs are available", {("gpu.visible_count", 0)}),
    ("h:1:2 [0] NCCL WARN Error: failed to extend /dev/shm/nccl-03v824 to 9637892 bytes",
     {("app.shm_exhausted", True), ("nccl.shm_errors", ("no-space",))}),
    ("h:1:2 [0] NCCL INFO NCCL version 2.18.5+cuda12.2",
     {("nccl.version", "2.18.5"), ("nccl.init_complete", False)}),
]


@pytest.mark.parametrize(("line", "expected"), LINE_CASES)
def test_single_lines(line: str, expected: set[tuple[str, object]]) -> None:
    assert {(name, value) for name, value, _, _ in read(line)} == expected


# NCCL's shared-memory failures, verbatim from public threads: (source, lines, nccl.shm_errors expected).
SHM_CASES: list[tuple[str, str, set[str]]] = [
    ("https://github.com/NVIDIA/nccl/issues/525",
     "[3] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n"
     "[3] NCCL INFO include/shm.h:41 -> 2\n"
     "[3] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "nccl-shm-recv-1462445a6f01cbfc-1-2-3 (size 9637888)\n",
     {"no-space"}),
    ("https://github.com/NVIDIA/nccl-tests/issues/166",
     "ubuntu:9621:9691 [6] misc/shmutils.cc:71 NCCL WARN Error: failed to extend /dev/shm/nccl-fjwOOB to 5967876 "
     "bytes\n\nubuntu:9621:9691 [6] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-fjwOOB (size 5967872)\n",
     {"no-space"}),
    ("https://github.com/NVIDIA/nccl/issues/328",
     "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
     "node08:27106:27302 [0] NCCL INFO include/shm.h:41 -> 2\n"
     "node08:27106:27302 [0] include/shm.h:48 NCCL WARN Error while creating shared memory segment "
     "nccl-shm-recv-b7948f403864987a-0-3-0 (size 4460544)\n",
     {"permission-denied"}),
    ("https://github.com/NVIDIA/nccl/issues/1589",
     "g148:14937:69361 [0] misc/shmutils.cc:93 NCCL WARN Call to open failed: No such file or directory\n\n"
     "g148:14937:69361 [0] misc/shmutils.cc:129 NCCL WARN Error while attaching to shared memory segment "
     "/dev/shm/nccl-glnlGK (size 14156128), error: No such file or directory (2)\n",
     {"attach-failed"}),
    ("https://github.com/NVIDIA/nccl-tests/issues/166 (the creating line alone, its cause cut off)",
     "ubuntu:9621:9688 [3] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment "
     "/dev/shm/nccl-KWfVyt (size 5967872)\n",
     {"create-failed"}),
]


@pytest.mark.parametrize(("source", "text", "expected"), SHM_CASES, ids=[c[0] for c in SHM_CASES])
def test_shared_memory_failures(source: str, text: str, expected: set[str]) -> None:
    got = {value for name, value, _, _ in read(text) if name == "nccl.shm_errors"}
    assert got == {(v,) for v in expected}, source


def test_no_space_elsewhere_is_not_an_nccl_shm_failure() -> None:
    assert not {n for n, *_ in read("OSError: [Errno 28] No space left on device: '/data/ckpt'")} & {"nccl.shm_errors"}


def test_watchdog_details_on_the_next_line() -> None:
    text = "[rank3] Watchdog caught collective operation timeout:\nWorkNCCL(SeqNum=64214, OpType=ALLGATHER, " \
           "NumelIn=1, NumelOut=32, Timeout(ms)=600000)\n"
    assert read(text) == {("nccl.watchdog_timeout", True, 1, 1), ("nccl.timeout_op", "ALLGATHER", 1, 2)}


def test_device_count_probe_output_named_by_the_command() -> None:
    command = 'kubectl exec trainer-2 -- python -c "import torch; print(torch.cuda.device_count())"'
    assert read("4\n", command=command) == {("gpu.visible_count", 4, 1, 1)}


def test_sniff() -> None:
    assert nccl.sniff((FIXTURES / "healthy_init.log").read_text(encoding="utf-8")) >= 85
    assert nccl.sniff((FIXTURES / "watchdog_timeout.log").read_text(encoding="utf-8")) >= 60
    assert nccl.sniff("Nov 22 06:01:02 gpu-node-2 kernel: NVRM: Xid (PCI:0000:2b:00): 79") == 0
    assert nccl.sniff("") == 0


def test_a_client_tool_refused_is_not_a_rendezvous_error() -> None:
    """telnet's and curl's refusals name no rendezvous: they are clients (network.yaml reads them), while NCCL's own
    capitalised "Connect to <addr> failed" stays an NCCL socket error."""
    # https://github.com/amaizfinance/redis-operator/issues/2
    telnet = "Trying 10.101.33.59...\ntelnet: Unable to connect to remote host: Connection refused\n"
    assert not {row for row in read(telnet) if row[0] == "nccl.errors"}
    curl = "curl: (7) Failed to connect to 10.96.0.10 port 80: Connection refused\n"  # curl 7.30-7.87's wording
    assert not {row for row in read(curl) if row[0] == "nccl.errors"}
    nccl_line = "h:1:2 [0] NCCL WARN socketStartConnect: Connect to 10.0.0.2<45678> failed : Connection refused"
    assert ("nccl.errors", ("connection-refused",), 1, 1) in read(nccl_line)


def _init_start(host: str, pid: int, rank: int, bus: str, comm: str = "0xaa9becea043c4e6c") -> str:
    """NCCL's Init START line (init.cc, 2.12-2.27) rendered with sample values, behind its log prefix."""
    return (f"{host}:{pid}:{pid} [0] NCCL INFO ncclCommInitRank comm 0x7a12257c8780 rank {rank} nranks 2 cudaDev 0 "
            f"nvmlDev 0 busId {bus} commId {comm} - Init START")


def _flags(lines: list[str]) -> dict[str, object]:
    result = nccl.parse(Artifact(id="a", kind=ArtifactKind.NCCL_LOG, content="\n".join(lines)))
    return {f.name: f.value for f in result.facts}


def test_two_ranks_of_one_communicator_on_one_gpu_of_one_host_are_a_duplicate_gpu() -> None:
    facts = _flags([_init_start("worker-0", 42, 0, "100000"), _init_start("worker-0", 43, 1, "100000")])
    assert facts.get("nccl.duplicate_gpu") is True


@pytest.mark.parametrize("lines", [
    # Two machines: each one's GPU at the same PCI address is the usual case, not a duplicate.
    [_init_start("node-a", 42, 0, "100000"), _init_start("node-b", 42, 1, "100000")],
    # One machine, two GPUs.
    [_init_start("worker-0", 42, 0, "100000"), _init_start("worker-0", 43, 1, "200000")],
    # One GPU, two communicators (another job's, or a second group of the same job).
    [_init_start("worker-0", 42, 0, "100000"), _init_start("worker-0", 43, 1, "100000", comm="0x1234")],
    # One rank's line printed twice.
    [_init_start("worker-0", 42, 0, "100000"), _init_start("worker-0", 42, 0, "100000")],
])
def test_init_lines_that_are_not_one_gpu_shared_by_two_ranks_are_no_duplicate(lines: list[str]) -> None:
    assert "nccl.duplicate_gpu" not in _flags(lines)
