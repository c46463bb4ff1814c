"""Kernel log parser: NVIDIA Xid reports, lost GPUs, OOM kills, conntrack overflow and hung tasks.

Accepts dmesg (plain, -T, -x, --time-format iso), journalctl -k (short, short-iso, short-precise,
short-monotonic, short-full, short-unix), /dev/kmsg records, syslog files and collector prefixes such as
`host: kern: warning: [ts]: `. Lines are scanned with cheap substring checks first; regexes only run on
the few lines that can match, so a 200,000-line log takes a fraction of a second.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.catalogs.xid import secondary_codes
from collectors.lazy_regex import LazyPattern
from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.contract import Parser
from collectors.parsers.sink import FactSink
from collectors.text import normalise, strip_prefixes

# ---- line shapes -------------------------------------------------------------------------------------

# Prefixes collectors.text.strip_prefixes does not know yet. Kept local because stripping is only safe
# when we know the line is a kernel line (a bracketed ISO time is content in many application logs).
_EXTRA_PREFIXES = [
    re.compile(r"^[\w\-.]+ kernel: "),  # journalctl -o short-monotonic leaves "host kernel: " behind
    re.compile(r"^[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [A-Z]{2,5} [\w\-.]+ kernel: "),
    re.compile(r"^\d{9,}\.\d+ [\w\-.]+ kernel: "),  # journalctl -o short-unix
    re.compile(r"^\d+,\d+,\d+,[-c+]*,[^;]*;"),  # /dev/kmsg with extra fields (caller=T123)
    re.compile(r"^\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?\]:? ?"),
    re.compile(r"^\[ *\+?\d+\.\d+\]:? ?"),  # dmesg -d / -H deltas: "[  +0.000123]"
    re.compile(r"^\[[A-Z][a-z]{2}\d{1,2} \d\d:\d\d(?::\d\d)?\] ?"),  # dmesg -H: "[Nov22 06:01]"
]

# A line is kernel-shaped when one of these matches its start.
_KERNEL_SHAPE = LazyPattern(
    r"^(?:"
    r"\[ *\+?\d+\.\d+\]"  # dmesg
    r"|\[[A-Z][a-z]{2} [A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d \d{4}\]"  # dmesg -T
    r"|\[[A-Z][a-z]{2}\d{1,2} \d\d:\d\d"  # dmesg -H
    r"|\d+,\d+,\d+,[-c+]*[,;]"  # /dev/kmsg
    r"|(?:kern|kernel) *:(?:emerg|alert|crit|err|warn|warning|notice|info|debug) *:"  # dmesg -x
    r"|(?:<\d+>)?[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)? \S+ kernel:"  # syslog, journalctl short
    r"|\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)? (?:\S+ kernel:|\[ *\d+\.\d+\])"
    r"|[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? [A-Z]{2,5} \S+ kernel:"  # short-full
    r"|\d{9,}\.\d+ \S+ kernel:"  # short-unix
    r"|\S+: (?:kern|kernel): (?:emerg|alert|crit|err|warning|warn|notice|info|debug)\s*:"  # collectors
    r"|-- (?:Logs begin at|Journal begins at|Boot [0-9a-f]{32}|No entries|Reboot)"  # journalctl banners
    r"|(?:SUBSYSTEM|DEVICE)=\S"  # /dev/kmsg dictionary lines under a record
    r")"
)

# Messages only the kernel prints, recognisable without any prefix.
_KERNEL_MESSAGE = LazyPattern(
    r"NVRM: |\bnvidia-nvswitch\d{0,3}: SXid \(|\bdetected NVSwitch (?:non-)?fatal error \d|"
    r"\binvoked oom-killer: |^oom-kill:constraint=|[Oo]ut of memory: Kill|"
    r"nf_conntrack: ?(?:nf_conntrack: ?)?table full|^INFO: task .{1,80}? blocked for more than|"
    r"^net_ratelimit: \d+ callbacks"
)

# ---- messages ----------------------------------------------------------------------------------------

_XID = LazyPattern(
    r"\bXid \((?:PCI:)?(?P<bdf>[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2})(?:\.[0-7])?\):\s*(?P<code>\d+)"
)
# An Xid line whose PCI address was elided when pasted ("Xid (PCI:...): 145"): the code still counts.
_XID_NO_BDF = LazyPattern(r"\bXid \([^)]{0,40}\):\s*(?P<code>\d+)")
# NVSwitch SXids (collectors/catalogs/sxid.yaml): the driver's "nvidia-nvswitch3: SXid (PCI:0000:aa:00.0): 24007,
# ..." and the fabric manager's "detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id ...". The
# codes start at 10000, so five digits keep a GPU Xid or a stray number out.
_SXID = LazyPattern(r"\bnvidia-nvswitch\d{0,3}: SXid \([^)]{0,40}\):\s*(?P<code>[1-3]\d{4})\b"
                    r"|\bdetected NVSwitch (?:non-)?fatal error (?P<fm>[1-3]\d{4})\b")
_CAUSED_BY = LazyPattern(r"caused by previous Xid (\d+)")
_XID_LIKE = LazyPattern(r"NVRM: Xid\b|\bXid \(")
_GPU_LOST = LazyPattern(r"fallen off the bus|GPU is lost|RmInitAdapter failed|rm_init_adapter failed")
_OOM_INVOKED = LazyPattern(r"\binvoked oom-killer: ")
_OOM_KILL_LINE = LazyPattern(r"\boom-kill:(?P<fields>constraint=\S+)")
_OOM_KILLED = LazyPattern(
    r"(?:(?P<memcg>Memory cgroup out of memory)|(?P<global>Out of memory)(?: \([^)]{0,80}\))?)?:? ?"
    r"Kill(?:ed)? process (?P<pid>\d+)(?: \((?P<name>[^)]{0,80})\))?"  # a cut line may lose the ")"
)
# The kill line's last field since Linux 4.19 (mm/oom_kill.c, __oom_kill_process): the victim's oom_score_adj,
# which the kubelet sets from the pod's QoS class (-997 Guaranteed, 2-999 Burstable, 1000 BestEffort).
_OOM_SCORE_ADJ = LazyPattern(r"\boom_score_adj:(-?\d{1,4})\b")
_OOM_LEGACY_MEMCG = LazyPattern(r"\bTask in \S+ killed as a result of limit of ")
# Parts of an OOM report that only a memory cgroup's OOM prints: its page-fault path in the call trace, its usage
# against its limit (mem_cgroup_print_oom_meminfo), and its stats.
_OOM_MEMCG_DETAIL = LazyPattern(r"\bmem_cgroup_(?:oom_synchronize|out_of_memory)\b|\bmemory: usage \d+kB, limit \d+kB, "
                                r"failcnt \d+|\bMemory cgroup stats for /")
_CONNTRACK_FULL = LazyPattern(r"nf_conntrack: ?(?:nf_conntrack: ?)?table full, ?dropping packet")
# Bounded repeats keep hostile long lines linear; task names are at most 15 characters.
_HUNG_TASK = LazyPattern(r"\btask .{1,80}:\d+ blocked for more than \d+ seconds")

# A pasted shell command that greps for these strings is not evidence of them.
_COMMAND = LazyPattern(r"^\s*(?:[$#>]\s|sudo\s|e?grep\s)|\|\s*(?:e?grep|rg)\s")

# Cheap pre-check before the prefix-stripping regexes in claims_line.
_MESSAGE_HINTS = ("NVRM", "SXid", "NVSwitch", "oom", "of memory", "table full", "blocked for more", "net_ratelimit")


@dataclass
class _Seen:
    """What one pass over the log found, with the first line number of each finding."""

    xid_first: dict[int, tuple[int, str]] = field(default_factory=dict)  # code -> (line, message)
    bdf_first: dict[str, tuple[int, str]] = field(default_factory=dict)
    xid_count: int = 0
    xid_last: int = 0
    xid_hosts: dict[str, tuple[int, str]] = field(default_factory=dict)  # host in the line's prefix -> first line
    sxid_first: dict[int, tuple[int, str]] = field(default_factory=dict)  # NVSwitch code -> (line, message)
    gpu_lost: tuple[int, str] | None = None
    oom: tuple[int, str] | None = None
    oom_memcg: tuple[int, str] | None = None
    oom_memcg_detail: tuple[int, str] | None = None  # cited only when no line says "Memory cgroup" outright
    oom_global: tuple[int, str] | None = None
    victims: dict[str, tuple[int, str]] = field(default_factory=dict)
    victim_adj: tuple[int, int, str] | None = None  # (oom_score_adj, line, message) of the highest seen
    conntrack_full: tuple[int, str] | None = None
    hung_task: tuple[int, str] | None = None
    problems: list[str] = field(default_factory=list)


def message(line: str) -> str:
    """The kernel message with every timestamp/host/facility prefix removed."""
    return strip_prefixes(line, _EXTRA_PREFIXES)


def claims_line(line: str) -> bool:
    """Whether one line of a mixed paste belongs to a kernel log."""
    line = line.strip()
    if not line:
        return False
    if _may_be_shaped(line) and _KERNEL_SHAPE.match(line):
        return True
    if not any(hint in line for hint in _MESSAGE_HINTS):
        return False
    return _KERNEL_MESSAGE.search(message(line)) is not None


def _may_be_shaped(line: str) -> bool:
    """Every kernel prefix starts with "[", "<", "-" or a digit, or names the kernel facility."""
    first = line[0]
    return first in "[<-" or first.isdigit() or "kern" in line or line.startswith(("SUBSYSTEM=", "DEVICE="))


def sniff(text: str) -> int:
    """0-100 confidence that the text is a kernel log."""
    lines = [ln for ln in normalise(text[:200_000]).split("\n")[:500] if ln.strip()]
    if not lines:
        return 0
    claimed = sum(1 for ln in lines if claims_line(ln))
    score = round(95 * claimed / len(lines))
    if any(_XID.search(ln) or _SXID.search(ln) or _CONNTRACK_FULL.search(ln) or _OOM_KILL_LINE.search(ln)
           for ln in lines):
        score = max(score, 85)  # one unmistakable kernel message outweighs surrounding chatter
    return min(score, 100)


def parse(artifact: Artifact) -> ParseResult:
    """Read Xid, lost-GPU, OOM, conntrack and hung-task evidence from a kernel log."""
    lines = normalise(artifact.content).split("\n")
    sink = FactSink(artifact, lines)
    seen = _scan(lines)
    _emit(sink, seen)
    return sink.done()


# ---- scanning ----------------------------------------------------------------------------------------


def _scan(lines: list[str]) -> _Seen:
    seen = _Seen()
    for number, line in enumerate(lines, 1):
        # Substring tests are an order of magnitude cheaper than regexes; almost every line fails all.
        if "Xid" in line:
            _scan_xid(line, number, seen)
        if "SXid" in line or "NVSwitch" in line:
            _scan_sxid(line, number, seen)
        if "off the bus" in line or "GPU is lost" in line or "dapter failed" in line:
            _scan_gpu_lost(line, number, seen)
        if "oom-kill" in line or "of memory: Kill" in line or "of memory (" in line or "result of limit" in line \
                or "mem_cgroup_o" in line or "failcnt" in line or "Memory cgroup stats" in line:
            _scan_oom(line, number, seen)
        if "table full" in line:
            _note_once(seen, "conntrack_full", line, number, _CONNTRACK_FULL)
        if "blocked for more than" in line:
            _note_once(seen, "hung_task", line, number, _HUNG_TASK)
    return seen


# The host a syslog, journal or collector prefix names: "Nov 22 06:01:02 gpu-node-2 kernel: ",
# "2026-11-22T06:01:02+0000 gpu-node-2 kernel: ", "gpu-node-2: kern: warning: ". NCCL's suspect hosts are
# compared with it, so a straggler's node can be checked for a GPU fault.
_HOST_PREFIX = LazyPattern(
    r"^(?:<\d+>)?(?:[A-Z][a-z]{2} +\d{1,2} \d\d:\d\d:\d\d(?:\.\d+)?|\d{4}-\d\d-\d\d[T ][\d:.,+Z-]{8,40}|\d{9,}\.\d+) "
    r"(?P<host>[\w.-]{1,253}) kernel: |^(?P<chost>[\w.-]{1,253}): (?:kern|kernel): ")


def _note_xid_host(line: str, number: int, seen: _Seen) -> None:
    m = _HOST_PREFIX.match(line)
    if m:
        seen.xid_hosts.setdefault(m.group("host") or m.group("chost"), (number, line))


def _scan_xid(line: str, number: int, seen: _Seen) -> None:
    m = _XID.search(line)
    if m is not None or _XID_NO_BDF.search(line) is not None:
        _note_xid_host(line, number, seen)
    if m is None and (loose := _XID_NO_BDF.search(line)) is not None and not _COMMAND.search(line):
        code = int(loose.group("code"))
        seen.xid_count += 1
        seen.xid_last = number
        seen.xid_first.setdefault(code, (number, message(line)))
        return
    if m is None:
        if _XID_LIKE.search(line) and not _COMMAND.search(line):
            seen.problems.append(f"line {number}: looks like an NVIDIA Xid report but has no Xid code")
        return
    code = int(m.group("code"))
    bdf = m.group("bdf").lower()
    seen.xid_count += 1
    seen.xid_last = number
    if code in seen.xid_first and bdf in seen.bdf_first and (code != 79 or seen.gpu_lost):
        return  # a repeat: only first sightings are cited, so skip the prefix stripping
    msg = message(line)
    seen.xid_first.setdefault(code, (number, msg))
    if code == 45 and (cause := _CAUSED_BY.search(line)):
        # "Xid 45 ... caused by previous Xid 145": the driver names the error this one follows.
        seen.xid_first.setdefault(int(cause.group(1)), (number, msg))
    seen.bdf_first.setdefault(bdf, (number, msg))
    if code == 79 and seen.gpu_lost is None:
        seen.gpu_lost = (number, msg)


def _scan_sxid(line: str, number: int, seen: _Seen) -> None:
    if _COMMAND.search(line):
        return
    m = _SXID.search(line)
    if m:
        seen.sxid_first.setdefault(int(m.group("code") or m.group("fm")), (number, message(line)))


def _scan_gpu_lost(line: str, number: int, seen: _Seen) -> None:
    # "RmInitAdapter failed!" may come without the "GPU <bdf>: " part (drivers before 515 leave it out).
    if seen.gpu_lost is not None or ("GPU" not in line and "dapter failed" not in line) or _COMMAND.search(line):
        return
    if _GPU_LOST.search(line):
        seen.gpu_lost = (number, message(line))


def _scan_oom(line: str, number: int, seen: _Seen) -> None:
    if _COMMAND.search(line):
        return
    fired = False  # "invoked oom-killer" alone says the killer ran, not what kind of OOM it was
    if _OOM_INVOKED.search(line):
        fired = True
    elif m := _OOM_KILL_LINE.search(line):
        fired = True
        _classify_oom_kill_line(m.group("fields"), number, line, seen)
    elif k := _OOM_KILLED.search(line):
        fired = True
        _classify_killed(k, number, line, seen)
    elif _OOM_LEGACY_MEMCG.search(line):
        fired = True
        _first(seen, "oom_memcg", number, line)
    elif _OOM_MEMCG_DETAIL.search(line):
        fired = True
        _first(seen, "oom_memcg_detail", number, line)
    if fired:
        _first(seen, "oom", number, line)


def _classify_oom_kill_line(fields: str, number: int, line: str, seen: _Seen) -> None:
    """`oom-kill:constraint=...,task=python,pid=4321,uid=0`: the constraint says memcg or node-wide."""
    values = dict(part.partition("=")[::2] for part in fields.split(","))
    constraint = values.get("constraint", "")
    if constraint == "CONSTRAINT_MEMCG":
        _first(seen, "oom_memcg", number, line)
    elif constraint == "CONSTRAINT_NONE":
        _first(seen, "oom_global", number, line)
    task = values.get("task", "")
    # The task field is last but one; a truncated line may cut it short, so require the pid after it.
    if task and "pid" in values:
        seen.victims.setdefault(task, (number, message(line)))


def _classify_killed(m: re.Match[str], number: int, line: str, seen: _Seen) -> None:
    if m.group("memcg"):
        _first(seen, "oom_memcg", number, line)
    elif m.group("global"):
        _first(seen, "oom_global", number, line)
    name = m.group("name")
    if name:
        seen.victims.setdefault(name, (number, message(line)))
    if (adj := _OOM_SCORE_ADJ.search(line, m.end())) and (seen.victim_adj is None
                                                          or int(adj.group(1)) > seen.victim_adj[0]):
        seen.victim_adj = (int(adj.group(1)), number, message(line))


def _first(seen: _Seen, attr: str, number: int, line: str) -> None:
    if getattr(seen, attr) is None:
        setattr(seen, attr, (number, message(line)))


def _note_once(seen: _Seen, attr: str, line: str, number: int, rx: LazyPattern) -> None:
    if getattr(seen, attr) is None and rx.search(line) and not _COMMAND.search(line):
        setattr(seen, attr, (number, message(line)))


# ---- emitting ----------------------------------------------------------------------------------------


def _emit(sink: FactSink, seen: _Seen) -> None:
    for problem in seen.problems:
        sink.problem(problem)
    _emit_xids(sink, seen)
    for code, (number, msg) in seen.sxid_first.items():
        sink.add("nvswitch.sxid_codes", [code], number, text=msg)
    if seen.gpu_lost:
        sink.add("gpu.fallen_off_bus", True, seen.gpu_lost[0], text=seen.gpu_lost[1])
    _emit_oom(sink, seen)
    if seen.conntrack_full:
        sink.add("conntrack.table_full", True, seen.conntrack_full[0], text=seen.conntrack_full[1])
    if seen.hung_task:
        sink.add("kernel.hung_task", True, seen.hung_task[0], text=seen.hung_task[1])


def _emit_xid_hosts(sink: FactSink, seen: _Seen) -> None:
    """The hosts the Xid lines name; a node's own log (subject node/<name>) names its node."""
    for host, (number, line) in seen.xid_hosts.items():
        sink.add("xid.hosts", [host], number, text=line)
    subject = sink.artifact.subject
    if not seen.xid_hosts and subject.startswith("node/") and len(subject) > len("node/"):
        number, msg = min(seen.xid_first.values())
        sink.add("xid.hosts", [subject[len("node/"):]], number, text=msg)


