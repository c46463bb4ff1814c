"""NCCL_DEBUG=INFO/WARN output and PyTorch distributed errors to facts.

Lines look like `host:pid:tid [rank] NCCL INFO ...`, often behind a `kubectl logs --prefix` or timestamp
prefix, so every check searches inside the line instead of anchoring at its start. The needles are found
in one linear pass over the whole text (collectors/parsers/text/needles.py) and regexes run only on the lines
holding one, so a 200,000-line log parses in well under a second.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from collectors.catalogs.nccl_catalog import result_codes
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.gpu import nccl_ranks
from collectors.parsers.sink import FactSink
from collectors.parsers.text.needles import find_needles
from collectors.sniffers.nccl import claims_line, sniff
from collectors.text import normalise

# ibverbs work-completion status codes (enum ibv_wc_status), as NCCL prints them in
# "NET/IB : Got completion from peer ... with status=12" / "with error 12".
IBV_WC_STATUS: dict[int, str] = {
    1: "local-length",
    2: "local-qp-operation",
    3: "local-eec-operation",
    4: "local-protection",
    5: "work-request-flushed",
    6: "memory-window-bind",
    7: "bad-response",
    8: "local-access",
    9: "remote-invalid-request",
    10: "remote-access",
    11: "remote-operation",
    12: "transport-retry-exceeded",
    13: "rnr-retry-exceeded",
    14: "local-rdd-violation",
    15: "remote-invalid-rd-request",
    16: "remote-aborted",
    17: "invalid-eecn",
    18: "invalid-eec-state",
    19: "fatal",
    20: "response-timeout",
    21: "general",
    22: "tag-matching",
    23: "tag-matching-rendezvous-incomplete",
}

# Socket and resolver failures (strerror / gai_strerror text) -> normalised nccl.errors values.
SOCKET_ERRORS: tuple[tuple[str, str], ...] = (
    ("Connection refused", "connection-refused"),
    ("No route to host", "no-route"),
    ("Network is unreachable", "no-route"),
    ("Connection timed out", "timeout"),
    ("has timed out", "timeout"),  # c10d: "The client socket has timed out after 900s while trying to connect"
    ("Address family", "address-family"),  # "... not supported by protocol", "... for hostname not supported"
    ("is neither AF_INET", "address-family"),  # ncclSocketInit given an empty address: the interface has no IP
    ("Name or service not known", "unresolvable"),
    ("Temporary failure in name resolution", "unresolvable"),
    ("nodename nor servname", "unresolvable"),
    ("Connection reset by peer", "connection-reset"),
    ("Connection closed by remote peer", "connection-reset"),  # NCCL's own wording (misc/socket.cc)
    ("Broken pipe", "connection-reset"),
    ("Software caused connection abort", "connection-aborted"),
    ("no socket interface found", "no-interface"),  # bootstrap.cc
    ("no interface found", "no-interface"),  # transport/net_socket.cc
    ("No usable listening interface found", "no-interface"),  # bootstrap.cc, NCCL_COMM_ID given
)
# Resolver failures without a more specific message: only counted when nothing above matched.
_RESOLVER_FALLBACK = ("getaddrinfo", "gai error")
# A socket error only counts on a line about rendezvous or NCCL, not on an app's unrelated HTTP call.
_DIST_CONTEXT = ("NCCL", "nccl", "socket", "Socket", "c10d", "torch.distributed", "Dist",
                 "rendezvous", "Rendezvous", "ootstrap", "gai error", "Connect to", "ProcessGroup", "gloo", "Gloo")
# c10d's store ("TCPStore", "the store"), but not a service whose name ends in it ("feature-store", "kv_store").
_STORE = re.compile(r"(?:TCP|File|Hash|Prefix)Store|(?<![\w-])[Ss]tore\b")
# NCCL's own "Connect to <addr> failed" is capitalised; curl's "Failed to connect to" and telnet's "Unable to connect
# to remote host" are clients (collectors/catalogs/network.yaml reads them as client.errors), not rendezvous.
# A resolver or socket error at the bottom of a traceback through the rendezvous is the rendezvous's.
_CONTEXT_LINES = 12
_TRACEBACK_CONTEXT = ("init_process_group", "rendezvous", "TCPStore", "torch/distributed", "c10d")
_SOCKET_HINTS = tuple(needle for needle, _ in SOCKET_ERRORS) + _RESOLVER_FALLBACK
# "socketStartConnect: Connect to 127.0.0.1<45069> failed", "Connect to [::1]:29500 failed"
_LOOPBACK_PEER = re.compile(r"[Cc]onnect to \[?(?:127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)\]?[<:]")

_VERSION = re.compile(r"NCCL version (\d+\.\d+\.\d+)")
_ENV_SET = re.compile(r"\b(NCCL_SOCKET_IFNAME|NCCL_IB_HCA) set (?:by environment )?to (\S+)")
_ENV_DUMP = re.compile(r"(?:^|[\s'\"])(?:export\s+)?(NCCL_SOCKET_IFNAME|NCCL_IB_HCA)=([^\s'\"]+)")
_BOOTSTRAP = re.compile(r"Bootstrap ?: Using (?:\[\d+\])?([^:\s\[]+):")
_NET_USING = re.compile(r"NET/(?:Socket|IB) ?: Using (.*)")
_LISTED_IF = re.compile(r"\[\d+\]([^:\s\[]+):")
_OOB_IF = re.compile(r"OOB ([^:\s]+):")
_NETWORK = re.compile(r"Using network (\S+(?: Libfabric)?)")
_CHANNEL_NET = re.compile(r"via NET/(\w+)")
# `with error 12,` (up to 2.20), `with status=12 ` (2.21-2.28), `with status=IBV_WC_RETRY_EXC_ERR(12) ` (later).
_IB_COMPLETION = re.compile(r"Got completion (?:from peer \S+ )?with (?:status=(?:IBV_WC_\w{1,40}\()?|error )(\d+)")
_ASYNC_EVENT = re.compile(r"Got async event : (.+?)\s*$")
_OP_TYPE = re.compile(r"OpType=(\w+)")
_BARRIER = re.compile(r"world_size=(\d+), (?:num_workers_joined|worker_count)=(\d+)")
_CLIENTS_JOINED = re.compile(r"(\d+)/(\d+) clients joined")
_COUNT_INLINE = re.compile(r"device_count\(\)\)?\s*(?:=|:|->|is)?\s*(\d+)\s*$")
_BARE_INT = re.compile(r"^\s*(\d{1,3})\s*$")
# A pasted shell command that greps for these strings is not evidence of them.
_COMMAND = re.compile(r"^\s*(?:[$#>]\s|sudo\s|e?grep\s)|\|\s*(?:e?grep|rg)\s")

Handler = Callable[["Scan", str, int], None]

_WAITING = ("Waiting for all processes to join", "Waiting in store based barrier",
            "Timed out initializing process group in store based barrier", "clients joined",
            "waiting for clients", "RendezvousTimeoutError")
_MISMATCH = ("Detected mismatch between collectives", "Collectives differ in the following aspects")
# The last two: a rank told through the TCPStore that another rank's watchdog timed out (PyTorch 2.4+).
_WATCHDOG = ("Watchdog caught collective operation timeout", "Timeout at NCCL work",
             "dump signal due to a collective timeout", "Observed flight recorder dump signal from another rank")
# The watchdog taking the process down after a failed or timed-out collective, or after its own heartbeat stopped.
_ABORT = ("Some NCCL operations have failed or timed out", "we are taking the entire process down",
          "Heartbeat monitor timed out", "watchdog got stuck for")
# torchrun's agent could not reach the rendezvous store (the C10d TCPStore on --rdzv_endpoint, or etcd): the
# nodes never meet. torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py and etcd_rendezvous_backend.py
# (1.9-2.x) raise RendezvousConnectionError with these texts; the inner exception, when pasted, names the socket
# error (read by _socket_error).
_STORE_UNREACHABLE = ("RendezvousConnectionError", "The connection to the C10d store has failed",
                      "The connection to etcd has failed. See inner")
# c10d's store client timing out on a receive: SYSCHECK's "Socket Timeout" (pytorch/pytorch torch/lib/c10d/Utils.hpp
# 1.0-1.7, torch/csrc/distributed/c10d/Utils.hpp 1.8-2.x), from a store get or wait on a key another rank never set;
# ProcessGroupNCCL wraps it ("store->get('0') got error: Socket Timeout", 1.13-2.x). The words are common, so only
# beside the store or c10d, or under a traceback through torch.distributed.
_STORE_TIMEOUT = ("Socket Timeout",)
_NO_GPU = ("No CUDA GPUs are available", "Found no NVIDIA driver on your system")
# fix round f7: NCCL's own wordings for a shared-memory segment it cannot make (src/include/shm.h 2.4-2.11,
# src/misc/shmutils.cc 2.12-2.2x ncclShmOpen, src/transport/net.cc netCreateShm): "Error while creating/attaching to
# shared memory segment %s (size %d)", "Error: failed to create shared memory file %p", "Error: could not create
# shared memory in /dev/shm", "Error: failed to extend %s to %d bytes".
_SHM = ("failed to extend /dev/shm", "Error while creating shared memory segment", "No space left on device",
        "Error while attaching to shared memory segment", "Call to shm_open failed", "Call to posix_fallocate failed",
        "failed to create shared memory file", "could not create shared memory in /dev/shm")
# The segment's name is NCCL's mkstemp template "/dev/shm/nccl-XXXXXX" (shmutils.cc, net.cc; 2.12-2.2x), so a WARN line
# cut before its "NCCL WARN" prefix (a Ray worker's "(Runner pid=N) Error while creating shared memory segment
# /dev/shm/nccl-UmqSM9 ...") is still NCCL's.
_NCCL_SEGMENT = "/dev/shm/nccl-"


@dataclass
class Scan:
    """First sightings while reading: scalar facts once, list facts once per distinct value."""

    lines: list[str]  # the whole artifact, so a handler can read a value printed on the next lines
    scalars: dict[str, tuple[object, int, int]] = field(default_factory=dict)
    items: dict[str, dict[object, int]] = field(default_factory=dict)
    init_started: int = 0
    # (host, commId, busId) -> {rank: line} from the Init START lines, to see two ranks of one communicator on one GPU
    inits: dict[tuple[str, str, str], dict[str, int]] = field(default_factory=dict)
    joined: tuple[int, int] | None = None  # (ranks joined, line), the latest report wins

    def following(self, n: int, count: int = 3) -> Iterable[tuple[int, str]]:
        """The `count` lines after 1-based line n, with their numbers."""
        return zip(range(n + 1, n + 1 + count), self.lines[n: n + count], strict=False)

    def first(self, name: str, value: object, line: int, end: int | None = None) -> None:
        if name not in self.scalars:
            self.scalars[name] = (value, line, line if end is None else end)

    def item(self, name: str, value: object, line: int) -> None:
        self.items.setdefault(name, {}).setdefault(value, line)


# ---- per-line handlers: each runs only when its needle is in the line -----------------------------------


def _version(scan: Scan, line: str, n: int) -> None:
    match = _VERSION.search(line)
    if match:
        scan.first("nccl.version", match.group(1), n)
        if "NCCL INFO" in line:  # PyTorch error messages repeat the version long after init
            scan.init_started = scan.init_started or n


def _env(scan: Scan, line: str, n: int) -> None:
    match = _ENV_SET.search(line) or _ENV_DUMP.search(line)
    if match:
        fact = "nccl.socket_ifname" if match.group(1) == "NCCL_SOCKET_IFNAME" else "nccl.ib_hca"
        scan.first(fact, match.group(2), n)


def _bootstrap(scan: Scan, line: str, n: int) -> None:
    boot = _BOOTSTRAP.search(line)
    if boot:
        scan.item("nccl.interfaces", boot.group(1), n)


def _interfaces(scan: Scan, line: str, n: int) -> None:
    net = _NET_USING.search(line)
    if net:
        for name in _LISTED_IF.findall(net.group(1)):
            scan.item("nccl.interfaces", name, n)
        oob = _OOB_IF.search(net.group(1))
        if oob:
            scan.item("nccl.interfaces", oob.group(1), n)


def _transport_name(raw: str) -> str:
    # Plugins report IB as IBext, IBext_v8 ...; the choice that matters is IB versus plain sockets.
    return "IB" if raw.startswith("IB") else raw


def _network(scan: Scan, line: str, n: int) -> None:
    match = _NETWORK.search(line) or _CHANNEL_NET.search(line)
    if match:
        scan.item("nccl.transports", _transport_name(match.group(1).strip()), n)


# ncclIbInit's own words when a verbs call refuses an HCA while it lists them (NVIDIA/nccl src/transport/net_ib.cc,
# 2.4 on): "NET/IB : Unable to open device mlx5_0", "NET/IB : Unable to query device mlx5_0"; the device skipped.
_IB_UNABLE = re.compile(r"NET/IB ?: Unable to (open|query) device\b")


def _ib(scan: Scan, line: str, n: int) -> None:
    if " Using " in line:
        _interfaces(scan, line, n)
    if "o device found" in line:
        scan.first("nccl.ib_device_missing", True, n)
    if (unable := _IB_UNABLE.search(line)) is not None:
        scan.item("nccl.ib_errors", f"ibv-{unable.group(1)}-device-failed", n)
    completion = _IB_COMPLETION.search(line) if "Got completion" in line else None
    if completion:
        code = int(completion.group(1))
        scan.item("nccl.ib_errors", IBV_WC_STATUS.get(code, f"status-{code}"), n)
    event = _ASYNC_EVENT.search(line) if "Got async event" in line else None
    if event and ("error" in event.group(1) or "catastrophic" in event.group(1)):
        scan.item("nccl.ib_errors", event.group(1).strip().lower().replace(" ", "-"), n)


_VERBS_FAILED = re.compile(r"Call to (ibv_\w+) failed")

# ncclResult_t (collectors/catalogs/nccl.yaml): the number NCCL's trace lines print, the enum name PyTorch's
# detail line starts with, and the ncclGetErrorString text of `NCCL error in: file:line, <text>, NCCL version x`.
RESULT_CODES: dict[int, str] = {r.code: r.value for r in result_codes()}
_RESULT_NAMES = {r.enum.removeprefix("nccl"): r.code for r in result_codes()}
# "timeout" alone is too common a word to read as NCCL's text; its enum name and number still count.
_RESULT_TEXTS = {r.text: r.code for r in result_codes() if " " in r.text}
_RESULT_TEXT = re.compile(r"NCCL [Ee]rror(?: (?P<num>\d{1,2}))?(?: in: [^,\n]{1,400}:\d{1,7})?[:,] (?P<text>"
                          + "|".join(re.escape(t) for t in _RESULT_TEXTS) + ")")
_RESULT_NAME = re.compile(r"\bnccl(?P<name>" + "|".join(_RESULT_NAMES) + r"):")
# c10d's C10D_NCCL_CHECK (torch/lib/c10d/NCCLUtils.hpp 1.1-1.8, torch/csrc/distributed/c10d/NCCLUtils.hpp 1.9+)
# throws "NCCL error in: <__FILE__>:<__LINE__>, <ncclGetErrorString>" only when the call returned something other
# than ncclSuccess: the prefix alone says an NCCL call failed, whatever the text after it (retyped, cut, or a text a
# later NCCL added). Its code is then not read: the value is `unknown`.
_C10D_CHECK = re.compile(r"NCCL error in: [^,\n]{1,400}:\d{1,7}, \S")
# NCCLCHECK's trace as a failure climbs the call stack: `NCCL INFO init.cc:864 -> 2`, since 2.27 with the
# function: `NCCL INFO init.cc:1621 (ncclCommInitRankDev) -> 2`, sometimes `... -> 2 [Async thread]`.
_RESULT_TRACE = re.compile(r"(?:^|\s)[\w./+-]{1,200}\.(?:cc|cu|cpp|h|c):\d{1,6}(?: \(\w{1,120}\))? "
                           r"-> (?P<code>\d{1,2})\b")
_RESULT_NEEDLES = ("NCCL error", "NCCL Error", *(f"nccl{name}:" for name in _RESULT_NAMES), " -> ")


def _result_code(scan: Scan, line: str, n: int) -> None:
    """The ncclResult_t a failing NCCL call returned, however it was printed."""
    code: int | None = None
    if (m := _RESULT_TEXT.search(line)) is not None:
        code = int(m.group("num")) if m.group("num") else _RESULT_TEXTS[m.group("text")]
    elif (m := _RESULT_NAME.search(line)) is not None:
        code = _RESULT_NAMES[m.group("name")]
    elif " -> " in line and (m := _RESULT_TRACE.search(line[:1024])) is not None:
        code = int(m.group("code"))
    elif _C10D_CHECK.search(line):
        scan.item("nccl.result_codes", "unknown", n)
    if code in RESULT_CODES:
        scan.item("nccl.result_codes", RESULT_CODES[code], n)


def _verbs_failure(scan: Scan, line: str, n: int) -> None:
    """`WARN Call to ibv_create_qp failed`: a verbs call NCCL needs was refused (often locked-memory limits)."""
    if m := _VERBS_FAILED.search(line):
        scan.item("nccl.ib_errors", m.group(1).replace("_", "-") + "-failed", n)


# What curl, wget and nc print (collectors/catalogs/network.yaml): a person probing a service, not a rank.
_NET_CLIENT = re.compile(r"^\s*(?:curl: \(\d+\)|wget: |nc: |Ncat: )|Failed(?: to)? connect to \S+(?: port \d+|:\d+;)")


def _socket_error(scan: Scan, line: str, n: int) -> None:
    if "NET/IB" in line or "ibv_" in line or _NET_CLIENT.search(line) or not _in_dist_context(scan, line, n):
        return
    found = [error for needle, error in SOCKET_ERRORS if needle in line]
    if not found and any(needle in line for needle in _RESOLVER_FALLBACK):
        found = ["unresolvable"]
    # A failed connection to a loopback address: a peer advertised its loopback interface to the other ranks.
    if found and _LOOPBACK_PEER.search(line):
        found.append("loopback-peer")
    for error in found:
        scan.item("nccl.errors", error, n)


def _store_timeout(scan: Scan, line: str, n: int) -> None:
    above = scan.lines[max(0, n - 1 - _CONTEXT_LINES): n - 1]
    below = scan.lines[n] if n < len(scan.lines) else ""
    if (_STORE.search(line) or "c10d" in line or "c10d" in below
            or any(word in earlier for earlier in above for word in _TRACEBACK_CONTEXT)):
        scan.item("nccl.errors", "timeout", n)


def _in_dist_context(scan: Scan, line: str, n: int) -> bool:
    """The line, or the traceback just above it, is about rendezvous or NCCL (not an app's own HTTP call)."""
    if any(word in line for word in _DIST_CONTEXT) or _STORE.search(line):
        return True
    above = scan.lines[max(0, n - 1 - _CONTEXT_LINES): n - 1]
    return any(word in earlier for earlier in above for word in _TRACEBACK_CONTEXT)


def _watchdog(scan: Scan, line: str, n: int) -> None:
    scan.first("nccl.watchdog_timeout", True, n)
    op = _OP_TYPE.search(line)
    if op:
        scan.first("nccl.timeout_op", op.group(1), n)
        return
    # Some launchers wrap the message: the WorkNCCL(...) details land on the next line.
    for number, text in scan.following(n):
        op = _OP_TYPE.search(text)
        if op:
            scan.first("nccl.timeout_op", op.group(1), n, number)
            return


def _waiting(scan: Scan, line: str, n: int) -> None:
    scan.first("nccl.waiting_for_join", True, n)
    barrier = _BARRIER.search(line)
    clients = _CLIENTS_JOINED.search(line)
    if barrier:
        world, joined = int(barrier.group(1)), int(barrier.group(2))
    elif clients:
        joined, world = int(clients.group(1)), int(clients.group(2))
    else:
        return
    scan.item("dist.world_sizes", world, n)
    scan.joined = (joined, n)


def _store_unreachable(scan: Scan, line: str, n: int) -> None:
    scan.item("nccl.errors", "store-unreachable", n)


def _flag(fact: str) -> Handler:
    def handler(scan: Scan, line: str, n: int) -> None:
        scan.first(fact, True, n)

    return handler


# NCCL's Init START line behind its log prefix "<host>:<pid>:<tid> [<cudaDev>] NCCL INFO" (init.cc, 2.12-2.27:
# "ncclCommInitRank[Config|Dev] comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init
# START"). Without the host and the commId two lines cannot be told to be one communicator on one machine.
_INIT_START = re.compile(r"(?:^|\s)(\S+?):\d+:\d+ \[\d+\] NCCL INFO ncclCommInitRank\w* comm 0x[0-9a-fA-F]+ rank (\d+) "
                         r"nranks \d+ cudaDev \d+ (?:nvmlDev \d+ )?busId ([0-9a-fA-F]+) commId (0x[0-9a-fA-F]+)")


def _init(scan: Scan, line: str, n: int) -> None:
    if "Init COMPLETE" in line:
        scan.first("nccl.init_complete", True, n)
    elif "Init START" in line:
        scan.init_started = scan.init_started or n
        if (m := _INIT_START.search(line)) is not None:
            ranks = scan.inits.setdefault((m.group(1), m.group(4), m.group(3).lower()), {})
            ranks.setdefault(m.group(2), n)
            if len(ranks) == 2:
                # Two ranks of one communicator on one machine's one GPU: what NCCL's own check (init.cc
                # checkDuplicateGpu, "Duplicate GPU detected : rank %d and rank %d both on CUDA device %lx") refuses
                # with invalid usage, a step after this line, so a paste cut here shows it too.
                scan.first("nccl.duplicate_gpu", True, n)


def _shm(scan: Scan, line: str, n: int) -> None:
    if "/dev/shm" in line:
        scan.first("app.shm_exhausted", True, n)
    if ("NCCL" in line or _NCCL_SEGMENT in line) and (kind := _shm_error(line)) is not None:
        scan.item("nccl.shm_errors", kind, n)


def _shm_error(line: str) -> str | None:
    """What went wrong with one of NCCL's shared-memory segments (misc/shmutils.cc, include/shm.h)."""
    if "No space left on device" in line or "failed to extend" in line or "posix_fallocate" in line:
        return "no-space"  # the tmpfs at /dev/shm is full or too small
    if "Permission denied" in line:
        return "permission-denied"
    if "attaching to shared memory segment" in line:
        return "attach-failed"  # a peer's segment is gone (another IPC namespace, or cleaned up)
    if "creating shared memory segment" in line or "create shared memory" in line:
        return "create-failed"
    return None


def _device_count(scan: Scan, line: str, n: int) -> None:
    if any(needle in line for needle in _NO_GPU):
        scan.first("gpu.visible_count", 0, n)
        return
    inline = _COUNT_INLINE.search(line)
    if inline:
        scan.first("gpu.visible_count", int(inline.group(1)), n)
        return
    # The probe command itself (`python -c "...print(torch.cuda.device_count())"`): its output follows.
    for number, text in scan.following(n):
        if text.strip():
            count = _BARE_INT.match(text)
            if count:
                scan.first("gpu.visible_count", int(count.group(1)), n, number)
            return


# (needles, handler): the handler runs when any needle is in the line.
_TRIGGERS: tuple[tuple[tuple[str, ...], Handler], ...] = (
    (("NCCL version",), _version),
    (("NCCL_",), _env),
    (("Bootstrap",), _bootstrap),
    (("NET/Socket",), _interfaces),
    (("Using network", "via NET/"), _network),
    (("NET/IB", "NET/IBP", "Got completion from peer"), _ib),
    (("Call to ibv_",), _verbs_failure),
    (_RESULT_NEEDLES, _result_code),
    (("Cuda failure 'out of memory'",), _flag("cuda.oom")),
    (("Init COMPLETE", "Init START"), _init),
    (("Duplicate GPU detected",), _flag("nccl.duplicate_gpu")),
    # The bootstrap root heard one rank twice (two processes launched with the same rank), or ranks that disagree
    # on the world size: it gives up, and the ranks that did check in wait for the rest, so the job never joins.
    (("ranks has already checked in", "mismatch in rank count from procs"), _flag("nccl.waiting_for_join")),
    (_WATCHDOG, _watchdog),
    (_MISMATCH, _flag("nccl.collective_mismatch")),
    (_ABORT, _flag("nccl.watchdog_abort")),
    (_WAITING, _waiting),
    (_STORE_UNREACHABLE, _store_unreachable),
    (_SHM, _shm),
    ((*_NO_GPU, "device_count"), _device_count),
    (_SOCKET_HINTS, _socket_error),
    (_STORE_TIMEOUT, _store_timeout),
)
_HANDLER_OF: dict[str, Handler] = {needle: handler for needles, handler in _TRIGGERS for needle in needles}
# Needles printed over and over whose handlers read only from the needle onwards (see find_needles).
_SKIP_REPEATS = frozenset({"Bootstrap", "NET/Socket", "NET/IB", "Using network", "via NET/", "Init COMPLETE",
                           *_WATCHDOG})


def _handlers(needles: list[str]) -> Iterable[Handler]:
    if len(needles) == 1:  # the usual case, kept cheap
        return (_HANDLER_OF[needles[0]],)
    return dict.fromkeys(_HANDLER_OF[needle] for needle in needles)


def scan_lines(lines: list[str], command: str = "") -> Scan:
    """Read the lines; `command` is the artifact's command (it may be the device_count probe itself)."""
    scan = Scan(lines)
    found = find_needles(lines, _HANDLER_OF, _SKIP_REPEATS)
    for index in sorted(found):
        line = lines[index]
        if "grep" in line and _COMMAND.search(line):
            continue
        for handler in _handlers(found[index]):
            handler(scan, line, index + 1)
    if "device_count" in command:
        count = next(((n, m) for n, line in enumerate(lines, 1) if (m := _BARE_INT.match(line))), None)
        if count:
            scan.first("gpu.visible_count", int(count[1].group(1)), count[0])
    return scan


def emit(sink: FactSink, scan: Scan) -> None:
    """Turn a scan into facts on the sink."""
    for name, (value, start, end) in scan.scalars.items():
        sink.add(name, value, start, end)
    shm = scan.items.get("nccl.shm_errors", {})
    if len(shm) > 1:  # the "creating segment" line follows the call that failed; the call names the cause
        shm.pop("create-failed", None)
    for name, values in scan.items.items():
        for value, line in values.items():
            sink.add(name, [value], line)
    if scan.joined:
        sink.add("dist.joined_count", scan.joined[0], scan.joined[1])
    sizes = [(size, line) for size, line in scan.items.get("dist.world_sizes", {}).items() if isinstance(size, int)]
    world = sizes[0] if len(sizes) == 1 else None  # two sizes in one log: not one job's
    nccl_ranks.emit(sink, nccl_ranks.read_table(scan.lines, _pod(sink.artifact.subject)), world)
    if scan.init_started and "nccl.init_complete" not in scan.scalars:
        # Init began and the log never reports it finished: the hang is in bootstrap or connection setup.
        sink.add("nccl.init_complete", False, scan.init_started)


def _pod(subject: str) -> str:
    """The pod a log was read from (`pod/<namespace>/<name>`), so each rank in it gets its pod."""
    parts = subject.split("/")
    return parts[-1] if parts[0] == "pod" and len(parts) >= 2 else ""


def parse(artifact: Artifact) -> ParseResult:
    """Facts from NCCL debug output and PyTorch distributed errors."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    emit(sink, scan_lines(lines, artifact.command))
    return sink.done()


PARSER = Parser(kinds=(ArtifactKind.NCCL_LOG,), parse=parse, sniff=sniff, claims_line=claims_line)
