"""Kernel log parser: every common log shape, Xid variants, OOM kills, conntrack overflow, hung tasks."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.models import Artifact, ArtifactKind, ParseResult
from collectors.parsers.node import kernel
from tests.unit.parsers.cited_fixtures import Row, capture_test, rows

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "parsers" / "kernel"



def run(text: str) -> ParseResult:
    return kernel.parse(Artifact(id="k1", kind=ArtifactKind.KERNEL_LOG, subject="node/gpu-node-2", content=text))


def values(result: ParseResult, name: str) -> list[object]:
    return [f.value for f in result.facts if f.name == name]


# ---- whole captures, one per log shape -----------------------------------------------------------------

FIXTURE_CASES: list[tuple[str, list[Row]]] = [
    ("dmesg.log", [  # Xid 79, then 45 twice as the driver cleans up; a hung task afterwards
        ("xid.codes", [79], 8, 8),
        ("xid.codes", [45], 13, 13),
        ("xid.primary_codes", [79], 8, 8),
        ("xid.count", 3, 8, 14),
        ("xid.pci_bus_ids", ["0000:2b:00"], 8, 8),
        ("xid.hosts", ["gpu-node-2"], 8, 8),  # the node the log was read from
        ("gpu.fallen_off_bus", True, 8, 8),
        ("kernel.hung_task", True, 15, 15),
    ]),
    ("dmesg-T.log", [  # several codes on two GPUs; upper-case bus id on the last line
        ("xid.codes", [63], 3, 3),
        ("xid.codes", [94], 4, 4),
        ("xid.codes", [45], 5, 5),
        ("xid.codes", [13], 6, 6),
        ("xid.codes", [43], 8, 8),
        ("xid.codes", [31], 9, 9),
        ("xid.codes", [48], 10, 10),
        ("xid.primary_codes", [63], 3, 3),
        ("xid.primary_codes", [94], 4, 4),
        ("xid.primary_codes", [13], 6, 6),
        ("xid.primary_codes", [43], 8, 8),
        ("xid.primary_codes", [31], 9, 9),
        ("xid.primary_codes", [48], 10, 10),
        ("xid.count", 8, 3, 10),
        ("xid.pci_bus_ids", ["0000:3b:00"], 3, 3),
        ("xid.pci_bus_ids", ["0000:86:00"], 6, 6),
        ("xid.hosts", ["gpu-node-2"], 3, 3),  # the node the log was read from
    ]),
    ("journalctl-k.log", [  # memory-cgroup OOM kill with the full dump
        ("kernel.oom_kill", True, 2, 2),
        ("kernel.oom_memcg", True, 22, 22),
        ("kernel.oom_victims", ["python"], 22, 22),
        ("kernel.oom_victim_score_adj", 936, 23, 23),
    ]),
    ("journalctl-k-short-iso.log", [  # two node-wide OOM kills
        ("kernel.oom_kill", True, 1, 1),
        ("kernel.oom_global", True, 5, 5),
        ("kernel.oom_victims", ["dataloader"], 5, 5),
        ("kernel.oom_victims", ["python3"], 7, 7),
        ("kernel.oom_victim_score_adj", 1000, 6, 6),
    ]),
    ("kmsg.log", [  # /dev/kmsg records, dictionary lines, caller= field, rate-limited conntrack lines
        ("xid.codes", [119], 2, 2),
        ("xid.primary_codes", [119], 2, 2),
        ("xid.count", 1, 2, 2),
        ("xid.pci_bus_ids", ["0000:2b:00"], 2, 2),
        ("xid.hosts", ["gpu-node-2"], 2, 2),  # the node the log was read from
        ("conntrack.table_full", True, 6, 6),
    ]),
    ("syslog.log", [  # GPU lost without any Xid line, among other services' lines
        ("gpu.fallen_off_bus", True, 4, 4),
        ("kernel.hung_task", True, 8, 8),
    ]),
    ("collector-prefix.log", [  # "host: kern: level: [ts]: " prefixes
        ("xid.codes", [79], 1, 1),
        ("xid.primary_codes", [79], 1, 1),
        ("xid.count", 1, 1, 1),
        ("xid.pci_bus_ids", ["0000:2b:00"], 1, 1),
        ("xid.hosts", ["gpu-node-2"], 1, 1),  # the node the log was read from
        ("gpu.fallen_off_bus", True, 1, 1),
        ("kernel.oom_kill", True, 4, 4),
        ("kernel.oom_global", True, 4, 4),
        ("kernel.oom_victims", ["python"], 4, 4),
        ("kernel.oom_victim_score_adj", 0, 4, 4),
        ("conntrack.table_full", True, 3, 3),
    ]),
]


test_fixture_facts_and_citations = capture_test(run, FIXTURE_CASES, FIXTURES)


def test_facts_carry_artifact_subject_and_stripped_excerpt() -> None:
    result = run((FIXTURES / "dmesg.log").read_text(encoding="utf-8"))
    first = result.facts[0]
    assert first.citation.artifact == "k1"
    assert first.subject == "node/gpu-node-2"
    assert first.excerpt == "NVRM: Xid (PCI:0000:2b:00): 79, pid=48213, name=python, GPU has fallen off the bus."


# ---- Xid line variants ---------------------------------------------------------------------------------

XID_LINES: list[tuple[str, int, str]] = [
    ("NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, name=python, GPU has fallen off the bus.", 79, "0000:2b:00"),
    ("NVRM: Xid (PCI:0000:3b:00): 45, pid='<unknown>', name=<unknown>, Ch 00000010", 45, "0000:3b:00"),
    ("NVRM: Xid (PCI:0000:3b:00): 13, pid=77, Graphics Exception: ESR 0x404490=0x80000001", 13, "0000:3b:00"),
    ("NVRM: Xid (PCI:0000:08:00): 31, Ch 0000003b, intr 10000000. MMU Fault: ENGINE GRAPHICS", 31, "0000:08:00"),
    ("NVRM: Xid (PCI:0000:03:00): 79, GPU has fallen off the bus.", 79, "0000:03:00"),  # older: no pid
    ("NVRM: Xid (0000:01:00): 32, Channel ID 00000000 intr 00004000", 32, "0000:01:00"),  # oldest: no "PCI:"
    ("NVRM: Xid (PCI:0000:65:00): 119, pid='N/A', Timeout waiting for RPC from GSP", 119, "0000:65:00"),
    ("NVRM: Xid (PCI:0000:9B:00.0): 64, pid=N/A, Row Remapper: Failed to remap row", 64, "0000:9b:00"),
    ("NVRM: Xid (PCI:0000:2b:00): 79, pid=12", 79, "0000:2b:00"),  # cut after the code is still readable
]


@pytest.mark.parametrize(("line", "code", "bdf"), XID_LINES)
def test_xid_line_variants(line: str, code: int, bdf: str) -> None:
    result = run(f"[ 8345.112244] {line}")
    assert values(result, "xid.codes") == [[code]]
    assert values(result, "xid.pci_bus_ids") == [[bdf]]
    assert values(result, "xid.count") == [1]
    assert result.problems == []


def test_xid_45_after_79_is_not_primary() -> None:
    text = "\n".join([
        "[100.000001] NVRM: Xid (PCI:0000:2b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
        "[100.500000] NVRM: Xid (PCI:0000:2b:00): 45, pid=1, name=python, Ch 00000010",
    ])
    result = run(text)
    assert values(result, "xid.codes") == [[79], [45]]
    assert values(result, "xid.primary_codes") == [[79]]


def test_only_secondary_xids_give_empty_primary_codes() -> None:
    result = run("[5.0] NVRM: Xid (PCI:0000:2b:00): 45, pid=9, name=python, Ch 00000010")
    assert rows(result) == [
        ("xid.codes", [45], 1, 1),
        ("xid.primary_codes", [], 1, 1),
        ("xid.count", 1, 1, 1),
        ("xid.pci_bus_ids", ["0000:2b:00"], 1, 1),
        ("xid.hosts", ["gpu-node-2"], 1, 1),
    ]


def test_unknown_code_counts_as_primary() -> None:
    result = run("[5.0] NVRM: Xid (PCI:0000:2b:00): 999, pid=9, something new")
    assert values(result, "xid.primary_codes") == [[999]]


def test_xid_79_implies_fallen_off_bus_once() -> None:
    text = "\n".join([
        "[1.0] NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.",
        "[1.1] NVRM: Xid (PCI:0000:2b:00): 79, pid=1, name=python, GPU has fallen off the bus.",
    ])
    assert [r for r in rows(run(text)) if r[0] == "gpu.fallen_off_bus"] == [("gpu.fallen_off_bus", True, 1, 1)]


@pytest.mark.parametrize("line", [
    "[1.0] NVRM: GPU at 0000:01:00.0 has fallen off the bus.",
    "[1.0] NVRM: GPU 0000:09:00.0: RmInitAdapter failed! (0x22:0x56:894)",
    "[1.0] NVRM: GPU 0000:09:00.0: rm_init_adapter failed, device minor number 0",
    "Unable to determine the device handle for GPU 0000:2B:00.0: GPU is lost.  Reboot the system to recover",
])
def test_gpu_lost_without_xid(line: str) -> None:
    assert rows(run(line)) == [("gpu.fallen_off_bus", True, 1, 1)]


def test_truncated_xid_line_is_a_problem_not_a_fact() -> None:
    result = run("[1.0] NVRM: GPU at PCI:0000:2b:00: GPU-8f3c\n[1.1] NVRM: Xid (PCI:0000:2b")
    assert result.facts == []
    assert result.problems == ["line 2: looks like an NVIDIA Xid report but has no Xid code"]


# ---- OOM variants --------------------------------------------------------------------------------------

def test_legacy_memcg_oom_lines() -> None:
    text = "\n".join([
        "[4211.100000] java invoked oom-killer: gfp_mask=0x14000c0(GFP_KERNEL), nodemask=(null), order=0, "
        "oom_score_adj=985",
        "[4211.100100] Task in /kubepods/burstable/pod5b0c/1a2b3c killed as a result of limit of "
        "/kubepods/burstable/pod5b0c/1a2b3c",
        "[4211.100200] Memory cgroup out of memory: Kill process 1234 (java) score 1995 or sacrifice child",
        "[4211.100300] Killed process 1234 (java) total-vm:8388608kB, anon-rss:4194304kB, file-rss:0kB",
    ])
    assert rows(run(text)) == [
        ("kernel.oom_kill", True, 1, 1),
        ("kernel.oom_memcg", True, 2, 2),
        ("kernel.oom_victims", ["java"], 3, 3),
    ]


def test_oom_kill_allocating_task_variant_is_global() -> None:
    line = "[9.0] Out of memory (oom_kill_allocating_task): Killed process 77 (trainer) total-vm:1kB"
    assert rows(run(line)) == [
        ("kernel.oom_kill", True, 1, 1),
        ("kernel.oom_global", True, 1, 1),
        ("kernel.oom_victims", ["trainer"], 1, 1),
    ]


def test_truncated_oom_line_keeps_the_kill_but_not_the_victim() -> None:
    assert rows(run("[9.0] Out of memory: Killed process 4321 (pyth")) == [
        ("kernel.oom_kill", True, 1, 1),
        ("kernel.oom_global", True, 1, 1),
    ]


def test_oom_reaper_and_task_table_are_not_kills() -> None:
    text = "\n".join([
        "[9.0] [  pid  ]   uid  tgid total_vm      rss pgtables_bytes swapents oom_score_adj name",
        "[9.1] oom_reaper: reaped process 48213 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB",
    ])
    assert rows(run(text)) == []


# ---- messy text ----------------------------------------------------------------------------------------

def test_crlf_and_ansi_colours_keep_line_numbers() -> None:
    text = "\r\n".join([
        "\x1b[32m[    1.000000]\x1b[0m Linux version 6.5.0",
        "\x1b[33m[ 8345.112244]\x1b[0m \x1b[1mNVRM: Xid (PCI:0000:2b:00): 79, pid=1, "
        "GPU has fallen off the bus.\x1b[0m",
        "\x1b[33m[ 9000.000001]\x1b[0m nf_conntrack: nf_conntrack: table full, dropping packet",
    ]) + "\r\n"
    result = run(text)
    assert ("xid.codes", [79], 2, 2) in rows(result)
    assert ("conntrack.table_full", True, 3, 3) in rows(result)
    assert result.facts[0].excerpt == "NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus."


def test_pasted_commands_are_not_evidence() -> None:
    text = "\n".join([
        "$ dmesg -T | grep -Ei 'xid|fallen off the bus|table full|blocked for more than'",
        "root@gpu-node-2:~# journalctl -k | grep 'Out of memory: Killed process'",
        "$ sudo dmesg | grep 'oom-kill:constraint='",
    ])
    assert run(text).facts == []


# ---- prefix stripping, line claims and sniffing --------------------------------------------------------

MSG = "NVRM: Xid (PCI:0000:2b:00): 79"


@pytest.mark.parametrize("line", [
    f"[12345.678901] {MSG}",  # dmesg
    f"[Sun Nov  2 06:01:02 2026] {MSG}",  # dmesg -T
    f"kern  :warn  : [12345.678901] {MSG}",  # dmesg -x
    f"[  +0.000123] {MSG}",  # dmesg -d
    f"[Nov22 06:01] {MSG}",  # dmesg -H
    f"Nov 22 06:01:02 gpu-node-2 kernel: {MSG}",  # journalctl -k, syslog
    f"Nov 22 06:01:02 gpu-node-2 kernel: [12345.678901] {MSG}",  # syslog with the dmesg stamp kept
    f"Nov 22 06:01:02.123456 gpu-node-2 kernel: {MSG}",  # -o short-precise
    f"2026-11-22T06:01:02+0000 gpu-node-2 kernel: {MSG}",  # -o short-iso
    f"2026-11-22T06:01:02.123456+00:00 gpu-node-2 kernel: {MSG}",  # -o short-iso-precise
    f"[12345.678901] gpu-node-2 kernel: {MSG}",  # -o short-monotonic
    f"Sun 2026-11-22 06:01:02 UTC gpu-node-2 kernel: {MSG}",  # -o short-full
    f"1732255262.123456 gpu-node-2 kernel: {MSG}",  # -o short-unix
    f"4,1234,5678901,-;{MSG}",  # /dev/kmsg
    f"4,1234,5678901,-,caller=T123;{MSG}",  # /dev/kmsg with caller id
    f"gpu-node-2: kern: warning: [12345.678901]: {MSG}",  # collector prefix
    f"gpu-node-2: kern: warning: [2026-11-22T06:01:02Z]: {MSG}",  # collector prefix, ISO stamp
    f"<4>Nov 22 06:01:02 gpu-node-2 kernel: {MSG}",  # syslog with priority
])
def test_message_strips_every_prefix_shape(line: str) -> None:
    assert kernel.message(line) == MSG
    assert kernel.claims_line(line)


@pytest.mark.parametrize("name", [c[0] for c in FIXTURE_CASES])
def test_sniff_recognises_each_capture(name: str) -> None:
    assert kernel.sniff((FIXTURES / name).read_text(encoding="utf-8")) >= 55


@pytest.mark.parametrize(("text", "low", "high"), [
    ("", 0, 0),
    ("hello world\nnothing to see", 0, 0),
    ("NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus.", 85, 100),
    ("cpu=0   \tfound=0 invalid=0 insert_failed=0 drop=0 early_drop=0", 0, 0),
    ("Nov 22 06:10:14 gpu-node-4 kubelet[2231]: I1122 06:10:14.552301 2231 kubelet.go:2100] SyncLoop", 0, 0),
])
def test_sniff_scores(text: str, low: int, high: int) -> None:
    assert low <= kernel.sniff(text) <= high


@pytest.mark.parametrize(("line", "host"), [
    ("Sep  1 05:09:58 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off",
     "gpu-node-7"),
    ("2025-09-01T05:09:58+0000 gpu-node-7 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python",
     "gpu-node-7"),
    ("gpu-node-7: kern: warning: [Mon Sep  1 05:09:58 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python",
     "gpu-node-7"),
])
def test_xid_hosts_come_from_the_lines_prefix_before_the_logs_subject(line: str, host: str) -> None:
    assert values(run(line), "xid.hosts") == [[host]]


def test_xid_hosts_absent_when_neither_a_prefix_nor_the_subject_names_a_node() -> None:
    result = kernel.parse(Artifact(id="k", kind=ArtifactKind.KERNEL_LOG,
                                   content="[5.0] NVRM: Xid (PCI:0000:2b:00): 79, pid=9, name=python"))
    assert values(result, "xid.hosts") == []