def _emit_xids(sink: FactSink, seen: _Seen) -> None:
    if not seen.xid_count:
        return
    secondary = secondary_codes()
    for code, (number, msg) in seen.xid_first.items():
        sink.add("xid.codes", [code], number, text=msg)
    primary = [(code, at) for code, at in seen.xid_first.items() if code not in secondary]
    for code, (number, msg) in primary:
        sink.add("xid.primary_codes", [code], number, text=msg)
    if not primary:
        # Xids were seen and every one is an after-effect: say so, rather than leave the fact unknown.
        number, msg = next(iter(seen.xid_first.values()))
        sink.add("xid.primary_codes", [], number, text=msg)
    first, first_msg = min(seen.xid_first.values())
    sink.add("xid.count", seen.xid_count, first, seen.xid_last, text=first_msg)
    for bdf, (number, msg) in seen.bdf_first.items():
        sink.add("xid.pci_bus_ids", [bdf], number, text=msg)
    _emit_xid_hosts(sink, seen)


def _emit_oom(sink: FactSink, seen: _Seen) -> None:
    if seen.oom is None:
        return
    sink.add("kernel.oom_kill", True, seen.oom[0], text=seen.oom[1])
    if memcg := seen.oom_memcg or seen.oom_memcg_detail:
        sink.add("kernel.oom_memcg", True, memcg[0], text=memcg[1])
    if seen.oom_global:
        sink.add("kernel.oom_global", True, seen.oom_global[0], text=seen.oom_global[1])
    for name, (number, msg) in seen.victims.items():
        sink.add("kernel.oom_victims", [name], number, text=msg)
    if seen.victim_adj is not None:
        adj, number, msg = seen.victim_adj
        sink.add("kernel.oom_victim_score_adj", adj, number, text=msg)


PARSER = Parser(kinds=(ArtifactKind.KERNEL_LOG,), parse=parse, sniff=sniff, claims_line=claims_line)
