"""Each parser's own near misses, one table per question: text in the parser's format (or a neighbour's) with
nothing in it to read gives no fact, another kind's text scores 0 with its sniffer, and a line-oriented parser
claims its own lines and no one else's.

One table and one test per question rather than a copy in every parser's test file; the rows stay each parser's
own cases, written for what that parser might misread. test_parser_contract.py asks the same of every parser on
generated garbage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from collectors.models import Artifact
from collectors.parsers.alerts import alert_text
from collectors.parsers.contract import Parser
from collectors.parsers.gpu import nccl, nvml
from collectors.parsers.kubernetes import describe_node, describe_pod, events
from collectors.parsers.logs import container_log
from collectors.parsers.node import conntrack, cpu_stat, kernel, kubelet


def _rows(parser: Parser, cases: list[str]) -> list[tuple[Parser, str]]:
    return [(parser, case) for case in cases]


def _claims(parser: Parser, cases: list[tuple[str, bool]]) -> list[tuple[Parser, str, bool]]:
    return [(parser, line, claimed) for line, claimed in cases]


def _ids(rows: Sequence[tuple[Any, ...]]) -> list[str]:
    """Each row's parser module and its place among that parser's rows: kernel-0, kernel-1, ..."""
    seen: dict[str, int] = {}
    out = []
    for row in rows:
        name = row[0].parse.__module__.rsplit(".", 1)[-1]
        seen[name] = seen.get(name, -1) + 1
        out.append(f"{name}-{seen[name]}")
    return out


NO_FACTS = [
    *_rows(alert_text.PARSER, ["", "garbage", "alert: high memory on the box", "pod: x", "[FIRING:", "{}"]),
    *_rows(container_log.PARSER, ["", "\x00\x01garbage\n{[", "Retry", "KeyError", "/dev/shm", "File \""]),
    *_rows(conntrack.PARSER, [
        "",
        "hello\nworld",
        "[ 1.0] nf_conntrack: nf_conntrack: table full, dropping packet",
        "nr_periods 100\nnr_throttled 3",
        "\x00\xff" * 100,
        "cpu=" * 10_000,
        "net.netfilter.nf_conntrack_count = 12",  # a count with no limit says nothing about usage
    ]),
    *_rows(cpu_stat.PARSER, [
        "",
        "hello world",
        "go_goroutines 45\nprocess_open_fds 12",  # Prometheus-like "name value" lines are not cpu.stat
        "cpu=0 found=0 drop=0",
        "[ 1.0] NVRM: Xid (PCI:0000:2b:00): 79",
        "\x00\xff" * 100,
        "nr_periods " * 10_000,
    ]),
    *_rows(describe_node.PARSER, ["", "garbage\nmore garbage", "Name:", "Conditions:\n  x\n", "\x00" * 10,
                                  "Capacity:\n  nvidia.com/gpu:  many\n"]),
    *_rows(describe_pod.PARSER, [
        "", "hello world", "Name:", "Events:\n  <none>", "\x00\x01\xff", "State:\n" * 50,
        "Limits:\n  memory: lots\n  cpu: -\n",
        "    Restart Count:  many\n    Exit Code: 99999999999999999999\n",
    ]),
    *_rows(events.PARSER, ["", "just some words", "LAST SEEN TYPE", "Normal", "{", "- ", "\x00\x1b[31m"]),
    *_rows(kernel.PARSER, [
        "",
        "\n\n\n",
        "hello world\nthis is not a log",
        '{"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "x"}}',
        "\x00\xff\ufffd" * 50,
        "Xid" * 10_000,
        "NVRM" + "x" * 100_000,
        "cpu=0 found=0 drop=0\nnr_periods 10\nnr_throttled 1",
    ]),
    *_rows(kubelet.PARSER, ["", "random words", "I1122", "\x00\x00", 'pod="" OOM vict robe ull']),
    *_rows(nccl.PARSER, ["", "\x00\x01garbage\n{[", "NCCL", "NCCL INFO\n" * 3, "Using network\n",
                         "Got completion from peer x with status=", "world_size=4, worker_count="]),
]


@pytest.mark.parametrize(("parser", "text"), NO_FACTS, ids=_ids(NO_FACTS))
def test_a_near_miss_gives_no_fact(parser: Parser, text: str) -> None:
    result = parser.parse(Artifact(id="a1", kind=parser.kind, content=text))
    assert result.facts == []
    assert [p for p in result.problems if p.startswith("internal")] == []


NOT_THEIRS = [
    *_rows(conntrack.PARSER, [
        "",
        "[ 1.0] nf_conntrack: nf_conntrack: table full, dropping packet",
        "nr_periods 100\nnr_throttled 3",
        "Nov 22 06:10:14 gpu-node-4 kubelet[2231]: I1122 kubelet.go:2100] SyncLoop",
    ]),
    *_rows(cpu_stat.PARSER, ["", "go_goroutines 45\nprocess_open_fds 12", "cpu=0 found=0 drop=0"]),
    *_rows(nvml.PARSER, [
        '{"kind": "Pod", "status": {"phase": "Running"}}',
        '{"status":"success","data":{"resultType":"vector","result":[]}}',
        "nr_periods 100\nnr_throttled 40",
        "",
    ]),
]


@pytest.mark.parametrize(("parser", "text"), NOT_THEIRS, ids=_ids(NOT_THEIRS))
def test_another_kinds_text_scores_nothing(parser: Parser, text: str) -> None:
    assert parser.sniff is not None
    assert parser.sniff(text) == 0


CLAIMS = [
    *_claims(container_log.PARSER, [
        ("Traceback (most recent call last):", True),
        ('  File "/workspace/train.py", line 212, in <module>', True),
        ("2026-11-22 06:12:01,552 INFO train.py:141 epoch=0 step=120", True),
        ('{"level":"error","msg":"upstream failed"}', True),
        ("RuntimeError: DataLoader worker (pid 4312) is killed by signal: Bus error.", True),
        ("just some words", False),
        ("", False),
    ]),
    *_claims(kernel.PARSER, [
        ("-- Logs begin at Mon 2026-11-16 08:12:44 UTC, end at Sun 2026-11-22 06:05:13 UTC. --", True),
        (" SUBSYSTEM=pci", True),
        ("NVRM: Xid (PCI:0000:2b:00): 79, pid=1, GPU has fallen off the bus.", True),  # no prefix at all
        ("python invoked oom-killer: gfp_mask=0xcc0(GFP_KERNEL), order=0, oom_score_adj=936", True),
        ("Nov 22 06:10:14 gpu-node-4 kubelet[2231]: I1122 06:10:14.552301    2231 kubelet.go:2100] SyncLoop", False),
        ("2026-11-22T06:01:02.123456789Z stdout F Epoch 3: loss=0.41", False),
        ("gpu-node-2:48213:48213 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.12<0>", False),
        ("RuntimeError: CUDA error: out of memory", False),
        ("", False),
    ]),
    *_claims(kubelet.PARSER, [
        ('Nov 22 06:01:02 gpu-node-2 kubelet[1234]: I1122 06:01:02.123456    1234 eviction_manager.go:366] "x"', True),
        ("2024-11-22T06:01:02+0000 gpu-node-2 kubelet[1234]: Flag --cgroup-driver has been deprecated", True),
        ('I1122 06:03:40.010203    1234 prober.go:107] "Probe failed" probeType="Liveness"', True),
        ("I1122 06:03:40.010203    1234 server.go:107] Starting proxy", False),  # kube-proxy, not the kubelet
        ("Nov 22 06:01:02 gpu-node-2 kernel: Out of memory: Killed process 1 (x)", False),
        ("trainer-0:1:1 [0] NCCL INFO Bootstrap : Using eth0", False),
        ("", False),
    ]),
    *_claims(nccl.PARSER, [
        ("trainer-0:58:58 [0] NCCL INFO Bootstrap : Using eth0:10.244.1.5<0>", True),
        ("[rank3]:[E1122 07:14:55 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout",
         True),
        ("torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 3/4 clients joined.",
         True),
        ("Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1a000", True),
        ("[12345.678] NVRM: Xid (PCI:0000:2b:00): 79, pid=1234, GPU has fallen off the bus.", False),
        ("epoch 3 step 10 loss 2.3", False),
        ("", False),
    ]),
]


@pytest.mark.parametrize(("parser", "line", "claimed"), CLAIMS, ids=_ids(CLAIMS))
def test_a_line_oriented_parser_claims_its_own_lines(parser: Parser, line: str, claimed: bool) -> None:
    assert parser.claims_line is not None
    assert parser.claims_line(line) is claimed
