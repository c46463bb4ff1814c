"""Facts read from NCCL debug output, PyTorch distributed errors and rank env."""

from collectors.vocab.spec import FactSpec

FACTS: list[FactSpec] = [
    FactSpec("nccl.version", "str", "NCCL version in the log", example="2.21.5"),
    FactSpec("nccl.socket_ifname", "str", "NCCL_SOCKET_IFNAME in effect", example="eth0"),
    FactSpec("nccl.ib_hca", "str", "NCCL_IB_HCA in effect", example="mlx5"),
    FactSpec("nccl.transports", "list[str]", "network transports NCCL chose: IB, Socket", "union", "Socket"),
    FactSpec("nccl.interfaces", "list[str]", "interfaces NCCL bound to", "union", "eth0"),
    FactSpec("nccl.errors", "list[str]",
             "normalised bootstrap/socket errors: connection-refused, no-route, timeout, address-family, "
             "unresolvable, connection-reset, connection-aborted, no-interface, store-unreachable (torchrun's agent "
             "could not reach its rendezvous store, C10d or etcd); loopback-peer beside one of them when "
             "the failed connection was to a loopback address", "union", "connection-refused"),
    FactSpec("nccl.ib_errors", "list[str]",
             "IB work-completion failures as status names, async port errors (port-error), and failed verbs calls "
             "(ibv-create-qp-failed)", "union",
             "transport-retry-exceeded"),
    FactSpec("nccl.shm_errors", "list[str]",
             "failures of NCCL's shared-memory segments under /dev/shm: no-space (the tmpfs is full or too small: "
             "failed to extend, posix_fallocate, ENOSPC), permission-denied, attach-failed (a peer's segment is "
             "missing), create-failed", "union", "no-space"),
    FactSpec("nccl.ib_device_missing", "bool", "NCCL found no usable IB/RDMA device (NET/IB : No device found)",
             "any"),
    FactSpec("nccl.duplicate_gpu", "bool", "NCCL reported Duplicate GPU detected", "any"),
    FactSpec("nccl.watchdog_timeout", "bool", "the PyTorch NCCL watchdog timed out a collective", "any"),
    FactSpec("nccl.watchdog_abort", "bool",
             "PyTorch's ProcessGroupNCCL watchdog took the process down: some NCCL operations failed or timed out "
             "(TORCH_NCCL_ASYNC_ERROR_HANDLING), or its heartbeat monitor timed out", "any"),
    FactSpec("nccl.timeout_op", "str", "collective that timed out", example="ALLREDUCE"),
    FactSpec("nccl.last_completed_seq", "int",
             "the highest `last completed NCCL work` sequence number a rank reported; above 0, every rank of "
             "that process group was up and connected before the hang", "max", "20417"),
    FactSpec("nccl.wait_seq", "int", "the sequence number of the collective most ranks wait on", example="20418"),
    FactSpec("nccl.waiting_ranks", "list[int]", "the ranks waiting on nccl.wait_seq (enqueued it, not completed)",
             "union", "[0, 1, 2]"),
    FactSpec("nccl.suspect_ranks", "list[int]",
             "ranks that never enqueued (or completed fewer of) the collective the others wait on, or printed "
             "nothing while all the others wait on it; empty when every rank of the job waits on the same one",
             "union", "[3]"),
    FactSpec("nccl.suspect_hosts", "list[str]", "the hosts or nodes of nccl.suspect_ranks", "union",
             "gpu-node-7"),
    FactSpec("nccl.suspect_pods", "list[str]",
             "the pods of nccl.suspect_ranks, from the `[pod/<pod>/<container>]` prefix of each rank's log lines",
             "union", "train-worker-3"),
    FactSpec("nccl.silent_ranks", "list[int]",
             "ranks of the job (0..N-1 from NCCL's nRanks, WORLD_SIZE, or numbers missing below the highest rank "
             "that printed) whose logs show no progress line; suspects only when every other rank waits",
             "union", "[5]"),
    FactSpec("nccl.collectives_differ", "bool",
             "the ranks that wait on a collective wait on different ones (sequence number, op type or sizes); "
             "false when every waiting rank waits on the same collective. A rank that never enqueued it does not "
             "count: that is a straggler", "any"),
    FactSpec("nccl.result_codes", "list[str]",
             "NCCL result codes a call returned, from PyTorch's `NCCL error in: ...` / `NCCL error: ...` messages, "
             "their `ncclSystemError: ...` detail lines and NCCL's own `file.cc:NNN -> N` trace lines: "
             "unhandled-cuda-error (1), system-error (2), internal-error (3), invalid-argument (4), "
             "invalid-usage (5), remote-error (6), in-progress (7), timeout (8); unknown when c10d's `NCCL error in: "
             "<file>:<line>, ` shows a call failed but its text names no code", "union", "system-error"),
    FactSpec("dist.stall_warning", "bool",
             "Horovod's stall inspector warned that tensors some ranks submitted have waited past "
             "HOROVOD_STALL_CHECK_TIME_SECONDS for the other ranks to submit them", "any"),
    FactSpec("nccl.collective_mismatch", "bool", "ranks disagree on the collective sequence", "any"),
    FactSpec("nccl.waiting_for_join", "bool", "ranks are waiting for all processes to join", "any"),
    FactSpec("nccl.init_complete", "bool", "NCCL communicator init completed", "any"),
    FactSpec("dist.master_addrs", "list[str]", "distinct MASTER_ADDR values across ranks", "union"),
    FactSpec("dist.world_sizes", "list[int]", "distinct WORLD_SIZE values across ranks", "union"),
    FactSpec("dist.ranks", "list[int]",
             "RANK values seen; duplicates within one artifact are kept, so two pods claiming one rank show",
             "union"),
    FactSpec("dist.joined_count", "int",
             "ranks that had joined the rendezvous store when a rank reported waiting or timing out", "min"),
    FactSpec("dist.launcher_errors", "list[str]",
             "what an MPI launcher (Open MPI's mpirun/ORTE, PRRTE, MPICH's Hydra) said went wrong with the job's "
             "daemons or ranks: daemon-lost (lost communication with a remote daemon), daemon-launch-failed (could "
             "not start the daemons, or one died before reporting back), daemon-unreachable (could not connect to a "
             "daemon or back to the launcher), rank-killed (a rank's process exited on a signal)", "union",
             "daemon-lost"),
    FactSpec("dist.lost_nodes", "list[str]",
             "the nodes (hosts or worker pods) an MPI launcher names as where a daemon was lost or a rank died",
             "union", "mpijob-worker-19"),
    FactSpec("dist.env_missing", "list[str]",
             "MASTER_ADDR/MASTER_PORT absent from a rank's env (RANK and WORLD_SIZE may come from the launcher)",
             "union",
             "MASTER_ADDR"),
    FactSpec("gpu.visible_count", "int", "GPUs the process can see", "min"),
]
